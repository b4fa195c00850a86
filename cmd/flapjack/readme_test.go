package main

// The README is executed (issue 14 §2). TestReadme takes every command line of README.md's
// fenced code blocks that runs flapjack, runs it with the binary testbinary built and asserts its
// exit status and, where the README shows output under it, that each shown line was printed.
//
// What counts as a command line:
//   - blocks tagged sh, bash, shell or untagged: every line; blocks tagged text, console or
//     shell-session, and any block with a `$ ` line: only the `$ ` lines, and the lines after one
//     up to a blank line or the next `$ ` are the output the README shows for it. yaml, json and
//     other blocks are not commands.
//   - a trailing backslash continues a line (a `> ` prompt on the continuation is dropped); an
//     unquoted # starts a comment.
//   - a line counts when a command of it (first word, or first word after |, ||, &&, ;, & or ( )
//     is flapjack or bin/flapjack, or when it is `make T` and the Makefile's recipe of T runs
//     $(BIN) (`make run`): that recipe is what the line runs.
//
// How a line runs: through `sh -c` in the repository root (README paths are relative to it), with
// the directory of the test's flapjack first on PATH and bin/flapjack in a command position read
// as flapjack, so the line runs the binary under test and not whatever bin/ holds. Redis: the
// README's redis://127.0.0.1:6379[/N] (or localhost) is replaced by a fresh testredis database's
// URL, and FLAPJACK_REDIS_URL is set to it for lines that name none (FLAPJACK_* variables of the
// developer's shell are dropped); FLAPJACK_HTTP_ADDR is a free port. The Quick start lines that
// run beside `make run` get that server's embedded Redis instead, as its reader's do, and so do
// the flapjack commands its startup banner prints. Lines without a rule must finish within
// readmeTimeout with status 0.
//
// Lines that cannot simply run to completion have an entry in readmeRules with the reason: the
// long-running `make run` server, Quick start commands run beside it, commands stopped with
// Ctrl-C, documented non-zero statuses and skipped lines. An entry that matches no README line
// fails the test, so the list cannot rot.
//
// Lines another test runs as written (README "Install": make image, docker, dpkg) have a rule of
// mode elsewhere naming that test's file, which must hold the line as a Go string literal; such a
// line counts whatever its command, and every command line of the Install section must be one
// TestReadme runs or one run elsewhere (TestInstallSectionIsRun).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// readmeTimeout bounds every README line, and the server's start and shown output.
const readmeTimeout = 30 * time.Second

type readmeMode int

const (
	// runToEnd: run, wait for the exit, compare with status (the default for lines no rule names).
	runToEnd readmeMode = iota
	// interrupt: run, and once it printed its first line on stdout press Ctrl-C (SIGINT to its
	// process group); the README promises long-running commands then stop cleanly.
	interrupt
	// serve: the long-running server of `make run`, started once for all such lines: it must
	// answer /readyz, run the commands of its startup banner, print what the README shows once
	// the lines marked beside ran, and exit 0 on SIGTERM.
	serve
	// skip: not run, for the reason given.
	skip
	// elsewhere: run as written by the test in the rule's file, which must quote the line.
	elsewhere
)

type readmeRule struct {
	// match is matched against the README line as written: prompt, continuation backslashes and
	// comment removed, blanks between words collapsed.
	match *regexp.Regexp
	mode  readmeMode
	// beside: a Quick start line run "in another terminal" while `make run` serves, against its
	// Redis (the README's 127.0.0.1:6379 is where that server's embedded Redis listens).
	beside bool
	// status is the exit status the README documents (0 unless said otherwise).
	status int
	// by is the file (from the repository root) of the test that runs an elsewhere line.
	by     string
	reason string
}

