package roster

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// EscalationPolicy is an ordered list of steps, each alerting its contacts once its delay,
// counted from the first problem alert of a check, has passed while the check is still failing
// and unhandled. It is attached to checks by the matching of notification rules (entities,
// regex_entities, tags, regex_tags; every non-empty criterion must hold) plus check names.
// Stored as JSON in the escalation_policies hash; durations in seconds.
type EscalationPolicy struct {
	ID            string           `json:"id"`
	Name          string           `json:"name,omitempty"`
	Entities      []string         `json:"entities,omitempty"`
	RegexEntities []string         `json:"regex_entities,omitempty"`
	Tags          []string         `json:"tags,omitempty"`
	RegexTags     []string         `json:"regex_tags,omitempty"`
	Checks        []string         `json:"checks,omitempty"`
	Severities    []string         `json:"severities,omitempty"` // empty: every failing severity
	Steps         []EscalationStep `json:"steps"`
	// Repeat re-alerts the last step every Repeat seconds until the problem is handled (0: never).
	Repeat int64 `json:"repeat,omitempty"`
	// RestartAfter is how long a stopped ladder is remembered: a problem within it resumes the
	// ladder (no step fires twice), a later one starts a new ladder from step 1. 0 = default.
	RestartAfter int64 `json:"restart_after,omitempty"`
}

// EscalationStep is one rung of a ladder.
type EscalationStep struct {
	Delay    int64    `json:"delay"` // seconds from the first problem alert
	Contacts []string `json:"contacts"`
	// Schedules are on-call schedules: each alerts whoever is on call when the step fires.
	Schedules []string `json:"schedules,omitempty"`
	Media     []string `json:"media,omitempty"` // empty: whatever the contact's rules choose
}

// DefaultRestartAfter is a policy's RestartAfter when it sets none.
const DefaultRestartAfter = 30 * 60

// RestartWindow is the policy's RestartAfter or the default.
func (p EscalationPolicy) RestartWindow() int64 {
	if p.RestartAfter > 0 {
		return p.RestartAfter
	}
	return DefaultRestartAfter
}

// Escalates reports whether a notification severity escalates under the policy.
func (p EscalationPolicy) Escalates(severity string) bool {
	if len(p.Severities) == 0 {
		return severity == schema.SeverityCritical || severity == schema.SeverityWarning || severity == schema.SeverityUnknown
	}
	return slices.Contains(p.Severities, severity)
}

// ContactIDs are every contact the policy alerts, sorted, once each.
func (p EscalationPolicy) ContactIDs() []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Contacts...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

var policyIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ValidateEscalationPolicy checks a policy's values (not whether its contacts exist).
func ValidateEscalationPolicy(p EscalationPolicy) error {
	var errs []FieldError
	bad := func(field, reason string) { errs = append(errs, FieldError{Field: field, Reason: reason}) }
	if !policyIDRE.MatchString(p.ID) {
		bad("id", "must be letters, digits, '.', '_' or '-' (it is part of key names)")
	}
	for i, re := range p.RegexEntities {
		if _, err := regexp.Compile(re); err != nil {
			bad(fmt.Sprintf("regex_entities[%d]", i), err.Error())
		}
	}
	for i, re := range p.RegexTags {
		if _, err := regexp.Compile(re); err != nil {
			bad(fmt.Sprintf("regex_tags[%d]", i), err.Error())
		}
	}
	for i, s := range p.Severities {
		switch s {
		case schema.SeverityCritical, schema.SeverityWarning, schema.SeverityUnknown:
		default:
			bad(fmt.Sprintf("severities[%d]", i), fmt.Sprintf("%q is not critical, warning or unknown", s))
		}
	}
	if len(p.Steps) == 0 {
		bad("steps", "needs at least one step")
	}
	for i, s := range p.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		if s.Delay < 0 {
			bad(field+".delay", "must not be negative")
		}
		if i > 0 && s.Delay < p.Steps[i-1].Delay {
			bad(field+".delay", "must not be shorter than the previous step's")
		}
		if len(s.Contacts) == 0 && len(s.Schedules) == 0 {
			bad(field+".contacts", "needs at least one contact or schedule")
		}
		for j, id := range s.Schedules {
			if r := IDProblem(id); r != "" {
				bad(fmt.Sprintf("%s.schedules[%d]", field, j), r)
			}
		}
		for j, c := range s.Contacts {
			if r := IDProblem(c); r != "" {
				bad(fmt.Sprintf("%s.contacts[%d]", field, j), r)
			}
		}
	}
	if p.Repeat < 0 {
		bad("repeat", "must not be negative")
	} else if p.Repeat > 0 && p.Repeat < 60 {
		bad("repeat", "must be at least 1 minute")
	}
	if p.RestartAfter < 0 {
		bad("restart_after", "must not be negative")
	}
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	return nil
}

