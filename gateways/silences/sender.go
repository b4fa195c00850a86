package silences

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/schema"
)

// CreatedBy is the author of every silence flapjack makes; only such silences are updated or
// expired.
const CreatedBy = "flapjack"

// Config is how to reach the Alertmanager (alertmanager.*).
type Config struct {
	URL         string
	Username    string
	Password    string
	BearerToken string
	Timeout     time.Duration
}

// Sender delivers silence jobs to Alertmanager's API v2.
type Sender struct {
	cfg    Config
	base   *url.URL
	clock  clock.Clock
	client *http.Client
}

// NewSender checks cfg and builds a Sender.
func NewSender(cfg Config, clk clock.Clock) (*Sender, error) {
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("alertmanager.url %q is not an http(s) URL", cfg.URL)
	}
	if cfg.BearerToken != "" && cfg.Username != "" {
		return nil, errors.New("alertmanager.bearer_token and alertmanager.username are both set: use one")
	}
	return &Sender{cfg: cfg, base: base, clock: clk, client: httpsend.NewClient(cfg.Timeout)}, nil
}

// matcher is one of a silence's matchers (API v2).
type matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// silence is a silence as API v2 reads and writes it.
type silence struct {
	ID        string    `json:"id,omitempty"`
	Matchers  []matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	Status    *struct {
		State string `json:"state"`
	} `json:"status,omitempty"`
}

// Send creates or extends the silence of an acknowledgement, or expires it.
func (s *Sender) Send(ctx context.Context, job schema.Alert) error {
	matchers, err := matchers(job)
	if err != nil {
		return err
	}
	ours, err := s.silencesOf(ctx, matchers)
	if err != nil {
		return err
	}
	if job.State == stateExpire {
		for _, id := range ours {
			if err := s.expire(ctx, id); err != nil {
				return err
			}
		}
		return nil
	}
	return s.silence(ctx, job, matchers, ours)
}

// matchers are the job's tags, name=value, as equality matchers.
func matchers(job schema.Alert) ([]matcher, error) {
	labels := make(map[string]string, len(job.Tags))
	for _, tag := range job.Tags {
		name, value, ok := strings.Cut(tag, "=")
		if !ok || name == "" {
			return nil, gateways.Permanent(fmt.Errorf("silence job for %s has a tag %q that is not name=value", job.EventID, tag))
		}
		labels[name] = value
	}
	if len(labels) == 0 {
		return nil, gateways.Permanent(fmt.Errorf("silence job for %s has no labels to match", job.EventID))
	}
	return equalities(labels), nil
}

// decodeLabels reads an alertmanager_labels value.
func decodeLabels(raw []byte) (schema.AlertLabels, error) {
	var kept schema.AlertLabels
	if err := json.Unmarshal(raw, &kept); err != nil || len(kept.Labels) == 0 {
		return kept, fmt.Errorf("not a JSON object of labels: %q", raw)
	}
	return kept, nil
}

// equalities are labels as equality matchers, sorted by name.
func equalities(labels map[string]string) []matcher {
	out := make([]matcher, 0, len(labels))
	for name, value := range labels {
		out = append(out, matcher{Name: name, Value: value, IsEqual: true})
	}
	slices.SortFunc(out, func(a, b matcher) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// filter is the API's filter query of matchers.
func filter(matchers []matcher) url.Values {
	q := url.Values{}
	for _, m := range matchers {
		q.Add("filter", fmt.Sprintf("%s=%q", m.Name, m.Value))
	}
	return q
}

// silencesOf are the ids of the pending or active silences flapjack made with exactly matchers.
func (s *Sender) silencesOf(ctx context.Context, matchers []matcher) ([]string, error) {
	var list []silence
	if err := s.call(ctx, http.MethodGet, "/api/v2/silences?"+filter(matchers).Encode(), nil, &list); err != nil {
		return nil, err
	}
	var ids []string
	for _, sl := range list {
		if sl.CreatedBy != CreatedBy || sl.Status == nil || (sl.Status.State != "active" && sl.Status.State != "pending") {
			continue
		}
		if sameMatchers(sl.Matchers, matchers) {
			ids = append(ids, sl.ID)
		}
	}
	return ids, nil
}

func sameMatchers(a, b []matcher) bool {
	a = slices.Clone(a)
	slices.SortFunc(a, func(x, y matcher) int { return strings.Compare(x.Name, y.Name) })
	return slices.Equal(a, b)
}

// silence creates the acknowledgement's silence, or moves the end of the one flapjack made
// already (a retried job, an extended acknowledgement).
func (s *Sender) silence(ctx context.Context, job schema.Alert, matchers []matcher, ours []string) error {
	if job.Time == nil || job.Duration == nil {
		return gateways.Permanent(fmt.Errorf("silence job for %s has no time and duration", job.EventID))
	}
	start := time.Unix(*job.Time, 0)
	end := start.Add(time.Duration(*job.Duration) * time.Second)
	if !end.After(s.clock.Now()) {
		return nil // the acknowledgement is over: nothing to silence
	}
	comment := "acknowledged in flapjack"
	if job.Summary != nil && strings.TrimSpace(*job.Summary) != "" {
		comment = *job.Summary
	}
	sl := silence{Matchers: matchers, StartsAt: start, EndsAt: end, CreatedBy: CreatedBy, Comment: comment}
	if len(ours) > 0 {
		sl.ID = ours[0]
	}
	body, err := json.Marshal(sl)
	if err != nil {
		return gateways.Permanent(fmt.Errorf("encode silence: %w", err))
	}
	return s.call(ctx, http.MethodPost, "/api/v2/silences", body, nil)
}

func (s *Sender) expire(ctx context.Context, id string) error {
	err := s.call(ctx, http.MethodDelete, "/api/v2/silence/"+url.PathEscape(id), nil, nil)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		return nil // gone already
	}
	return err
}

// statusError is an answer that was not a success.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// call makes one API request; into, when set, receives the decoded answer.
func (s *Sender) call(ctx context.Context, method, path string, body []byte, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.base.String()+path, bytes.NewReader(body))
	if err != nil {
		return gateways.Permanent(fmt.Errorf("build request: %w", err))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case s.cfg.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+s.cfg.BearerToken)
	case s.cfg.Username != "":
		req.SetBasicAuth(s.cfg.Username, s.cfg.Password)
	}
	target := "Alertmanager " + s.base.Host
	resp, err := httpsend.Do(ctx, s.client, s.cfg.Timeout, req, target)
	if err != nil {
		return gateways.Retryable(err, 0)
	}
	if !httpsend.OK(resp.Status) {
		describe := fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.Status,
			httpsend.Excerpt(resp.Body, s.cfg.Password, s.cfg.BearerToken))
		return &statusError{status: resp.Status, err: httpsend.Classify(resp, s.clock.Now(), describe)}
	}
	if into != nil {
		if err := json.Unmarshal(resp.Body, into); err != nil {
			return gateways.Retryable(fmt.Errorf("%s %s: answer is not JSON: %w", method, target, err), 0)
		}
	}
	return nil
}
