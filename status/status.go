// Package status owns the answer to "is it healthy?": the live instances of every stage with
// their heartbeat age, the depth of every queue, processing list and dead-letter list, events
// per minute, and how many checks are failing and acknowledged. `flapjack status` prints it and
// the Prometheus collector exports it at scrape time. It also answers "what is failing?": the
// check listings of the on-call views (ReadChecks, WriteChecks), the most recent failing checks
// also riding in the snapshot.
package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/schema"
)

// executiveStage is the stage whose instances keep live event counters (docs/flapjack-1x.md 2.1).
const executiveStage = "executive"

// Instance is one running (or dead) stage instance.
type Instance struct {
	Stage        string `json:"stage"`
	ID           string `json:"id"`
	Version      string `json:"version"`
	BootTime     int64  `json:"boot_time"`
	Heartbeat    int64  `json:"heartbeat"`
	HeartbeatAge int64  `json:"heartbeat_age_seconds"`
	Processed    int64  `json:"processed"`
	// ProcessedAsOf is when Processed was counted (unix seconds; 0 = unknown) and ProcessedAge
	// how long before the snapshot that was. An executive's count is read from its
	// event_counters:HOST:PID hash, which the batch write itself increments, so it is current
	// (age 0); other stages report their count only with each heartbeat.
	ProcessedAsOf int64 `json:"processed_as_of"`
	ProcessedAge  int64 `json:"processed_age_seconds"`
	Processing    int64 `json:"processing"`
	Stale         bool  `json:"stale"`
}

// ProcessedText is the PROCESSED cell of `flapjack status`: the count, followed by how old it
// is when it comes from a heartbeat ("1234 as of 4s ago"), or "-" when unknown.
func (in Instance) ProcessedText() string {
	switch {
	case in.ProcessedAsOf == 0:
		return "-"
	case in.ProcessedAge <= 0:
		return strconv.FormatInt(in.Processed, 10)
	}
	return fmt.Sprintf("%d as of %s ago", in.Processed, Compact(time.Duration(in.ProcessedAge)*time.Second))
}

// Queue is one list's depth.
type Queue struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // queue, processing, failed, rejected
	Depth int64  `json:"depth"`
}

// Snapshot is the system's state at one instant.
type Snapshot struct {
	Time            int64      `json:"time"`
	Instances       []Instance `json:"instances"`
	Queues          []Queue    `json:"queues"`
	EventsPerMinute []int64    `json:"events_per_minute"` // oldest first, the last 10 minutes
	Failing         int64      `json:"failing_checks"`
	Acknowledged    int64      `json:"acknowledged_checks"`
	InMaintenance   int64      `json:"failing_checks_in_scheduled_maintenance"`
	FailingCounted  bool       `json:"failing_detail_complete"`
	// FailingList is the most recently changed failing checks, at most Options.FailingLimit of
	// them, and FailingTotal how many checks fail (read with the list, so "and N more" is
	// FailingTotal - len(FailingList)).
	FailingList  []CheckRow `json:"failing"`
	FailingTotal int64      `json:"failing_total"`
	// Processes are the flapjack processes with the stages each runs.
	Processes []Process `json:"processes"`
	// Escalations are the escalation ladders in progress, soonest next step first (at most
	// Options.FailingLimit), of EscalationsTotal.
	Escalations      []Escalation `json:"escalations"`
	EscalationsTotal int64        `json:"escalations_total"`
	// Contacts is how many contacts there are, found as Flapjack 1.6 finds them (their
	// contact:ID hashes) and through all_contacts; counted with the lists (not for the
	// Prometheus collector).
	Contacts int64 `json:"contacts"`
}

// WriteFailing prints the failing checks under the health summary (see WriteChecks).
func (s Snapshot) WriteFailing(w io.Writer) error {
	return WriteChecks(w, CheckList{Checks: s.FailingList, Total: s.FailingTotal, FailingOnly: true}, time.Unix(s.Time, 0))
}

