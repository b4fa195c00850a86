package silences

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/model"
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
// checks mirrored as silences, with what was mirrored, and queues a job for each difference.
func (w *Watcher) Sync(ctx context.Context) error {
	conn, err := w.Pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("sync silences: %w", err)
	}
	defer conn.Close()
	ids, mirrored, err := w.candidates(conn)
	if err != nil || len(ids) == 0 {
		return err
	}
	refs := make([]model.CheckRef, len(ids))
	for i, id := range ids {
		refs[i].Entity, refs[i].Check, _ = schema.SplitCheckID(id)
	}
	now := w.Clock.Now()
	statuses, err := model.CheckStatuses(conn, w.Keys, now, refs)
	if err != nil {
		return fmt.Errorf("sync silences: %w", err)
	}
	for i, st := range statuses {
		if err := w.follow(conn, ids[i], st, mirrored[ids[i]], now); err != nil {
			return err
		}
	}
	return nil
}

// candidates are the failing checks with labels kept and the checks mirrored, with what was
// mirrored for each.
func (w *Watcher) candidates(conn redis.Conn) ([]string, map[string]string, error) {
	mirrored, err := redis.StringMap(conn.Do("HGETALL", w.Keys.AlertmanagerSilences()))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", w.Keys.AlertmanagerSilences(), err)
	}
	failing, err := redis.Strings(conn.Do("ZRANGE", w.Keys.FailedChecks(), 0, -1))
	if err != nil {
		return nil, nil, fmt.Errorf("read failing checks: %w", err)
	}
	var ids []string
	if len(failing) > 0 {
		args := redis.Args{w.Keys.AlertmanagerLabels()}.AddFlat(failing)
		labelled, err := redis.Values(conn.Do("HMGET", args...))
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", w.Keys.AlertmanagerLabels(), err)
		}
		for i, l := range labelled {
			if _, done := mirrored[failing[i]]; l != nil && !done {
				ids = append(ids, failing[i])
			}
		}
	}
	for id := range mirrored {
		ids = append(ids, id)
	}
	return ids, mirrored, nil
}

// follow queues what makes Alertmanager agree with one check's acknowledgement.
func (w *Watcher) follow(conn redis.Conn, id string, st model.CheckStatus, had string, now time.Time) error {
	want := ""
	if st.InUnscheduledMaintenance() {
		want = fmt.Sprintf("%d %d", st.Unscheduled.Start, st.Unscheduled.End)
	}
	if want == had {
		return nil
	}
	var job *schema.Alert
	switch {
	case want != "":
		job = w.job(id, stateSilence, st.Unscheduled, st.UnscheduledSummary)
	case mirroredEnd(had) > now.Unix():
		job = w.job(id, stateExpire, model.Window{}, "")
	}
	payload := ""
	if job != nil {
		b, err := json.Marshal(job)
		if err != nil {
			return fmt.Errorf("encode silence job for %s: %w", id, err)
		}
		payload = string(b)
	}
	moved, err := redis.Int(transition.Do(conn, w.Keys.AlertmanagerSilences(), w.Keys.Queue(schema.AlertmanagerSilenceQueue),
		id, had, want, payload))
	if err != nil {
		return fmt.Errorf("queue silence job for %s: %w", id, err)
	}
	if moved == 1 && job != nil {
		w.Log.Info("silence job queued", zap.String("check", id), zap.String("job", job.NotificationType))
	}
	return nil
}

// mirroredEnd is the end of a mirrored acknowledgement "START END" (0 when unreadable).
func mirroredEnd(v string) int64 {
	_, end, _ := strings.Cut(v, " ")
	n, _ := strconv.ParseInt(end, 10, 64)
	return n
}

// Notification types of the jobs.
const (
	typeSilence = "acknowledgement"
	typeExpire  = "acknowledgement_ended"
)

func (w *Watcher) job(id, state string, window model.Window, summary string) *schema.Alert {
	a := &schema.Alert{Media: Medium, Address: w.Address, EventID: id, State: state, NotificationType: typeExpire}
	if state == stateSilence {
		start, length := window.Start, window.End-window.Start
		a.Time, a.Duration, a.Summary, a.NotificationType = &start, &length, &summary, typeSilence
	}
	a.ID = fmt.Sprintf("%s:%s:%d", Medium, id, w.Clock.Now().UnixNano())
	return a
}
