package silences

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/schema"
)

// Publisher queues events (*events.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...schema.Event) ([]schema.Event, error)
}

// resolvedSummary is the summary of the ok result queued for an alert that resolved while
// silenced.
const resolvedSummary = "resolved in Alertmanager while silenced by flapjack's acknowledgement"

// Resolver reads back the alerts of the checks mirrored as silences that came in through
// Alertmanager's webhook: Alertmanager mutes a silenced alert's resolution like its other
// notifications, so the webhook would never say it. An alert Alertmanager no longer holds as
// firing is resolved, and the Resolver queues an ok result for its check (whose recovery then
// ends the acknowledgement, and the Watcher expires the silence).
type Resolver struct {
	Pool   Pool
	Keys   schema.Keys
	Sender *Sender
	Events Publisher
	Log    *zap.Logger
}

// gettableAlert is an alert as GET /api/v2/alerts lists it.
type gettableAlert struct {
	Labels map[string]string `json:"labels"`
}

// Resolve checks every mirrored check once.
func (r *Resolver) Resolve(ctx context.Context) error {
	s := r.Sender
	kept, err := r.mirroredLabels(ctx)
	if err != nil {
		return err
	}
	var resolved []schema.Event
	for id, labels := range kept {
		q := filter(equalities(labels))
		q.Set("active", "true")
		q.Set("silenced", "true")
		q.Set("inhibited", "true")
		q.Set("unprocessed", "true")
		var alerts []gettableAlert
		if err := s.call(ctx, http.MethodGet, "/api/v2/alerts?"+q.Encode(), nil, &alerts); err != nil {
			return fmt.Errorf("read back the alert of %s: %w", id, err)
		}
		if firing(alerts, labels) {
			continue
		}
		entity, check, _ := schema.SplitCheckID(id)
		now := s.clock.Now()
		resolved = append(resolved, schema.Event{Entity: entity, Check: check, Type: schema.TypeService, State: schema.StateOK,
			Summary: resolvedSummary, Time: now.Unix(), HasTime: true})
		r.Log.Info("silenced alert resolved in Alertmanager; queueing its recovery", zap.String("check", id))
	}
	if len(resolved) == 0 {
		return nil
	}
	if _, err := r.Events.Publish(ctx, resolved...); err != nil {
		return fmt.Errorf("queue recoveries of silenced alerts: %w", err)
	}
	return nil
}

func firing(alerts []gettableAlert, labels map[string]string) bool {
	for _, a := range alerts {
		if maps.Equal(a.Labels, labels) {
			return true
		}
	}
	return false
}

// mirroredLabels are the labels of the silences mirrored for checks whose alerts came through
// Alertmanager.
func (r *Resolver) mirroredLabels(ctx context.Context) (map[string]map[string]string, error) {
	conn, err := r.Pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("read silenced checks: %w", err)
	}
	defer conn.Close()
	mirrored, err := redis.StringMap(conn.Do("HGETALL", r.Keys.AlertmanagerSilences()))
	if err != nil {
		return nil, fmt.Errorf("read silenced checks: %w", err)
	}
	out := make(map[string]map[string]string, len(mirrored))
	for id, text := range mirrored {
		var m schema.MirroredSilence
		if json.Unmarshal([]byte(text), &m) == nil && m.Via == schema.ViaAlertmanager && len(m.Labels) > 0 {
			out[id] = m.Labels
		}
	}
	return out, nil
}