func (p EscalationPolicy) normalized() EscalationPolicy {
	ents := make([]string, 0, len(p.Entities))
	for _, e := range p.Entities {
		ents = append(ents, NormalizeEntityName(e))
	}
	p.Entities = ents
	return p
}

// PutEscalationPolicies adds or replaces policies (by id), refusing any whose values are invalid
// or whose contacts do not exist; policies not named are left alone. Without opts.Partial any
// problem writes nothing.
func PutEscalationPolicies(ctx context.Context, conn redis.Conn, keys schema.Keys, policies []EscalationPolicy, opts ReplaceOptions) (BulkResult, error) {
	static, norm := checkItems(policies, "policy", ValidateEscalationPolicy, func(p EscalationPolicy) string { return p.ID },
		EscalationPolicy.normalized)
	var res BulkResult
	err := Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		res = BulkResult{Refused: append([]bool(nil), static.Refused...), Problems: append([]Problem(nil), static.Problems...)}
		var b redisread.Batch
		watch := []string{keys.AllContacts(), keys.EscalationPolicies(), keys.Schedules()}
		for i, p := range norm {
			if !res.Refused[i] {
				for _, c := range p.ContactIDs() {
					watch = append(watch, keys.Contact(c))
				}
			}
		}
		t.Watch(&b, watch...)
		type read struct {
			contacts  []contactAt
			schedules []int
		}
		at := make([]read, len(norm))
		for i, p := range norm {
			if res.Refused[i] {
				continue
			}
			for _, s := range p.Steps {
				for _, c := range s.Contacts {
					at[i].contacts = append(at[i].contacts, addContactExists(&b, keys, c))
				}
				for _, id := range s.Schedules {
					at[i].schedules = append(at[i].schedules, b.Add("HEXISTS", keys.Schedules(), id))
				}
			}
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		for i, p := range norm {
			if res.Refused[i] {
				continue
			}
			k, ks := 0, 0
			for si, s := range p.Steps {
				for j, id := range s.Schedules {
					if b.Num(at[i].schedules[ks]) != 1 {
						res.refuse(i, FieldError{Field: fmt.Sprintf("steps[%d].schedules[%d]", si, j),
							Reason: fmt.Sprintf("schedule %q does not exist", id), Err: ErrNotFound})
					}
					ks++
				}
				for ci, c := range s.Contacts {
					if !at[i].contacts[k].exists(&b) {
						res.refuse(i, FieldError{Field: fmt.Sprintf("steps[%d].contacts[%d]", si, ci),
							Reason: fmt.Sprintf("contact %q does not exist", c), Err: ErrNotFound})
					}
					k++
				}
			}
		}
		return putJSON(&res, opts, keys.EscalationPolicies(), norm, func(p EscalationPolicy) string { return p.ID }), nil
	})
	if err != nil {
		return BulkResult{}, err
	}
	return res, nil
}

// putJSON plans the writes of a bulk put whose items are stored as JSON in one hash (field =
// the item's id): each item res has not refused, unless res has problems and opts is not
// Partial. It counts them in res and returns nil when nothing is to be written now (problems,
// or a dry run).
func putJSON[T any](res *BulkResult, opts ReplaceOptions, hash string, items []T, id func(T) string) *model.Ops {
	res.sortProblems()
	if len(res.Problems) > 0 && !opts.Partial {
		return nil
	}
	var ops model.Ops
	for i, it := range items {
		if !res.Refused[i] {
			payload, _ := json.Marshal(it)
			ops.HSet(hash, id(it), string(payload))
		}
	}
	res.Writes = ops.Len()
	if opts.DryRun {
		return nil
	}
	return &ops
}