// readmeRules: the first entry matching a README line decides how it runs. Each must match at
// least one line.
var readmeRules = []readmeRule{
	{
		match: regexp.MustCompile(`^make run$`),
		mode:  serve,
		reason: "runs `flapjack server`, which never exits. Started with redis.embedded=always (the test " +
			"cannot promise that nothing answers at 127.0.0.1:6379, which is when `auto` embeds), a free " +
			"http.addr and executive.initial_failure_delay=0 (its first alert comes at the first failure, " +
			"not 30 s later); everything else is the README's",
	},
	{
		match:  regexp.MustCompile(`^(bin/)?flapjack simulate fail --entity web-01 --check HTTP( --redis-url \S+)?$`),
		mode:   interrupt,
		beside: true,
		reason: "Quick start, in another terminal while `make run` serves: without --duration it sends a " +
			"failure every 10 s for 45 s, so it is stopped as its reader would, with Ctrl-C after its " +
			"first event, and must say `stopping` and exit 0",
	},
	{
		match: regexp.MustCompile(`^(make (image|deb|build)|docker (load|run) .+|dpkg (-i|-r|--purge) .+|/usr/bin/flapjack version)$`),
		mode:  elsewhere,
		by:    "cmd/flapjack-package/package_test.go",
		reason: "README \"Install\": building the image, the package and the binary, loading and running the image, " +
			"installing, running and removing the package are run by TestImage and TestDeb (as root, once per test " +
			"run); no Docker engine runs here, so the docker lines run through their emulation of docker load and run",
	},
	// Skipped lines: none today, every command of a fenced block runs. An entry reads
	// {match: regexp.MustCompile(`^flapjack gateway jabber$`), mode: skip, reason: "needs ..."}.
}

// readmeLine is one command line of a fenced code block of README.md.
type readmeLine struct {
	line    int      // README.md line number (the first one of a continued line)
	written string   // as written, normalised for readmeRules
	text    string   // what sh -c runs: the line, or for `make T` T's flapjack recipe
	shown   []string // output the README shows under it
	rule    *readmeRule
}

func (l *readmeLine) String() string {
	if l.line == 0 {
		return fmt.Sprintf("banner command `%s`", l.written)
	}
	return fmt.Sprintf("README.md:%d `%s`", l.line, l.written)
}

func (l *readmeLine) mode() readmeMode {
	if l.rule == nil {
		return runToEnd
	}
	return l.rule.mode
}

func (l *readmeLine) status() int {
	if l.rule == nil {
		return 0
	}
	return l.rule.status
}

// TestReadme runs every command of README.md's code blocks; see the top of this file.
func TestReadme(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	lines := readmeLines(t, root)
	if len(lines) == 0 {
		t.Fatal("no flapjack command found in README.md's code blocks")
	}
	for i := range readmeRules {
		if !slices.ContainsFunc(lines, func(l *readmeLine) bool { return l.rule == &readmeRules[i] }) {
			t.Errorf("readmeRules entry %q matches no README.md command line: remove or update it", readmeRules[i].match)
		}
	}
	var server, beside []*readmeLine
	ran := 0
	for _, l := range lines {
		switch {
		case l.mode() == skip:
			t.Logf("%s skipped: %s", l, l.rule.reason)
			continue
		case l.mode() == elsewhere:
			checkRunElsewhere(t, root, l)
		case l.mode() == serve:
			server = append(server, l)
		case l.rule != nil && l.rule.beside:
			beside = append(beside, l)
		default:
			t.Run(fmt.Sprintf("README.md:%d", l.line), func(t *testing.T) {
				t.Parallel()
				db := testredis.New(t)
				res := runReadmeLine(t, root, l, db.URL())
				res.check(t, l)
			})
		}
		ran++
	}
	t.Logf("README.md: %d command lines, %d run, %d skipped", len(lines), ran, len(lines)-ran)
	if len(beside) > 0 && len(server) == 0 {
		t.Fatalf("%s is to run beside `make run`, which the README no longer shows", beside[0])
	}
	if len(server) > 0 {
		t.Run("make run", func(t *testing.T) {
			t.Parallel()
			runReadmeServer(t, root, server, beside)
		})
	}
}

