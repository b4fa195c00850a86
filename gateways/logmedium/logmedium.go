// Package logmedium is the "log" medium: it prints each alert as one line on a writer
// (standard output in `flapjack server`), so a newcomer sees alerts without any chat or paging
// account, and scripts can follow them.
package logmedium

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

// Sender writes alerts to W.
type Sender struct {
	mu sync.Mutex
	W  io.Writer
}

// Send prints one line: "ALERT <text> [contact=... id=...]".
func (s *Sender) Send(_ context.Context, a schema.Alert) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := fmt.Fprintf(s.W, "ALERT %s [contact=%s address=%s id=%s]\n", gateways.AlertText(a, ""), a.ContactID, a.Address, a.ID)
	if err != nil {
		return gateways.Retryable(fmt.Errorf("write alert: %w", err), 0)
	}
	return nil
}
