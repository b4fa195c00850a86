//go:build !unix

package receiver

import "sync"

var spoolLock sync.Mutex

// lockDir serialises drains within this process (no cross-process lock on this platform).
func lockDir(string) (func(), bool, error) {
	if !spoolLock.TryLock() {
		return nil, false, nil
	}
	return spoolLock.Unlock, true, nil
}
