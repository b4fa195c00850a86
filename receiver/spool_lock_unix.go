//go:build unix

package receiver

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes the spool directory's lock (flock on the directory itself), waiting for it:
// every change to a spool is made under it, by whichever process makes it.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// tryLockDrain takes the spool directory's drain lock (the file .drain.lock) without waiting;
// ok is false when another process, or another Spool of this one, is draining.
func tryLockDrain(dir string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".drain.lock"), os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, true, nil
}
