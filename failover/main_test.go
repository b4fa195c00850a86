package failover

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the flapjack binary, built once for the package (as cmd/flapjack's tests do).
var binary string

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Fprintln(os.Stderr, "failover tests need redis-server on PATH: apt-get install -y redis-server")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "flapjack-failover-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "flapjack")
	build := exec.Command("go", "build", "-o", binary, "github.com/flapjackgo/flapjack/cmd/flapjack")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build flapjack:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnv is the test's environment without FLAPJACK_* variables of the developer's shell.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAPJACK_") {
			env = append(env, kv)
		}
	}
	return env
}

// run runs the binary to completion, killing it after timeout.
func run(t *testing.T, env []string, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("flapjack %v did not finish within %v; stderr:\n%s", args, timeout, errOut.String())
	}
	code = 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// line is one output line and when the test read it.
type line struct {
	at   time.Time
	text string
}

// process is a long-running flapjack whose output is captured line by line, time-stamped.
type process struct {
	args   []string
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout []line
	stderr []line
	done   chan struct{}
}

func start(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{args: args, cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.Env = append(cleanEnv(), env...)
	// The child must not outlive the test binary.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	collect := func(r io.Reader, dst *[]line) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := line{at: time.Now(), text: sc.Text()}
			p.mu.Lock()
			*dst = append(*dst, l)
			p.mu.Unlock()
		}
	}
	wg.Add(2)
	go collect(outPipe, &p.stdout)
	go collect(errPipe, &p.stderr)
	go func() { wg.Wait(); p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("stderr of flapjack %v (last 60 lines):\n%s", args, tail(p.lines(true), 60))
		}
	})
	return p
}

func tail(ls []line, n int) string {
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.at.Format("15:04:05.000") + " " + l.text + "\n")
	}
	return b.String()
}

func (p *process) lines(stderr bool) []line {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stderr {
		return append([]line(nil), p.stderr...)
	}
	return append([]line(nil), p.stdout...)
}

// text is all output of one stream.
func (p *process) text(stderr bool) string {
	var b strings.Builder
	for _, l := range p.lines(stderr) {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitLines waits until n lines of stderr match re and returns them.
func (p *process) waitLines(t *testing.T, re *regexp.Regexp, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var found []string
		for _, l := range p.lines(true) {
			if re.MatchString(l.text) {
				found = append(found, l.text)
			}
		}
		if len(found) >= n {
			return found
		}
		if p.exited() {
			t.Fatalf("flapjack %v exited (%v) while waiting for %d lines matching %s", p.args, p.cmd.ProcessState, n, re)
		}
		if time.Now().After(deadline) {
			t.Fatalf("flapjack %v: %d lines matching %s within %v, want %d", p.args, len(found), re, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the exit code.
func (p *process) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("flapjack %v: no exit within 30 s of SIGTERM", p.args)
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitExit waits up to timeout for the process to end on its own and returns its exit code,
// or -1 if it is still running.
func (p *process) waitExit(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// httpClient bounds every request of the tests.
var httpClient = &http.Client{Timeout: 3 * time.Second}

// getStatus returns the status code of GET url, or 0 when the request fails.
func getStatus(url string) int {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
