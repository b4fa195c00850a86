// Package testbinary owns the tests' view of flapjack as a program: it builds cmd/flapjack once
// per test binary and runs it as a subprocess, short-lived (Run) or long-running (Start) with
// its output kept line by line and time-stamped, so a test can wait for a log line, signal the
// process and assert on what it printed.
package testbinary

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
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

// path is the binary Main built.
var path string

// binary returns path, having first opened every source file of the module once. go test
// caches a package's result keyed on its own build and the module files its tests open; the
// flapjack binary is built from other packages, so without these opens a change in, say,
// importer would replay an old pass of these end-to-end tests instead of running them.
func binary() string {
	sourcesOnce.Do(openSources)
	return path
}

// Path is the flapjack binary Main built, for tests that run it other than through Run or
// Start (through sh -c with its directory on PATH, as a README line would).
func Path() string { return binary() }

var sourcesOnce sync.Once

// TrackSources opens the module's sources once, for tests that build flapjack other than through
// Main (make image, make deb): go test then reruns them, rather than replaying a cached pass,
// whenever a source changes.
func TrackSources() { sourcesOnce.Do(openSources) }

// openSources opens the module's Go files, embedded scripts, go.mod and go.sum.
func openSources() {
	root, err := moduleRoot()
	if err != nil {
		return
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".lua", ".mod", ".sum":
			if f, err := os.Open(p); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Main builds the flapjack binary into a temporary directory, runs the package's tests, runs
// after (other harnesses' cleanups) and exits with their status. Call it from TestMain.
func Main(m *testing.M, after ...func()) {
	dir, err := os.MkdirTemp("", "flapjack-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporary directory for the flapjack binary:", err)
		os.Exit(1)
	}
	path = filepath.Join(dir, "flapjack")
	build := exec.Command("go", "build", "-o", path, "github.com/flapjackgo/flapjack/cmd/flapjack")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build flapjack:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	for _, f := range after {
		f()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnv is the test's environment without FLAPJACK_* variables of the developer's shell, so
// that only what a test sets configures the program.
func cleanEnv() []string {
	// Test packages run in parallel: the web UI of every `server` a test starts listens on a
	// port of its own unless the test names one (a later entry of the same variable wins).
	env := []string{"FLAPJACK_WEB_ADDR=127.0.0.1:0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAPJACK_") {
			env = append(env, kv)
		}
	}
	return env
}

// Run runs flapjack to completion with env (on top of the clean environment) and stdin, and
// returns what it printed and its exit code. A run longer than timeout is killed and fails the
// test.
func Run(t testing.TB, env []string, stdin string, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(), args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatalf("start flapjack %v: %v", args, err)
	}
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("flapjack %v did not finish within %v; stderr:\n%s", args, timeout, errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("flapjack %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// Line is one line of output and when the test read it.
type Line struct {
	At   time.Time
	Text string
}

// Process is a long-running flapjack whose stdout and stderr are collected line by line.
type Process struct {
	args []string
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex
	stdout []Line
	stderr []Line
}

// Start runs flapjack with env (on top of the clean environment). The process dies with the
// test binary and is killed at the end of the test; when the test failed, its last stderr lines
// are logged.
func Start(t testing.TB, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{args: args, cmd: exec.Command(binary(), args...), done: make(chan struct{})}
	p.cmd.Env = append(cleanEnv(), env...)
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
		t.Fatalf("start %s: %v", p, err)
	}
	var wg sync.WaitGroup
	collect := func(r io.Reader, dst *[]Line) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := Line{At: time.Now(), Text: sc.Text()}
			p.mu.Lock()
			*dst = append(*dst, l)
			p.mu.Unlock()
		}
	}
	wg.Add(2)
	go collect(outPipe, &p.stdout)
	go collect(errPipe, &p.stderr)
	go func() { wg.Wait(); _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("stderr of %s (last 60 lines):\n%s", p, p.Tail(60))
		}
	})
	return p
}