// Options say which queues exist.
type Options struct {
	Queues     []string // every queue name: events, notifications, media queues
	Stages     []string // every stage whose instances are listed (executive, notifier, <medium>_gateway)
	StaleAfter time.Duration
	// MaxFailingDetail bounds how many failing checks are inspected for acknowledgement and
	// maintenance (reading facts costs a few commands per check).
	MaxFailingDetail int
	// FailingLimit bounds Snapshot.FailingList: 0 means DefaultLimit, a negative value reads no
	// list (the Prometheus collector does not need it).
	FailingLimit int
}

// Read takes a snapshot at now.
func Read(conn redis.Conn, keys schema.Keys, o Options, now time.Time) (Snapshot, error) {
	s := Snapshot{Time: now.Unix()}
	if err := readInstances(conn, keys, o, now, &s); err != nil {
		return s, err
	}
	if err := readProcesses(conn, keys, o.staleAfter(), now, &s); err != nil {
		return s, err
	}
	if err := readQueues(conn, keys, o, &s); err != nil {
		return s, err
	}
	if err := readRates(conn, keys, now, &s); err != nil {
		return s, err
	}
	if err := readFailing(conn, keys, o, now, &s); err != nil {
		return s, err
	}
	if o.FailingLimit >= 0 {
		list, err := ReadChecks(conn, keys, CheckQuery{FailingOnly: true, Limit: o.FailingLimit}, now)
		if err != nil {
			return s, err
		}
		s.FailingList, s.FailingTotal = list.Checks, list.Total
		if s.Escalations, s.EscalationsTotal, err = ReadEscalations(conn, keys, o.FailingLimit); err != nil {
			return s, err
		}
		contacts, err := roster.ContactIDs(context.Background(), conn, keys)
		if err != nil {
			return s, err
		}
		s.Contacts = int64(len(contacts))
	}
	return s, nil
}

// staleAfter is how old a heartbeat may be before its instance counts as dead.
func (o Options) staleAfter() time.Duration {
	if o.StaleAfter <= 0 {
		return 15 * time.Second
	}
	return o.StaleAfter
}

func readInstances(conn redis.Conn, keys schema.Keys, o Options, now time.Time, s *Snapshot) error {
	stale := o.staleAfter()
	for _, stage := range o.Stages {
		ids, err := redis.Strings(conn.Do("SMEMBERS", keys.Instances(stage)))
		if err != nil {
			return fmt.Errorf("list %s instances: %w", stage, err)
		}
		sort.Strings(ids)
		// An executive's processed count is current in its event_counters:HOST:PID hash ("all"
		// is incremented by the script that applies each batch); the heartbeat's copy can be a
		// beat old.
		live := stage == executiveStage
		for _, id := range ids {
			conn.Send("HGETALL", keys.Instance(stage, id))
			conn.Send("LLEN", keys.Processing(stage, id))
			if live {
				conn.Send("HGET", keys.InstanceEventCounters(id), "all")
			}
		}
		if err := conn.Flush(); err != nil {
			return err
		}
		for _, id := range ids {
			rec, err := redis.StringMap(conn.Receive())
			if err != nil {
				return fmt.Errorf("read instance %s: %w", id, err)
			}
			processing, err := redis.Int64(conn.Receive())
			if err != nil {
				return fmt.Errorf("read processing list of %s: %w", id, err)
			}
			in := Instance{Stage: stage, ID: id, Version: rec["version"], Processing: processing,
				BootTime: atoi(rec["boot_time"]), Heartbeat: atoi(rec["heartbeat"]), Processed: atoi(rec["processed"])}
			if _, ok := rec["processed"]; ok {
				in.ProcessedAsOf = in.Heartbeat
			}
			if live {
				counted, err := redis.String(conn.Receive())
				if err != nil && !errors.Is(err, redis.ErrNil) {
					return fmt.Errorf("read event counters of %s: %w", id, err)
				}
				if err == nil {
					in.Processed, in.ProcessedAsOf = atoi(counted), now.Unix()
				}
			}
			if in.ProcessedAsOf > 0 {
				in.ProcessedAge = now.Unix() - in.ProcessedAsOf
			}
			in.HeartbeatAge = now.Unix() - in.Heartbeat
			in.Stale = len(rec) == 0 || time.Duration(in.HeartbeatAge)*time.Second > stale
			s.Instances = append(s.Instances, in)
			s.Queues = append(s.Queues, Queue{Name: keys.Processing(stage, id), Kind: "processing", Depth: processing})
		}
	}
	return nil
}

