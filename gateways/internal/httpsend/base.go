package httpsend

import (
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
)

// Base is the plumbing every HTTP medium's Sender embeds: its HTTP client, templates, the
// location event times are shown in, its logger and its wall clock.
type Base struct {
	Client *http.Client
	Tpl    *gateways.Templates
	Loc    *time.Location
	Log    *zap.Logger
	Now    func() time.Time
}

// NewBase fills the defaults of a Sender's wiring: a nil client is NewClient(timeout), a nil
// location UTC, a nil log zap.NewNop(), a nil now time.Now; the log is tagged with component
// ("sms_sender").
func NewBase(component string, timeout time.Duration, client *http.Client, tpl *gateways.Templates,
	loc *time.Location, log *zap.Logger, now func() time.Time) Base {
	if client == nil {
		client = NewClient(timeout)
	}
	if loc == nil {
		loc = time.UTC
	}
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	return Base{Client: client, Tpl: tpl, Loc: loc, Log: log.With(zap.String("component", component)), Now: now}
}
