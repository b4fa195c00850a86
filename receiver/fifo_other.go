//go:build !linux

package receiver

import (
	"errors"
	"os"
)

// openFIFO: named pipes in the Nagios sense exist only on Unix.
func openFIFO(path string) (*os.File, error) {
	return nil, errors.New("named pipes are not supported on this platform")
}

func setPipeSize(f *os.File, want int) (int, error) { return 0, nil }
func pipeWaiting(f *os.File) int                    { return 0 }
func makeFIFO(path string, mode os.FileMode, group string) error {
	return errors.New("named pipes are not supported on this platform")
}