func readQueues(conn redis.Conn, keys schema.Keys, o Options, s *Snapshot) error {
	var names []Queue
	for _, q := range o.Queues {
		names = append(names, Queue{Name: keys.Queue(q), Kind: "queue"}, Queue{Name: keys.FailedQueue(q), Kind: "failed"})
	}
	for _, q := range names {
		conn.Send("LLEN", q.Name)
	}
	if err := conn.Flush(); err != nil {
		return err
	}
	for _, q := range names {
		n, err := redis.Int64(conn.Receive())
		if err != nil {
			return fmt.Errorf("depth of %s: %w", q.Name, err)
		}
		if q.Kind == "failed" && n == 0 {
			continue
		}
		q.Depth = n
		s.Queues = append(s.Queues, q)
	}
	return nil
}

func readRates(conn redis.Conn, keys schema.Keys, now time.Time, s *Snapshot) error {
	args := make([]any, 0, 10)
	for i := 9; i >= 0; i-- {
		args = append(args, keys.EventsPerMinute(now.Add(-time.Duration(i)*time.Minute)))
	}
	v, err := redis.Strings(conn.Do("MGET", args...))
	if err != nil {
		return fmt.Errorf("read event rates: %w", err)
	}
	for _, x := range v {
		s.EventsPerMinute = append(s.EventsPerMinute, atoi(x))
	}
	return nil
}

func readFailing(conn redis.Conn, keys schema.Keys, o Options, now time.Time, s *Snapshot) error {
	n, err := redis.Int64(conn.Do("ZCARD", keys.FailedChecks()))
	if err != nil {
		return fmt.Errorf("count failing checks: %w", err)
	}
	s.Failing = n
	limit := o.MaxFailingDetail
	if limit <= 0 {
		limit = 10000
	}
	ids, err := redis.Strings(conn.Do("ZRANGE", keys.FailedChecks(), 0, limit-1))
	if err != nil {
		return fmt.Errorf("list failing checks: %w", err)
	}
	s.FailingCounted = int64(len(ids)) == n
	for start := 0; start < len(ids); start += 500 {
		var reqs []checkstate.FactsRequest
		for _, id := range ids[start:min(start+500, len(ids))] {
			if e, c, ok := schema.SplitCheckID(id); ok {
				reqs = append(reqs, checkstate.FactsRequest{Entity: e, Check: c, Mode: checkstate.ModeMaintenance})
			}
		}
		facts, err := checkstate.ReadFacts(conn, keys, now, reqs)
		if err != nil {
			return err
		}
		for _, f := range facts {
			if f.UnscheduledMaintenance.Covers(now.Unix()) {
				s.Acknowledged++
			}
			if f.ScheduledMaintenance.Covers(now.Unix()) {
				s.InMaintenance++
			}
		}
	}
	return nil
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// Problems lists what makes the system unhealthy: stale instances, and queues deeper than
// maxDepth (0 = no depth check). `flapjack status` exits non-zero when there are any.
func (s Snapshot) Problems(maxDepth int64) []string {
	var out []string
	for _, in := range s.Instances {
		if in.Stale {
			out = append(out, fmt.Sprintf("%s %s is stale: last heartbeat %ds ago", in.Stage, in.ID, in.HeartbeatAge))
		}
	}
	for _, p := range s.Processes {
		if p.Stale {
			out = append(out, fmt.Sprintf("process %s (%s) is stale: last heartbeat %ds ago", p.ID, strings.Join(p.Stages, ", "), p.HeartbeatAge))
		}
	}
	if maxDepth > 0 {
		for _, q := range s.Queues {
			if q.Kind == "queue" && q.Depth > maxDepth {
				out = append(out, fmt.Sprintf("queue %s holds %d items (threshold %d)", q.Name, q.Depth, maxDepth))
			}
		}
	}
	return out
}
