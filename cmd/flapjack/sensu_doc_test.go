package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// sensuHandlerDoc is one Sensu handler definition found in the documentation.
type sensuHandlerDoc struct {
	where   string // file:line of its code block
	typ     string // pipe or tcp
	command string // pipe: the command Sensu runs
	addr    string // tcp: host:port Sensu connects to
}

// sensuDocs extracts from a Markdown file the Sensu handler definitions (json blocks in Sensu
// 1.x's shape, yaml blocks of `type: Handler`) and the flapjack command lines of sh blocks.
func sensuDocs(t *testing.T, file string) (handlers []sensuHandlerDoc, commands []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?ms)^```(json|yaml|sh)\n(.*?)^```")
	for _, m := range block.FindAllStringSubmatchIndex(string(data), -1) {
		lang, body := string(data[m[2]:m[3]]), string(data[m[4]:m[5]])
		where := fmt.Sprintf("%s:%d", filepath.Base(file), strings.Count(string(data[:m[0]]), "\n")+1)
		switch lang {
		case "sh":
			for _, line := range strings.Split(body, "\n") {
				if strings.HasPrefix(line, "flapjack ") {
					commands = append(commands, line)
				}
			}
		case "json":
			var doc struct {
				Handlers map[string]struct {
					Type    string `json:"type"`
					Command string `json:"command"`
				} `json:"handlers"`
			}
			if json.Unmarshal([]byte(body), &doc) != nil {
				continue
			}
			for _, h := range doc.Handlers {
				handlers = append(handlers, sensuHandlerDoc{where: where, typ: h.Type, command: h.Command})
			}
		case "yaml":
			var doc struct {
				Type string `yaml:"type"`
				Spec struct {
					Type    string `yaml:"type"`
					Command string `yaml:"command"`
					Socket  struct {
						Host string `yaml:"host"`
						Port int    `yaml:"port"`
					} `yaml:"socket"`
				} `yaml:"spec"`
			}
			if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatalf("%s: yaml: %v", where, err)
			}
			if doc.Type != "Handler" {
				continue
			}
			h := sensuHandlerDoc{where: where, typ: doc.Spec.Type, command: doc.Spec.Command}
			if doc.Spec.Type == "tcp" {
				h.addr = net.JoinHostPort(doc.Spec.Socket.Host, fmt.Sprint(doc.Spec.Socket.Port))
			}
			handlers = append(handlers, h)
		}
	}
	return handlers, commands
}

// sensu1Event is a Sensu 1.x event as a pipe handler receives it.
const sensu1Event = `{"action":"create","occurrences":1,"client":{"name":"web-05","address":"10.0.0.5","subscriptions":["web"]},` +
	`"check":{"name":"http","status":2,"output":"CRITICAL - 500|time=0.2s","executed":1700000500,"issued":1700000500,"handlers":["flapjack"]}}`

// TestSensuDocumentation runs what receiver/SENSU.md and README.md tell Sensu users to set up:
// every pipe handler's command (Sensu 1.x and Sensu Go), as Sensu runs it (sh -c, the event on
// standard input), must exit 0 quietly having queued the event; every TCP handler must reach
// `flapjack receiver sensu` started with SENSU.md's command line. The documented
// redis://127.0.0.1:6379/0 is replaced by a test database and the documented listen address by
// a free port.
func TestSensuDocumentation(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var handlers []sensuHandlerDoc
	var commands []string
	for _, f := range []string{"receiver/SENSU.md", "README.md"} {
		h, c := sensuDocs(t, filepath.Join(root, f))
		handlers, commands = append(handlers, h...), append(commands, c...)
	}
	counts := map[string]int{}
	for _, h := range handlers {
		counts[h.typ]++
	}
	if counts["pipe"] < 3 || counts["tcp"] < 2 {
		t.Fatalf("found %d pipe and %d tcp handler definitions (want SENSU.md's Sensu 1.x and Sensu Go pipe handlers, its TCP handler and README's Sensu Go pipe and TCP handlers): %+v", counts["pipe"], counts["tcp"], handlers)
	}
	var receiverCmd string
	for _, c := range commands {
		if strings.HasPrefix(c, "flapjack receiver sensu") {
			receiverCmd = c
		}
	}
	if receiverCmd == "" {
		t.Fatal("SENSU.md shows no `flapjack receiver sensu` command line")
	}
	path := "PATH=" + filepath.Dir(testbinary.Path()) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, h := range handlers {
		db := testredis.New(t)
		switch h.typ {
		case "pipe":
			event := sensu1Event
			if !strings.Contains(h.command, "receiver json --sensu") {
				t.Fatalf("%s: pipe handler command %q", h.where, h.command)
			}
			for _, ev := range []string{event, sensuFixture(t, "sensu-go-warning.json")} {
				script := readmeRedis.ReplaceAllString(h.command, db.URL())
				cmd := exec.Command("sh", "-c", script)
				cmd.Env = []string{path, "FLAPJACK_RECEIVER_SENSU_SPOOL_DIR=" + t.TempDir()}
				cmd.Stdin = strings.NewReader(ev)
				out, err := cmd.CombinedOutput()
				if err != nil || len(out) != 0 {
					t.Errorf("%s: sh -c %q: %v, output %q (want exit 0 and no output)", h.where, script, err, out)
				}
			}
			waitQueued(t, db, []string{"web-05:http", "web-01:disk"}, time.Second)
		case "tcp":
			addr := testbinary.FreeAddr(t)
			script := strings.ReplaceAll(readmeRedis.ReplaceAllString(receiverCmd, db.URL()), h.addr, addr)
			if script == readmeRedis.ReplaceAllString(receiverCmd, db.URL()) {
				t.Fatalf("%s: the TCP handler's socket %s is not where `%s` listens", h.where, h.addr, receiverCmd)
			}
			cmd := exec.Command("sh", "-c", "exec "+script)
			cmd.Env = []string{path, "FLAPJACK_RECEIVER_SENSU_SPOOL_DIR=" + t.TempDir()}
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if c, err := net.Dial("tcp", addr); err == nil {
					c.Close() // an empty connection: no event, nothing queued
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("%s: `%s` does not listen on %s\n%s", h.where, script, addr, stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			sendTCP(t, addr, sensuFixture(t, "sensu-go-critical.json"))
			waitQueued(t, db, []string{"db-01:postgres"}, 5*time.Second)
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Errorf("%s: `%s` after SIGTERM: %v\n%s", h.where, script, err, stderr.String())
			}
		default:
			t.Errorf("%s: handler type %q", h.where, h.typ)
		}
	}
}