// DeleteEscalationPolicies removes policies, all or none: an id that does not exist is a
// *NotFoundError and nothing is deleted. Their ladders in progress stop at their next step
// (reason policy_removed).
func DeleteEscalationPolicies(ctx context.Context, conn redis.Conn, keys schema.Keys, ids []string) error {
	return Guarded(ctx, conn, keys, func(t *Txn) (*model.Ops, error) {
		var b redisread.Batch
		t.Watch(&b, keys.EscalationPolicies())
		at := make([]int, len(ids))
		for i, id := range ids {
			at[i] = b.Add("HEXISTS", keys.EscalationPolicies(), id)
		}
		if err := b.Run(t.ctx, t.conn); err != nil {
			return nil, err
		}
		var missing []string
		fields := make([]any, len(ids))
		for i, id := range ids {
			if b.Num(at[i]) != 1 {
				missing = append(missing, id)
			}
			fields[i] = id
		}
		if len(missing) > 0 {
			return nil, &NotFoundError{What: "escalation policy", IDs: missing}
		}
		var ops model.Ops
		ops.HDel(keys.EscalationPolicies(), fields...)
		return &ops, nil
	})
}

// EscalationPolicies reads every policy, sorted by id. A stored value that cannot be read is
// returned as an error beside the readable policies.
func EscalationPolicies(conn redis.Conn, keys schema.Keys) ([]EscalationPolicy, []error, error) {
	m, err := redis.StringMap(conn.Do("HGETALL", keys.EscalationPolicies()))
	if err != nil {
		return nil, nil, fmt.Errorf("read escalation policies: %w", err)
	}
	out, problems := DecodeEscalationPolicies(m)
	return out, problems, nil
}

// DecodeEscalationPolicies decodes the fields of the escalation_policies hash.
func DecodeEscalationPolicies(m map[string]string) ([]EscalationPolicy, []error) {
	out := make([]EscalationPolicy, 0, len(m))
	var problems []error
	for id, raw := range m {
		var p EscalationPolicy
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			problems = append(problems, fmt.Errorf("escalation policy %s: %w", id, err))
			continue
		}
		p.ID = id
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, problems
}

// Ladder is one policy's escalation of one check (schema.Keys.EscalationLadder).
type Ladder struct {
	PolicyID, CheckID string
	Exists            bool
	Revision          int64
	StartedAt         int64 // the first problem alert
	Fired             int   // steps fired
	Repeats           int   // repeats of the last step fired
	NextDue           int64 // 0: nothing more is due
	Alerted           []string
	Notification      string // the latest problem notification's JSON
	StoppedAt         int64  // 0 while the ladder is in progress
	StoppedReason     string
	Told              bool // those alerted were sent the recovery or acknowledgement
}

// Active reports a ladder in progress.
func (l Ladder) Active() bool { return l.Exists && l.StoppedAt == 0 }

// Ladder stop reasons.
const (
	StopAcknowledged  = "acknowledged"
	StopRecovered     = "recovered"
	StopMaintenance   = "maintenance"
	StopDisabled      = "disabled"
	StopSeverity      = "severity"
	StopPolicyRemoved = "policy_removed"
)

// DecodeLadder reads a ladder hash.
func DecodeLadder(policyID, checkID string, m map[string]string) Ladder {
	// a hash holding only a revision is what a guarded removal of a missing ladder leaves
	l := Ladder{PolicyID: policyID, CheckID: checkID, Exists: m["started_at"] != ""}
	num := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	l.Revision, l.StartedAt, l.NextDue, l.StoppedAt = num("revision"), num("started_at"), num("next_due"), num("stopped_at")
	l.Fired, l.Repeats = int(num("fired")), int(num("repeats"))
	l.Notification, l.StoppedReason, l.Told = m["notification"], m["stopped_reason"], m["told"] == "1"
	_ = json.Unmarshal([]byte(m["alerted"]), &l.Alerted)
	return l
}

// LadderFields are the hash fields of l, for writing it whole.
func LadderFields(l Ladder) []any {
	return append(LadderProgressFields(l), "started_at", l.StartedAt, "notification", l.Notification)
}

