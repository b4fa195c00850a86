//go:build linux

package receiver

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFIFO opens the named pipe read-write and keeps it open for as long as the receiver runs.
//
// Nagios 4 (Debian's nagios4-core among others) opens its perfdata pipe O_RDWR|O_NONBLOCK: its
// open never waits for a reader, and a write that finds the pipe full is dropped silently. So
// the receiver must never let go of the pipe. Opened read-write, we are a writer ourselves:
// Nagios closing its end on a reload or restart is not an end of file, nothing waiting in the
// pipe is discarded (the kernel frees a pipe's buffer only when its last descriptor closes) and
// there is no reopen gap in which writes pile up. On Linux an O_RDWR open of a FIFO never
// blocks. Go sets the descriptor non-blocking and reads it through its poller, so a read can be
// interrupted with SetReadDeadline.
func openFIFO(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR, 0)
}

// setPipeSize raises the pipe's buffer to want bytes, capped by /proc/sys/fs/pipe-max-size, and
// returns the size obtained (0 where the platform cannot tell).
func setPipeSize(f *os.File, want int) (int, error) {
	if maxSize, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(maxSize))); err == nil && n > 0 && want > n {
			want = n
		}
	}
	var got int
	var opErr error
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	err = rc.Control(func(fd uintptr) {
		if want > 0 {
			if _, e := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, want); e != nil {
				opErr = fmt.Errorf("F_SETPIPE_SZ %d: %w", want, e)
			}
		}
		got, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	})
	if err != nil {
		return 0, err
	}
	return got, opErr
}

// pipeWaiting returns how many bytes wait in the pipe (FIONREAD).
func pipeWaiting(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n
}

// makeFIFO creates the named pipe with mode (umask ignored) and, when group is set, that group.
func makeFIFO(path string, mode os.FileMode, group string) error {
	if err := syscall.Mkfifo(path, uint32(mode.Perm())); err != nil {
		return err
	}
	if err := os.Chmod(path, mode.Perm()); err != nil {
		return err
	}
	if group == "" {
		return nil
	}
	gid, err := strconv.Atoi(group)
	if err != nil {
		g, lerr := user.LookupGroup(group)
		if lerr != nil {
			return fmt.Errorf("group %q: %w", group, lerr)
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	if err := os.Chown(path, -1, gid); err != nil {
		return fmt.Errorf("giving the FIFO to group %s: %w", group, err)
	}
	return nil
}
