// Package logmedium is the "log" medium: it prints each alert as one line on a writer
// (standard output in `flapjack server`), so a newcomer sees alerts without any chat or paging
// account, and scripts can follow them.
package logmedium

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/schema"
)

// Sender writes alerts to W.
type Sender struct {
	mu sync.Mutex
	W  io.Writer
	// Templates replace the text (gateways.log.templates.alert.text); nil: the built-in text.
	Templates *gateways.Templates
	Log       *zap.Logger
}

// Send prints one line: "ALERT <text> [contact=... id=...]"; line breaks a template writes are
// folded so one alert stays one line.
func (s *Sender) Send(_ context.Context, a schema.Alert) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := gateways.AlertText(a, "")
	if s.Templates != nil {
		text = s.Templates.Render(gateways.TemplateAlertText, gateways.NewMessage(a, time.UTC),
			func(m gateways.Message) string { return m.Text }, s.Log)
		text = strings.Join(strings.Fields(text), " ")
	}
	_, err := fmt.Fprintf(s.W, "ALERT %s [contact=%s address=%s id=%s]\n", text, a.ContactID, a.Address, a.ID)
	if err != nil {
		return gateways.Retryable(fmt.Errorf("write alert: %w", err), 0)
	}
	return nil
}