// String names the process by its command line, for messages.
func (p *Process) String() string { return "flapjack " + strings.Join(p.args, " ") }

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode is the exit code of an ended process, -1 while it runs or when a signal ended it.
func (p *Process) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Kill sends SIGKILL and waits until the process is gone and reaped, so its PID is free.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Terminate sends SIGTERM and returns the exit code, or -1 if the process did not exit within
// timeout.
func (p *Process) Terminate(timeout time.Duration) int {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	return p.WaitExit(timeout)
}

// Stop sends SIGTERM and returns the exit code; no exit within 30 s fails the test.
func (p *Process) Stop(t testing.TB) int {
	t.Helper()
	code := p.Terminate(30 * time.Second)
	if !p.Exited() {
		t.Fatalf("%s: no exit within 30 s of SIGTERM", p)
	}
	return code
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// WaitExit waits up to timeout for the process to end on its own and returns its exit code, or
// -1 if it is still running.
func (p *Process) WaitExit(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

// Lines is the output of one stream so far.
func (p *Process) Lines(stderr bool) []Line {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stderr {
		return append([]Line(nil), p.stderr...)
	}
	return append([]Line(nil), p.stdout...)
}

// Texts is the text of each line of one stream so far.
func (p *Process) Texts(stderr bool) []string {
	lines := p.Lines(stderr)
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.Text
	}
	return texts
}

// Text is the output of one stream so far, one line per output line.
func (p *Process) Text(stderr bool) string {
	var b strings.Builder
	for _, t := range p.Texts(stderr) {
		b.WriteString(t + "\n")
	}
	return b.String()
}

// Tail is the last n lines of stderr with the time each was read, for failure messages.
func (p *Process) Tail(n int) string {
	ls := p.Lines(true)
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.At.Format("15:04:05.000") + " " + l.Text + "\n")
	}
	return b.String()
}

// WaitMatch waits for a line of one stream matching re and returns its submatches. It fails
// the test when the process exits first or timeout passes.
func (p *Process) WaitMatch(t testing.TB, stderr bool, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	var found []string
	p.waitFor(t, timeout, fmt.Sprintf("a line matching %s", re), func() bool {
		for _, l := range p.Lines(stderr) {
			if found = re.FindStringSubmatch(l.Text); found != nil {
				return true
			}
		}
		return false
	})
	return found
}

// WaitLines waits until n lines of stderr match re and returns them.
func (p *Process) WaitLines(t testing.TB, re *regexp.Regexp, n int, timeout time.Duration) []string {
	t.Helper()
	var found []string
	p.waitFor(t, timeout, fmt.Sprintf("%d lines matching %s", n, re), func() bool {
		found = found[:0]
		for _, l := range p.Lines(true) {
			if re.MatchString(l.Text) {
				found = append(found, l.Text)
			}
		}
		return len(found) >= n
	})
	return found
}

// WaitLine waits until a line of stderr contains every fragment.
func (p *Process) WaitLine(t testing.TB, timeout time.Duration, fragments ...string) {
	t.Helper()
	p.waitFor(t, timeout, fmt.Sprintf("a line with %q", fragments), func() bool {
		for _, l := range p.Lines(true) {
			if containsAll(l.Text, fragments) {
				return true
			}
		}
		return false
	})
}

// waitFor polls seen until it holds; the process exiting first or timeout passing fails the
// test with what was awaited and the end of stderr.
func (p *Process) waitFor(t testing.TB, timeout time.Duration, awaited string, seen func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if seen() {
			return
		}
		if p.Exited() {
			if seen() {
				return
			}
			t.Fatalf("%s exited (code %d) before printing %s:\n%s", p, p.ExitCode(), awaited, p.Tail(30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %s within %v:\n%s", p, awaited, timeout, p.Tail(30))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsAll(s string, fragments []string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}

// FreeAddr is a loopback address with a port free at the time of the call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
