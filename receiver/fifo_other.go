//go:build !unix

package receiver

import (
	"context"
	"errors"
	"os"
)

// openFIFO: named pipes in the Nagios sense exist only on Unix.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	return nil, errors.New("named pipes are not supported on this platform")
}
