package httpsend

import (
	"fmt"
	"net/http"
	"strings"
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

// Options wire the Sender of an HTTP medium whose configuration is C; each medium names it
// Options (type Options = httpsend.Options[Config]).
type Options[C any] struct {
	Config     C
	HTTPClient *http.Client        // nil: NewClient
	Templates  *gateways.Templates // the medium's templates; nil: built in
	Location   *time.Location      // where event times are shown; nil: UTC
	Log        *zap.Logger
	Now        func() time.Time // wall clock for Retry-After dates; default time.Now
}

// Base is NewBase of o's wiring.
func (o Options[C]) Base(component string, timeout time.Duration) Base {
	return NewBase(component, timeout, o.HTTPClient, o.Templates, o.Location, o.Log, o.Now)
}

// Required is one error for each blank setting of medium, in order, given as name and value
// pairs: "gateways.<medium>.<name> is required".
func Required(medium string, nameValues ...string) []error {
	var errs []error
	for i := 0; i+1 < len(nameValues); i += 2 {
		if strings.TrimSpace(nameValues[i+1]) == "" {
			errs = append(errs, fmt.Errorf("gateways.%s.%s is required", medium, nameValues[i]))
		}
	}
	return errs
}

// CheckEndpoint is the error of a gateways.<medium>.endpoint CheckBaseURL refuses, else nil.
func CheckEndpoint(medium, endpoint string) error {
	if err := CheckBaseURL(endpoint); err != nil {
		return fmt.Errorf("gateways.%s.endpoint %w", medium, err)
	}
	return nil
}

// CheckTimeout is the error of a negative gateways.<medium>.timeout, else nil.
func CheckTimeout(medium string, timeout time.Duration) error {
	if timeout < 0 {
		return fmt.Errorf("gateways.%s.timeout must be positive, got %s", medium, timeout)
	}
	return nil
}
