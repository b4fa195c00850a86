package reliability

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/testprosody"
)

// binary is the flapjack binary built once for these tests.
var binary string

func TestMain(m *testing.M) {
	testprosody.EnsureNoProxy()
	dir, err := os.MkdirTemp("", "flapjack-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "flapjack")
	build := exec.Command("go", "build", "-o", binary, "../cmd/flapjack")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build flapjack:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnv is the test's environment without the developer's FLAPJACK_* settings.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAPJACK_") {
			env = append(env, kv)
		}
	}
	return env
}

// process is one running flapjack subprocess with its output kept line by line.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex
	stdout []string
	stderr []string
}

// startProcess runs the binary with args and env (on top of cleanEnv). The process dies with
// the test binary (Pdeathsig) and is killed at test end if still running.
func startProcess(t *testing.T, name string, env []string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(binary, args...), done: make(chan struct{})}
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
		t.Fatalf("start %s: %v", name, err)
	}
	var wg sync.WaitGroup
	collect := func(r io.Reader, dst *[]string) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			*dst = append(*dst, sc.Text())
			p.mu.Unlock()
		}
	}
	wg.Add(2)
	go collect(outPipe, &p.stdout)
	go collect(errPipe, &p.stderr)
	go func() { wg.Wait(); _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// pid is the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits until the process is gone (and reaped, so its PID is free).
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and returns the exit code, or -1 if it did not exit within timeout.
func (p *process) stop(timeout time.Duration) int {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

func (p *process) lines(stderr bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stderr {
		return append([]string(nil), p.stderr...)
	}
	return append([]string(nil), p.stdout...)
}

// tail is the last n lines of stderr, for failure messages.
func (p *process) tail(n int) string {
	l := p.lines(true)
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// waitLine waits until a stderr line contains all of the fragments.
func (p *process) waitLine(t *testing.T, timeout time.Duration, fragments ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, l := range p.lines(true) {
			if containsAll(l, fragments) {
				return
			}
		}
		if p.exited() {
			t.Fatalf("%s exited (code %d) before logging %q:\n%s", p.name, p.cmd.ProcessState.ExitCode(), fragments, p.tail(30))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not log %q within %v:\n%s", p.name, fragments, timeout, p.tail(30))
}

func containsAll(s string, fragments []string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
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

// waitUntil polls cond every interval until it holds or timeout passes; it reports whether it
// held.
func waitUntil(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// do runs one command on a pooled connection.
func do(pool *redis.Pool, cmd string, args ...any) (any, error) {
	c := pool.Get()
	defer c.Close()
	return c.Do(cmd, args...)
}

// mustInt runs a command returning an integer and fails the test on error.
func mustInt(t *testing.T, pool *redis.Pool, cmd string, args ...any) int {
	t.Helper()
	n, err := redis.Int(do(pool, cmd, args...))
	if err != nil && err != redis.ErrNil {
		t.Fatalf("redis %s %v: %v", cmd, args, err)
	}
	return n
}
