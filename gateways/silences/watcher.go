package silences

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the name of the silence jobs' medium and of their gateway.
const Medium = "alertmanager"

// Job states: a silence to create or extend, a silence to expire.
const (
	stateSilence = schema.StateAcknowledgement
	stateExpire  = schema.StateOK
)

//go:embed scripts/transition.lua
var transitionLua string

var transition = redis.NewScript(2, transitionLua)

// Pool hands out Redis connections (*redis.Pool satisfies it).
type Pool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// Watcher queues a silence job whenever an acknowledgement of a check fed by Alertmanager
// starts, changes or ends early.
type Watcher struct {
	Pool     Pool
	Keys     schema.Keys
	Clock    clock.Clock
	Log      *zap.Logger
	Interval time.Duration
	// Address is the Alertmanager the jobs are for (the jobs' address).
	Address string
	// Resolver, when set, reads back the silenced alerts after each pass.
	Resolver *Resolver
}

// Run syncs every Interval until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	failing := false
	for {
		if err := w.pass(ctx); err != nil && ctx.Err() == nil {
			if !failing {
				w.Log.Warn("acknowledgements not mirrored to Alertmanager yet; retrying", zap.Error(err))
			}
			failing = true
		} else {
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// pass syncs, then reads the silenced alerts back.
func (w *Watcher) pass(ctx context.Context) error {
	if err := w.Sync(ctx); err != nil {
		return err
	}
	if w.Resolver == nil {
		return nil
	}
	return w.Resolver.Resolve(ctx)
}

// Sync compares once the acknowledgements of failing checks fed by Alertmanager, and of the
// checks mirrored as silences, with what was mirrored, and queues the jobs for each difference.
func (w *Watcher) Sync(ctx context.Context) error {
	conn, err := w.Pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("sync silences: %w", err)
	}
	defer conn.Close()
	cands, err := w.candidates(conn)
	if err != nil || len(cands) == 0 {
		return err
	}
	refs := make([]model.CheckRef, len(cands))
	for i, c := range cands {
		refs[i].Entity, refs[i].Check, _ = schema.SplitCheckID(c.id)
	}
	now := w.Clock.Now()
	statuses, err := views.CheckStatuses(conn, w.Keys, now, refs)
	if err != nil {
		return fmt.Errorf("sync silences: %w", err)
	}
	for i, st := range statuses {
		if err := w.follow(conn, cands[i], st, now); err != nil {
			return err
		}
	}
	return nil
}

// candidate is a check whose silence may have to change.
type candidate struct {
	id      string
	labels  *schema.AlertLabels     // the labels kept for it; nil when none are
	had     *schema.MirroredSilence // what was mirrored; nil when nothing is
	hadText string                  // as stored, for the compare-and-set
}

// candidates are the failing checks with labels kept and the checks mirrored.
func (w *Watcher) candidates(conn redis.Conn) ([]candidate, error) {
	mirrored, err := redis.StringMap(conn.Do("HGETALL", w.Keys.AlertmanagerSilences()))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", w.Keys.AlertmanagerSilences(), err)
	}
	failing, err := redis.Strings(conn.Do("ZRANGE", w.Keys.FailedChecks(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("read failing checks: %w", err)
	}
	ids := slices.Clone(failing)
	for id := range mirrored {
		if !slices.Contains(failing, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	raws, err := redis.ByteSlices(conn.Do("HMGET", redis.Args{w.Keys.AlertmanagerLabels()}.AddFlat(ids)...))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", w.Keys.AlertmanagerLabels(), err)
	}
	var out []candidate
	for i, id := range ids {
		c := candidate{id: id}
		if kept, err := decodeLabels(raws[i]); err == nil {
			c.labels = &kept
		}
		if text, ok := mirrored[id]; ok {
			c.hadText = text
			var had schema.MirroredSilence
			if json.Unmarshal([]byte(text), &had) == nil {
				c.had = &had
			} else {
				w.Log.Warn("unreadable mirrored silence replaced", zap.String("check", id), zap.String("value", text))
			}
		}
		if c.labels != nil || c.hadText != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// follow queues what makes Alertmanager agree with one check's acknowledgement: a silence for
// a new or changed acknowledgement, the expiry of the silence of one that ended early or whose
// labels changed.
func (w *Watcher) follow(conn redis.Conn, c candidate, st views.CheckStatus, now time.Time) error {
	var want *schema.MirroredSilence
	if st.InUnscheduledMaintenance() && c.labels != nil {
		want = &schema.MirroredSilence{Start: st.Unscheduled.Start, End: st.Unscheduled.End, AlertLabels: *c.labels}
	}
	if sameSilence(c.had, want) {
		return nil
	}
	var jobs []any
	if want != nil {
		jobs = append(jobs, w.job(c.id, stateSilence, want, st.UnscheduledSummary))
	}
	if c.had != nil && c.had.End > now.Unix() && (want == nil || !maps.Equal(c.had.Labels, want.Labels)) {
		jobs = append(jobs, w.job(c.id, stateExpire, c.had, ""))
	}
	wantText := ""
	if want != nil {
		b, err := json.Marshal(want)
		if err != nil {
			return fmt.Errorf("encode mirrored silence of %s: %w", c.id, err)
		}
		wantText = string(b)
	}
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("encode silence job for %s: %w", c.id, err)
		}
		jobs[i] = b
	}
	args := append(redis.Args{w.Keys.AlertmanagerSilences(), w.Keys.Queue(schema.AlertmanagerSilenceQueue), c.id, c.hadText, wantText}, jobs...)
	moved, err := redis.Int(transition.Do(conn, args...))
	if err != nil {
		return fmt.Errorf("queue silence jobs for %s: %w", c.id, err)
	}
	if moved == 1 && len(jobs) > 0 {
		w.Log.Info("silence jobs queued", zap.String("check", c.id), zap.Int("jobs", len(jobs)), zap.Bool("acknowledged", want != nil))
	}
	return nil
}

func sameSilence(a, b *schema.MirroredSilence) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Start == b.Start && a.End == b.End && maps.Equal(a.Labels, b.Labels)
}

// Notification types of the jobs.
const (
	typeSilence = "acknowledgement"
	typeExpire  = "acknowledgement_ended"
)

// job is a silence job: the silence's matchers are its tags, name=value.
func (w *Watcher) job(id, state string, s *schema.MirroredSilence, summary string) *schema.Alert {
	a := &schema.Alert{Media: Medium, Address: w.Address, EventID: id, State: state, NotificationType: typeExpire,
		Tags: labelTags(s.Labels)}
	if state == stateSilence {
		start, length := s.Start, s.End-s.Start
		a.Time, a.Duration, a.Summary, a.NotificationType = &start, &length, &summary, typeSilence
	}
	a.ID = fmt.Sprintf("%s:%s:%d", Medium, id, w.Clock.Now().UnixNano())
	return a
}

// labelTags are labels as name=value, sorted (label names cannot hold '=').
func labelTags(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for _, n := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, n+"="+labels[n])
	}
	return out
}
