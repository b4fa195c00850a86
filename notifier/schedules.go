package notifier

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// On-call schedules, on the routing side: each schedule of the entity (or of an escalation step
// when it fires) resolves at the routing time, the notifier's clock, to whoever is on call, and
// those contacts join the notification's contacts, to be routed through their own rules like
// any other; a contact reached both directly and by a schedule is routed once. A recovery or
// acknowledgement also reaches whoever the check's schedules alerted for the failure
// (schedule_alerted), which the problem's routing records and the recovery clears.

// resolution is who one schedule puts on call at one instant, and why.
type resolution struct {
	schedule string
	onCall   oncall.OnCall
	missing  bool // the schedule does not exist (or cannot be read)
}

// uncovered tells whether nobody from a layer or an override is on call.
func (r resolution) uncovered() bool {
	return !r.missing && (r.onCall.Source == oncall.FromFallback || r.onCall.Source == oncall.Nobody)
}

// note is the explain text of a resolution.
func (r resolution) note() string {
	switch {
	case r.missing:
		return "schedule " + r.schedule + " does not exist or cannot be read: nobody reached through it"
	case r.onCall.Source == oncall.Nobody:
		return "schedule " + r.schedule + ": nobody on call and no fallback"
	case r.onCall.Source == oncall.FromFallback:
		return "schedule " + r.schedule + ": nobody on call, fallback " + strings.Join(r.onCall.Contacts, ", ")
	}
	return "schedule " + r.schedule + ": " + strings.Join(r.onCall.Contacts, ", ") + " on call (" + oncall.Provenance(r.onCall) + ")"
}

// resolveSchedules resolves schedule ids (stored JSON in defs) at now.
func (nt *Notifier) resolveSchedules(ids []string, defs map[string]string, now time.Time) []resolution {
	out := make([]resolution, 0, len(ids))
	for _, id := range ids {
		s, ok := nt.rotas.decode(id, defs[id], nt.log)
		if !ok {
			out = append(out, resolution{schedule: id, missing: true})
			continue
		}
		out = append(out, resolution{schedule: id, onCall: s.At(now)})
	}
	return out
}

// withSchedules adds to a notification's contacts whoever its entity's schedules put on call at
// now and, for a recovery or acknowledgement, whoever they alerted for the failure; it notes in
// the plan which schedule reached whom and what the resolution found.
func (nt *Notifier) withSchedules(p *plan, r roster.Routing, contacts []roster.Contact, now time.Time) []roster.Contact {
	if len(r.Schedules) == 0 && (len(r.ScheduleAlerted) == 0 || !isRecoveryOrAck(p.notification)) {
		return contacts
	}
	res := nt.resolveSchedules(r.Schedules, r.ScheduleDefs, now)
	p.resolutions = append(p.resolutions, res...)
	add := func(id, schedule string) {
		if p.reachedBy == nil {
			p.reachedBy = map[string]string{}
		}
		if _, ok := p.reachedBy[id]; !ok {
			p.reachedBy[id] = schedule
		}
		if slices.ContainsFunc(contacts, func(c roster.Contact) bool { return c.ID == id }) {
			return
		}
		if c, ok := r.Scheduled[id]; ok {
			contacts = append(contacts, c)
			return
		}
		p.scheduleNotes = append(p.scheduleNotes, "schedule "+schedule+" names contact "+id+", who does not exist")
	}
	for _, s := range res {
		p.scheduleNotes = append(p.scheduleNotes, s.note())
		for _, id := range s.onCall.Contacts {
			add(id, s.schedule)
		}
	}
	if isRecoveryOrAck(p.notification) {
		for _, id := range sortedKeys(r.ScheduleAlerted) {
			if _, reached := p.reachedBy[id]; !reached {
				p.scheduleNotes = append(p.scheduleNotes, fmt.Sprintf("%s was alerted of the problem through schedule %s",
					id, r.ScheduleAlerted[id]))
			}
			add(id, r.ScheduleAlerted[id])
		}
	}
	return contacts
}

// rememberScheduled records, with a problem's alerts, the contacts its schedules reached
// (schedule_alerted, written by model/roster), so the recovery finds them whoever is on call by
// then; a recovery clears the record.
func (nt *Notifier) rememberScheduled(p *plan) {
	n := p.notification
	switch n.Type {
	case schema.NotificationRecovery:
		roster.WriteScheduleAlerted(&p.record, nt.keys, n.EventID, true, nil)
	case schema.NotificationProblem:
		var reached []roster.ScheduleReach
		seen := map[string]bool{}
		for _, a := range p.alerts {
			if a.Schedule != "" && !seen[a.ContactID] {
				seen[a.ContactID] = true
				reached = append(reached, roster.ScheduleReach{ContactID: a.ContactID, Schedule: a.Schedule})
			}
		}
		roster.WriteScheduleAlerted(&p.record, nt.keys, n.EventID, false, reached)
	}
}

// observeSchedules counts the fallbacks of an applied plan (the coverage gauges are the tick's:
// coverage.go).
func (nt *Notifier) observeSchedules(p *plan) {
	for _, r := range p.resolutions {
		if r.missing || !r.uncovered() {
			continue
		}
		nt.m.scheduleFallbacks.WithLabelValues(r.schedule).Inc()
		nt.log.Warn("nobody on call in schedule; fallback used", zap.String("schedule", r.schedule),
			zap.Strings("fallback", r.onCall.Contacts))
	}
}

// scheduleCache keeps decoded schedules by their stored JSON, so routing and the tick decode a
// schedule once per change.
type scheduleCache struct {
	mu   sync.Mutex
	byID map[string]cachedSchedule
}

type cachedSchedule struct {
	raw      string
	schedule *oncall.Schedule
}

// decode returns the schedule stored as raw ("" when it does not exist); a value that cannot be
// read is logged once per change.
func (c *scheduleCache) decode(id, raw string, log *zap.Logger) (*oncall.Schedule, bool) {
	if raw == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byID[id]; ok && old.raw == raw {
		return old.schedule, old.schedule != nil
	}
	s, err := oncall.Decode([]byte(raw))
	if err != nil {
		log.Error("schedule cannot be read; nobody is reached through it", zap.String("schedule", id), zap.Error(err))
	}
	if c.byID == nil || len(c.byID) > 4096 {
		c.byID = map[string]cachedSchedule{}
	}
	c.byID[id] = cachedSchedule{raw: raw, schedule: s}
	return s, s != nil
}

// stepsOnCall resolves, at now, the schedules of the steps firing (one read of their
// definitions, only when a step names any) and returns every contact they put on call.
func (nt *Notifier) stepsOnCall(conn redis.Conn, firing []*due, now time.Time) ([]string, error) {
	var ids []string
	for _, d := range firing {
		ids = append(ids, d.step.Schedules...)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	defs, err := roster.ScheduleDefs(conn, nt.keys, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	var all []string
	for _, d := range firing {
		p := d.p
		for _, r := range nt.resolveSchedules(d.step.Schedules, defs, now) {
			p.resolutions = append(p.resolutions, r)
			p.scheduleNotes = append(p.scheduleNotes, r.note())
			for _, id := range r.onCall.Contacts {
				if p.reachedBy == nil {
					p.reachedBy = map[string]string{}
				}
				if _, ok := p.reachedBy[id]; !ok {
					p.reachedBy[id] = r.schedule
					d.onCall = append(d.onCall, id)
				}
			}
		}
		all = append(all, d.onCall...)
	}
	return all, nil
}
