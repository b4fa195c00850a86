//go:build !unix

package receiver

import "sync"

// drainLocks serialise drains within this process (no cross-process lock on this platform).
var drainLocks sync.Map // directory -> *sync.Mutex

// lockDir is a no-op here: a Spool's own mutex serialises its changes, and directories are not
// shared between processes on this platform.
func lockDir(string) (func(), error) { return func() {}, nil }

// tryLockDrain takes dir's drain lock within this process without waiting.
func tryLockDrain(dir string) (func(), bool, error) {
	m, _ := drainLocks.LoadOrStore(dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	if !mu.TryLock() {
		return nil, false, nil
	}
	return mu.Unlock, true, nil
}