// checkRunElsewhere: the test file l's rule names holds l as written, as a Go string literal.
func checkRunElsewhere(t *testing.T, root string, l *readmeLine) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, l.rule.by))
	if err != nil {
		t.Fatalf("%s: %v", l, err)
	}
	if !bytes.Contains(src, []byte(strconv.Quote(l.written))) {
		t.Errorf("%s is said to be run by %s, which does not hold it: copy the line there as the test runs it", l, l.rule.by)
	}
}

// runReadmeServer starts the `make run` server once for its README lines, runs its banner's
// commands and the lines beside it against its Redis, waits for every line the README shows under
// `make run`, and stops it.
func runReadmeServer(t *testing.T, root string, server, beside []*readmeLine) {
	for _, l := range server[1:] {
		if l.text != server[0].text {
			t.Fatalf("%s and %s run different commands", server[0], l)
		}
	}
	args := strings.Fields(server[0].text)[1:]
	addr := testbinary.FreeAddr(t)
	srv := testbinary.Start(t, []string{"FLAPJACK_REDIS_EMBEDDED=always", "FLAPJACK_HTTP_ADDR=" + addr,
		"FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t), "FLAPJACK_EXECUTIVE_INITIAL_FAILURE_DELAY=0"}, args...)
	waitReady(t, srv, addr)
	// The banner's commands, as printed: they name the embedded Redis's URL.
	url := srv.WaitMatch(t, true, regexp.MustCompile(`--redis-url (\S+)`), readmeTimeout)[1]
	bannerCommand := regexp.MustCompile(`^\s*\*(?:\s+Use it:)?\s+((?:bin/)?flapjack\s.*?)\s*$`)
	banner := 0
	for _, text := range srv.Texts(true) {
		m := bannerCommand.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		banner++
		l := &readmeLine{written: strings.Join(strings.Fields(m[1]), " "), text: m[1]}
		l.rule = ruleFor(l.written)
		t.Logf("banner command: %s", m[1])
		res := runReadmeLine(t, root, l, url)
		res.check(t, l)
	}
	if banner == 0 {
		t.Errorf("the banner of `%s` names no flapjack command:\n%s", server[0].written, srv.Text(true))
	}
	for _, l := range beside {
		res := runReadmeLine(t, root, l, url)
		res.check(t, l)
	}
	for _, l := range server {
		waitShown(t, srv, l)
	}
	if code := srv.Stop(t); code != 0 {
		t.Fatalf("%s: exit %d after SIGTERM, want 0", server[0], code)
	}
}

// waitReady waits for /readyz to answer 200.
func waitReady(t *testing.T, srv *testbinary.Process, addr string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(readmeTimeout)
	for {
		resp, err := client.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if srv.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s: /readyz not 200 within %v (last: %v %v); exited %v:\n%s", srv, readmeTimeout, resp, err, srv.Exited(), srv.Tail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitShown waits until srv printed every line the README shows under l.
func waitShown(t *testing.T, srv *testbinary.Process, l *readmeLine) {
	t.Helper()
	deadline := time.Now().Add(readmeTimeout)
	for {
		missing := missingShown(l.shown, append(srv.Texts(false), srv.Texts(true)...))
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the README shows lines it did not print:\n  %s\nstdout:\n%s\nstderr:\n%s", l,
				strings.Join(missing, "\n  "), srv.Text(false), srv.Text(true))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type readmeResult struct {
	stdout, stderr string
	code           int
}

// check asserts the documented exit status and the output the README shows.
func (r readmeResult) check(t *testing.T, l *readmeLine) {
	t.Helper()
	if r.code != l.status() {
		t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", l, r.code, l.status(), r.stdout, r.stderr)
		return
	}
	output := append(strings.Split(r.stdout, "\n"), strings.Split(r.stderr, "\n")...)
	if missing := missingShown(l.shown, output); len(missing) > 0 {
		t.Errorf("%s: the README shows lines it did not print:\n  %s\nstdout:\n%s\nstderr:\n%s", l,
			strings.Join(missing, "\n  "), r.stdout, r.stderr)
	}
	if l.mode() == interrupt && !strings.Contains(r.stdout, "stopping") {
		t.Errorf("%s: no `stopping` after Ctrl-C\nstdout:\n%s", l, r.stdout)
	}
}

// readmeRedis is the Redis a README line names; the test's replaces it.
var readmeRedis = regexp.MustCompile(`redis://(127\.0\.0\.1|localhost):6379(/\d+)?`)

// binFlapjack is bin/flapjack where a command starts.
var binFlapjack = regexp.MustCompile(`(^\s*|[;&|(]\s*)(?:\./)?bin/flapjack(\s|$)`)

// runReadmeLine runs l's text through sh -c in root against redisURL, as its rule says.
func runReadmeLine(t *testing.T, root string, l *readmeLine, redisURL string) readmeResult {
	t.Helper()
	script := binFlapjack.ReplaceAllString(readmeRedis.ReplaceAllString(l.text, redisURL), "${1}flapjack${2}")
	// The trap makes sh behave as an interactive shell does on Ctrl-C: it outlives the SIGINT its
	// process group gets and exits with the status of the command it waited for (a trap with a
	// handler, unlike an ignored signal, is not inherited by that command).
	cmd := exec.Command("sh", "-c", "trap : INT\n"+script)
	cmd.Dir = root
	cmd.Env = append(readmeEnv(), "FLAPJACK_REDIS_URL="+redisURL, "FLAPJACK_HTTP_ADDR="+testbinary.FreeAddr(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout := &watchedBuffer{firstLine: make(chan struct{})}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: sh -c %q: %v", l, script, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	group := -cmd.Process.Pid
	fail := func(what string) {
		_ = syscall.Kill(group, syscall.SIGKILL)
		<-done
		t.Fatalf("%s (sh -c %q) %s; if it is long-running, give it a readmeRules entry\nstdout:\n%s\nstderr:\n%s",
			l, script, what, stdout.String(), stderr.String())
	}
	var err error
	if l.mode() == interrupt {
		select {
		case <-stdout.firstLine:
			_ = syscall.Kill(group, syscall.SIGINT)
		case err = <-done:
			t.Fatalf("%s: exited (%v) before printing a line to interrupt\nstdout:\n%s\nstderr:\n%s", l, err, stdout.String(), stderr.String())
		case <-time.After(readmeTimeout):
			fail(fmt.Sprintf("printed no line within %v", readmeTimeout))
		}
	}
	select {
	case err = <-done:
	case <-time.After(readmeTimeout):
		fail(fmt.Sprintf("did not finish within %v", readmeTimeout))
	}
	res := readmeResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	default:
		t.Fatalf("%s: %v", l, err)
	}
	return res
}

// readmeEnv is the test's environment without FLAPJACK_* variables, with the test binary's
// directory first on PATH.
func readmeEnv() []string {
	env := []string{"PATH=" + filepath.Dir(testbinary.Path()) + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAPJACK_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// watchedBuffer collects output and closes firstLine once a whole line arrived.
type watchedBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	firstLine chan struct{}
	closed    bool
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.closed && bytes.IndexByte(w.buf.Bytes(), '\n') >= 0 {
		close(w.firstLine)
		w.closed = true
	}
	return len(p), nil
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// volatile are the parts of shown output that differ from run to run: the version, and numbers
// with any hex letters joined to them (times, ports, pids, alert ids).
var volatile = regexp.MustCompile(`"version": "[^"]*"|[0-9a-f]*[0-9][0-9a-f]*`)

var blanks = regexp.MustCompile(`\s+`)

// shownPattern matches an output line the README shows: volatile parts vary, any run of blanks
// matches any other (the README aligns with spaces what the program separates with tabs).
func shownPattern(line string) *regexp.Regexp {
	line = strings.TrimSpace(line)
	literal := func(s string) string {
		parts := blanks.Split(s, -1)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		return strings.Join(parts, `\s+`)
	}
	var b strings.Builder
	b.WriteString("^")
	at := 0
	for _, loc := range volatile.FindAllStringIndex(line, -1) {
		b.WriteString(literal(line[at:loc[0]]))
		if strings.HasPrefix(line[loc[0]:loc[1]], `"version"`) {
			b.WriteString(`"version": "[^"]*"`)
		} else {
			b.WriteString(`[0-9a-f]+`)
		}
		at = loc[1]
	}
	b.WriteString(literal(line[at:]) + "$")
	return regexp.MustCompile(b.String())
}

// missingShown lists the shown lines no output line matches.
func missingShown(shown, output []string) []string {
	var missing []string
	for _, s := range shown {
		re := shownPattern(s)
		if !slices.ContainsFunc(output, func(o string) bool { return re.MatchString(strings.TrimSpace(o)) }) {
			missing = append(missing, strings.TrimSpace(s))
		}
	}
	return missing
}

func ruleFor(written string) *readmeRule {
	for i := range readmeRules {
		if readmeRules[i].match.MatchString(written) {
			return &readmeRules[i]
		}
	}
	return nil
}

// readmeLines extracts the command lines of README.md's fenced code blocks (see the top of this
// file) with their rules.
func readmeLines(t *testing.T, root string) []*readmeLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return parseReadme(string(data), flapjackRecipes(t, root))
}

// parseReadme extracts the command lines of a Markdown text; recipes are flapjackRecipes.
func parseReadme(text string, recipes map[string]string) []*readmeLine {
	lines := strings.Split(text, "\n")
	var out []*readmeLine
	for i := 0; i < len(lines); i++ {
		opening := strings.TrimSpace(lines[i])
		fence := opening[:len(opening)-len(strings.TrimLeft(opening, "`~"))]
		if len(fence) < 3 || strings.Count(fence, fence[:1]) != len(fence) {
			continue
		}
		lang := ""
		if info := strings.Fields(opening[len(fence):]); len(info) > 0 {
			lang = info[0]
		}
		end := i + 1
		for end < len(lines) && !isFenceEnd(lines[end], fence) {
			end++
		}
		out = append(out, blockCommands(lines[i+1:end], i+2, lang, recipes)...)
		i = end
	}
	for _, l := range out {
		l.rule = ruleFor(l.written)
	}
	return out
}

func isFenceEnd(line, fence string) bool {
	s := strings.TrimSpace(line)
	return strings.HasPrefix(s, fence) && strings.Trim(s, fence[:1]) == ""
}

// blockCommands extracts the command lines of one code block whose first line is README line
// first.
func blockCommands(body []string, first int, lang string, recipes map[string]string) []*readmeLine {
	switch lang {
	case "", "sh", "bash", "shell", "text", "console", "shell-session":
	default:
		return nil
	}
	isPrompt := func(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, " "), "$ ") }
	prompt := lang == "text" || lang == "console" || lang == "shell-session" || slices.ContainsFunc(body, isPrompt)
	var out []*readmeLine
	for k := 0; k < len(body); k++ {
		raw := body[k]
		at := first + k
		if prompt {
			if !isPrompt(raw) {
				continue
			}
			raw = strings.TrimPrefix(strings.TrimLeft(raw, " "), "$ ")
		}
		for strings.HasSuffix(raw, `\`) && k+1 < len(body) {
			k++
			next := body[k]
			if prompt {
				next = strings.TrimPrefix(strings.TrimLeft(next, " "), "> ")
			}
			raw = strings.TrimSuffix(raw, `\`) + " " + next
		}
		words, commands := shellWords(raw)
		l := &readmeLine{line: at, written: strings.Join(words, " "), text: raw}
		if prompt {
			for k+1 < len(body) && strings.TrimSpace(body[k+1]) != "" && !isPrompt(body[k+1]) {
				k++
				l.shown = append(l.shown, body[k])
			}
		}
		switch {
		case slices.ContainsFunc(commands, func(c string) bool { return filepath.Base(c) == "flapjack" }):
		case len(words) == 2 && words[0] == "make" && recipes[words[1]] != "":
			l.text = recipes[words[1]]
		case ruleFor(l.written) != nil && ruleFor(l.written).mode == elsewhere:
		default:
			continue
		}
		out = append(out, l)
	}
	return out
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellWords splits a line as sh would, well enough for README lines: quotes and backslashes
// keep their spelling, an unquoted # at a word's start ends the line, and |, ||, &&, ;, &, (, <,
// > are words of their own. commands are the words in command position.
func shellWords(line string) (words, commands []string) {
	var cur strings.Builder
	inWord, commandNext := false, true
	flush := func() {
		if !inWord {
			return
		}
		w := cur.String()
		words = append(words, w)
		if commandNext && !assignment.MatchString(w) {
			commands = append(commands, w)
			commandNext = false
		}
		cur.Reset()
		inWord = false
	}
	var quote rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == '\\' && quote == '"' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
			cur.WriteRune(r)
		case r == '\\' && i+1 < len(rs):
			inWord = true
			cur.WriteRune(r)
			i++
			cur.WriteRune(rs[i])
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			flush()
			return words, commands
		case strings.ContainsRune("|&;()<>", r):
			flush()
			op := string(r)
			for i+1 < len(rs) && strings.ContainsRune("|&>", rs[i+1]) && len(op) < 2 {
				i++
				op += string(rs[i])
			}
			words = append(words, op)
			commandNext = strings.ContainsRune("|&;(", rune(op[0]))
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	flush()
	return words, commands
}

// flapjackRecipes maps each Makefile target whose recipe runs $(BIN) to that recipe line, with
// $(BIN) spelled bin/flapjack.
func flapjackRecipes(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	target := regexp.MustCompile(`^([A-Za-z0-9_.-]+):`)
	recipes := map[string]string{}
	current := ""
	for _, line := range strings.Split(string(data), "\n") {
		if m := target.FindStringSubmatch(line); m != nil {
			current = m[1]
			continue
		}
		if !strings.HasPrefix(line, "\t") {
			current = ""
			continue
		}
		recipe := strings.TrimLeft(strings.TrimSpace(line), "@-")
		if current != "" && recipes[current] == "" && strings.HasPrefix(recipe, "$(BIN) ") {
			recipes[current] = "bin/flapjack " + strings.TrimPrefix(recipe, "$(BIN) ")
		}
	}
	return recipes
}

// TestEveryExampleIsUsed: each file under examples/ is named by some *_test.go (other than this
// one, which names none) or read by a README line TestReadme runs.
func TestEveryExampleIsUsed(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var tests strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, "_test.go") && p != filepath.Join(root, "cmd", "flapjack", "readme_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tests.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var run []string
	for _, l := range readmeLines(t, root) {
		if l.mode() != skip {
			run = append(run, l.text)
		}
	}
	examples := filepath.Join(root, "examples")
	n := 0
	err = filepath.WalkDir(examples, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(examples, p)
		rel = filepath.ToSlash(rel)
		byTest := strings.Contains(tests.String(), rel)
		byReadme := slices.ContainsFunc(run, func(text string) bool { return strings.Contains(text, "examples/"+rel) })
		if !byTest && !byReadme {
			t.Errorf("examples/%s is used by no test: name it in a *_test.go that reads it, or in a README command line", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("examples/ holds no file")
	}
}

// repoRoot is the directory of the go.mod above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// TestReadmeExtraction: the forms README.md does not use today (continuations, comments, pipes,
// redirections, assignments, prompts with output) are read, and run, as sh would.
func TestReadmeExtraction(t *testing.T) {
	t.Parallel()
	md := strings.Join([]string{
		"# title",
		"```sh",
		"make run    # builds bin/flapjack and runs `flapjack server`",
		"make test",
		`flapjack import contacts \`,
		"  -f examples/contacts.json   # imports 'ada'",
		"cat examples/timeline.jsonl | bin/flapjack replay --redis-url redis://127.0.0.1:6379/9",
		"FLAPJACK_LOG_LEVEL=warn flapjack replay < examples/timeline.jsonl && echo 'done # not a comment'",
		"echo flapjack",
		"```",
		"",
		"```yaml",
		"flapjack: true",
		"```",
		"",
		"~~~text",
		"$ flapjack version",
		"flapjack dev",
		"",
		"$ redis-cli ping",
		"PONG",
		"~~~",
	}, "\n")
	got := parseReadme(md, map[string]string{"run": "bin/flapjack server"})
	want := []readmeLine{
		{line: 3, written: "make run", text: "bin/flapjack server"},
		{line: 5, written: "flapjack import contacts -f examples/contacts.json",
			text: "flapjack import contacts    -f examples/contacts.json   # imports 'ada'"},
		{line: 7, written: "cat examples/timeline.jsonl | bin/flapjack replay --redis-url redis://127.0.0.1:6379/9",
			text: "cat examples/timeline.jsonl | bin/flapjack replay --redis-url redis://127.0.0.1:6379/9"},
		{line: 8, written: "FLAPJACK_LOG_LEVEL=warn flapjack replay < examples/timeline.jsonl && echo 'done # not a comment'",
			text: "FLAPJACK_LOG_LEVEL=warn flapjack replay < examples/timeline.jsonl && echo 'done # not a comment'"},
		{line: 17, written: "flapjack version", text: "flapjack version", shown: []string{"flapjack dev"}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d command lines, want %d: %v", len(got), len(want), got)
	}
	for i, g := range got {
		w := want[i]
		if g.line != w.line || g.written != w.written || g.text != w.text || !slices.Equal(g.shown, w.shown) {
			t.Errorf("command %d: %d %q %q %q, want %d %q %q %q", i, g.line, g.written, g.text, g.shown, w.line, w.written, w.text, w.shown)
		}
	}
	root := repoRoot(t)
	for _, l := range got[1:] {
		db := testredis.New(t)
		res := runReadmeLine(t, root, l, db.URL())
		res.check(t, l)
		if strings.Contains(l.text, "replay") && !strings.Contains(res.stderr, "replayed 9 lines") {
			t.Errorf("%s: did not replay the timeline: %s", l, res.stderr)
		}
	}
}

// TestInstallSectionIsRun: every command line of README.md's "Install" section is one TestReadme
// runs or checks is run elsewhere: an installation command nobody runs would rot unseen.
func TestInstallSectionIsRun(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Install\n")
	if !ok {
		t.Fatal(`README.md has no "## Install" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	covered := map[string]bool{}
	for _, l := range parseReadme(section, flapjackRecipes(t, root)) {
		covered[l.written] = true
	}
	all, lang := 0, ""
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inBlock, lang = !inBlock, strings.TrimSpace(fence)
			continue
		}
		words, _ := shellWords(line)
		if !inBlock || (lang != "" && lang != "sh") || len(words) == 0 {
			continue
		}
		all++
		if written := strings.Join(words, " "); !covered[written] {
			t.Errorf(`README.md "Install": %q is neither run by TestReadme nor by a test a readmeRules entry names`, written)
		}
	}
	if all == 0 {
		t.Fatal(`README.md "Install" shows no command`)
	}
}