// LadderProgressFields are the fields a tick changes: all but started_at and notification.
func LadderProgressFields(l Ladder) []any {
	return []any{"revision", l.Revision, "fired", l.Fired, "repeats", l.Repeats, "next_due", l.NextDue,
		"alerted", alertedField(l.Alerted), "stopped_at", l.StoppedAt, "stopped_reason", l.StoppedReason, "told", toldField(l.Told)}
}

func alertedField(ids []string) string {
	if ids == nil {
		return "[]"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func toldField(told bool) string {
	if told {
		return "1"
	}
	return "0"
}

// DueScore is the due set's score of a ladder: its next step's time, or +inf for a ladder in
// progress with no step to come (it stays listed, and a tick never takes it).
func DueScore(l Ladder) string {
	if l.NextDue <= 0 {
		return "+inf"
	}
	return strconv.FormatInt(l.NextDue, 10)
}

// ReadLadders reads ladders by (policy, check) in one round trip.
func ReadLadders(conn redis.Conn, keys schema.Keys, refs [][2]string) ([]Ladder, error) {
	for _, r := range refs {
		conn.Send("HGETALL", keys.EscalationLadder(r[0], r[1]))
	}
	if len(refs) == 0 {
		return nil, nil
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("read escalations: %w", err)
	}
	out := make([]Ladder, len(refs))
	for i, r := range refs {
		m, err := redis.StringMap(conn.Receive())
		if err != nil {
			return nil, fmt.Errorf("read escalation %s of %s: %w", r[0], r[1], err)
		}
		out[i] = DecodeLadder(r[0], r[1], m)
	}
	return out, nil
}

// LaddersOf reads every ladder of a check, sorted by policy id.
func LaddersOf(conn redis.Conn, keys schema.Keys, checkID string) ([]Ladder, error) {
	ids, err := redis.Strings(conn.Do("SMEMBERS", keys.CheckEscalations(checkID)))
	if err != nil {
		return nil, fmt.Errorf("read escalations of %s: %w", checkID, err)
	}
	sort.Strings(ids)
	refs := make([][2]string, len(ids))
	for i, id := range ids {
		refs[i] = [2]string{id, checkID}
	}
	return ReadLadders(conn, keys, refs)
}

// EscalationsInProgress reads the ladders in progress, soonest next step first (those with no
// step to come last), at most limit of them (0: all), and how many there are.
func EscalationsInProgress(conn redis.Conn, keys schema.Keys, limit int) ([]Ladder, int64, error) {
	total, err := redis.Int64(conn.Do("ZCARD", keys.EscalationsDue()))
	if err != nil {
		return nil, 0, fmt.Errorf("read escalations due: %w", err)
	}
	members, err := redis.Strings(conn.Do("ZRANGE", keys.EscalationsDue(), 0, limit-1))
	if err != nil {
		return nil, 0, fmt.Errorf("read escalations due: %w", err)
	}
	refs := make([][2]string, 0, len(members))
	for _, m := range members {
		if p, c, ok := schema.ParseEscalationMember(m); ok {
			refs = append(refs, [2]string{p, c})
		}
	}
	ls, err := ReadLadders(conn, keys, refs)
	if err != nil {
		return nil, 0, err
	}
	out := ls[:0]
	for _, l := range ls {
		if l.Active() {
			out = append(out, l)
		}
	}
	return out, total, nil
}

// NextEscalationDue is the earliest due time of a step, found false when none is due at a
// finite time.
func NextEscalationDue(conn redis.Conn, keys schema.Keys) (at int64, found bool, err error) {
	vals, err := redis.Strings(conn.Do("ZRANGEBYSCORE", keys.EscalationsDue(), "-inf", "(+inf", "WITHSCORES", "LIMIT", 0, 1))
	if err != nil {
		return 0, false, fmt.Errorf("read escalations due: %w", err)
	}
	if len(vals) < 2 {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(vals[1], 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false, err
	}
	return int64(f), true, nil
}

// EscalationsDueAt lists up to limit due set members due at or before at, soonest first.
func EscalationsDueAt(conn redis.Conn, keys schema.Keys, at int64, limit int) ([]string, error) {
	out, err := redis.Strings(conn.Do("ZRANGEBYSCORE", keys.EscalationsDue(), "-inf", at, "LIMIT", 0, limit))
	if err != nil {
		return nil, fmt.Errorf("read escalations due: %w", err)
	}
	return out, nil
}

// LadderChanges are the hash fields of next that differ from prev (the ladder as read), with
// revision always: a tick rewrites only what moved.
func LadderChanges(prev, next Ladder) []any {
	out := make([]any, 0, 8)
	out = append(out, "revision", next.Revision)
	if next.Fired != prev.Fired {
		out = append(out, "fired", next.Fired)
	}
	if next.Repeats != prev.Repeats {
		out = append(out, "repeats", next.Repeats)
	}
	if next.NextDue != prev.NextDue {
		out = append(out, "next_due", next.NextDue)
	}
	if !slices.Equal(next.Alerted, prev.Alerted) {
		out = append(out, "alerted", alertedField(next.Alerted))
	}
	if next.StoppedAt != prev.StoppedAt {
		out = append(out, "stopped_at", next.StoppedAt)
	}
	if next.StoppedReason != prev.StoppedReason {
		out = append(out, "stopped_reason", next.StoppedReason)
	}
	if next.Told != prev.Told {
		out = append(out, "told", toldField(next.Told))
	}
	return out
}

// TickRead is what an escalation tick reads about the ladders due, in one round trip.
type TickRead struct {
	// Policies holds the stored JSON of the policies named by the ladders (absent: removed).
	Policies map[string]string
	Ladders  []Ladder
	// Per ladder, of its check: whether it is listed in current_checks:ENTITY, its state, and
	// whether it has any maintenance window stored (nearly none has: only those need a facts
	// read to learn whether one covers now).
	Enabled []bool
	State   []string
	Windows []bool
}

// ReadTick reads, in one round trip, the ladders at refs (policy id, check id), the policies
// they name, and their checks' enabled flag, state and whether they have maintenance windows.
func ReadTick(conn redis.Conn, keys schema.Keys, refs [][2]string) (TickRead, error) {
	var out TickRead
	if len(refs) == 0 {
		return out, nil
	}
	var ids []any
	for _, r := range refs {
		if !slices.Contains(ids, any(r[0])) {
			ids = append(ids, r[0])
		}
	}
	conn.Send("HMGET", append([]any{keys.EscalationPolicies()}, ids...)...)
	for _, r := range refs {
		entity, check, _ := schema.SplitCheckID(r[1])
		conn.Send("HGETALL", keys.EscalationLadder(r[0], r[1]))
		conn.Send("ZSCORE", keys.CurrentChecks(entity), check)
		conn.Send("HGET", keys.Check(r[1]), "state")
		conn.Send("EXISTS", keys.Maintenances(schema.Scheduled, r[1]), keys.SortedMaintenanceTimestamps(schema.Unscheduled, r[1]))
	}
	if err := conn.Flush(); err != nil {
		return out, fmt.Errorf("read escalations due: %w", err)
	}
	vals, err := redis.Values(conn.Receive())
	if err != nil {
		return out, fmt.Errorf("read escalation policies: %w", err)
	}
	out.Policies = make(map[string]string, len(ids))
	for i, v := range vals {
		if v != nil {
			s, _ := redis.String(v, nil)
			out.Policies[ids[i].(string)] = s
		}
	}
	out.Ladders, out.Enabled = make([]Ladder, len(refs)), make([]bool, len(refs))
	out.State, out.Windows = make([]string, len(refs)), make([]bool, len(refs))
	for i, r := range refs {
		m, err := redis.StringMap(conn.Receive())
		if err != nil {
			return out, fmt.Errorf("read escalation %s of %s: %w", r[0], r[1], err)
		}
		out.Ladders[i] = DecodeLadder(r[0], r[1], m)
		score, err := conn.Receive()
		if err != nil {
			return out, fmt.Errorf("read current checks of %s: %w", r[1], err)
		}
		out.Enabled[i] = score != nil
		state, err := conn.Receive()
		if err != nil {
			return out, fmt.Errorf("read state of %s: %w", r[1], err)
		}
		out.State[i], _ = redis.String(state, nil)
		windows, err := redis.Int(conn.Receive())
		if err != nil {
			return out, fmt.Errorf("read maintenance of %s: %w", r[1], err)
		}
		out.Windows[i] = windows > 0
	}
	return out, nil
}
