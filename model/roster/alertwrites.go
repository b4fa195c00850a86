package roster

import (
	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The notifier decides whom to alert on its reads of contacts' notification state; what its
// decisions change there are the values below, which WriteAlertChanges turns into the writes of
// the decision's record: contact_alert_state (the notifier's suppression end times, and the
// revision guarding them), the documented suppression keys each of its fields mirrors
// (drop_alerts_for_contact, drop_rollup_alerts_for_contact), the alerting sets
// (contact_alerting_checks), the media queues, and whom a check's on-call schedules alerted of
// its problem (schedule_alerted).

// AlertChanges are a notifier decision's changes to its contacts' notification state, and the
// alerts it queues.
type AlertChanges struct {
	// Read are the contacts the decision read the notification state of: the changes apply only
	// while each contact_alert_state still has the revision read.
	Read []StateRead
	// Alerting are changes of alerting sets.
	Alerting []AlertingChange
	// Started are suppressions that start (an interval, a rollup throttle), each with its end.
	Started []Suppression
	// Ended are suppressions that end (reset, cleared, or expired).
	Ended []Suppression
	// Deliveries are alerts for the media queues, in order.
	Deliveries []Delivery
}

// StateRead is a contact whose contact_alert_state was read at Revision.
type StateRead struct {
	ContactID string
	Revision  int64
}

// AlertingChange adds a check to a contact medium's alerting set (Add, at At), and removes
// checks from it (Remove).
type AlertingChange struct {
	ContactID, Medium string
	Add               string // "" for none
	At                int64
	Remove            []string
}

// Suppression is one of a contact's suppressions, named by its contact_alert_state field
// (schema.DropField for an interval, schema.RollupDropField for a rollup throttle). A started
// one ends at Until, its documented key living TTL seconds.
type Suppression struct {
	ContactID, Field string
	Until, TTL       int64
}

// Delivery is an alert for the media queue named Queue (the list's name, without prefix):
// Payload is Alert's JSON, queued at At (unix seconds), when the delivery log records it.
type Delivery struct {
	Queue   string
	Payload []byte
	Alert   schema.Alert
	At      int64
}

// WriteAlertChanges adds the writes of c, and the guards they need, to r.
func WriteAlertChanges(r *model.Record, keys schema.Keys, c *AlertChanges) {
	for _, s := range c.Read {
		r.Guards = append(r.Guards, model.Guard{Key: keys.ContactAlertState(s.ContactID), Revision: s.Revision})
	}
	ops := &r.Ops
	for _, a := range c.Alerting {
		set := keys.AlertingChecks(a.ContactID, a.Medium)
		if a.Add != "" {
			ops.ZAdd(set, a.At, a.Add)
		}
		if len(a.Remove) > 0 {
			members := make([]any, len(a.Remove))
			for i, id := range a.Remove {
				members[i] = id
			}
			ops.ZRem(set, members...)
		}
	}
	for _, s := range c.Started {
		if key := SuppressionKey(keys, s.ContactID, s.Field); key != "" {
			ops.SetEx(key, s.TTL, s.TTL)
		}
		ops.HSet(keys.ContactAlertState(s.ContactID), s.Field, s.Until)
	}
	writeEnded(ops, keys, c.Ended)
	for _, d := range c.Deliveries {
		ops.RPush(keys.Queue(d.Queue), d.Payload)
		model.QueueDelivery(ops, keys, d.Alert, d.At)
	}
}

// writeEnded removes ended suppressions, each contact's fields in one HDEL after their keys.
func writeEnded(ops *model.Ops, keys schema.Keys, ended []Suppression) {
	for start := 0; start < len(ended); {
		id := ended[start].ContactID
		end := start
		var fields []any
		for ; end < len(ended) && ended[end].ContactID == id; end++ {
			if key := SuppressionKey(keys, id, ended[end].Field); key != "" {
				ops.Del(key)
			}
			fields = append(fields, ended[end].Field)
		}
		ops.HDel(keys.ContactAlertState(id), fields...)
		start = end
	}
}

// SuppressionKey is the documented key matching a contact_alert_state field ("" for a field
// that mirrors none).
func SuppressionKey(keys schema.Keys, contactID, field string) string {
	if medium, checkID, state, ok := schema.ParseDropField(field); ok {
		return keys.DropAlerts(contactID, medium, checkID, state)
	}
	if medium, ok := schema.ParseRollupDropField(field); ok {
		return keys.DropRollupAlerts(contactID, medium)
	}
	return ""
}

// AlertingSet names a contact medium's alerting set (contact_alerting_checks).
type AlertingSet struct{ ContactID, Medium string }

// ReadAlertingSets reads each distinct contact's contact_alert_state revision, then the sets'
// members, in one round trip; sets are sorted by contact. A read that failed is returned after
// the others were received.
func ReadAlertingSets(conn redis.Conn, keys schema.Keys, sets []AlertingSet) (map[string]int64, [][]string, error) {
	var contacts []string
	for i, s := range sets {
		if i == 0 || sets[i-1].ContactID != s.ContactID {
			contacts = append(contacts, s.ContactID)
			conn.Send("HGET", keys.ContactAlertState(s.ContactID), "revision")
		}
	}
	for _, s := range sets {
		conn.Send("ZRANGE", keys.AlertingChecks(s.ContactID, s.Medium), 0, -1)
	}
	if err := conn.Flush(); err != nil {
		return nil, nil, err
	}
	revisions := make(map[string]int64, len(contacts))
	var failed error
	for _, c := range contacts {
		rev, err := redis.Int64(conn.Receive())
		if err != nil && err != redis.ErrNil && failed == nil {
			failed = err
		}
		revisions[c] = rev
	}
	members := make([][]string, len(sets))
	for i := range sets {
		ms, err := redis.Strings(conn.Receive())
		if err != nil && failed == nil {
			failed = err
		}
		members[i] = ms
	}
	return revisions, members, failed
}

// SetCleaning removes checks from an alerting set, decided on the contact's revision read with it.
type SetCleaning struct {
	Set      AlertingSet
	Revision int64
	Remove   []string
}

// CleaningRecords are the records of cleanings (sorted by contact), one per contact, and each
// record's contact. Each is guarded by the revision read without moving it (Keep): a cleaning
// gives way to a notifier that added to the set meanwhile, and never makes one conflict.
func CleaningRecords(keys schema.Keys, cleanings []SetCleaning) ([]model.Record, []string) {
	var records []model.Record
	var contacts []string
	for _, c := range cleanings {
		id := c.Set.ContactID
		if len(contacts) == 0 || contacts[len(contacts)-1] != id {
			contacts = append(contacts, id)
			records = append(records, model.Record{Guards: []model.Guard{
				{Key: keys.ContactAlertState(id), Revision: c.Revision, Keep: true}}})
		}
		gone := make([]any, len(c.Remove))
		for i, m := range c.Remove {
			gone[i] = m
		}
		records[len(records)-1].Ops.ZRem(keys.AlertingChecks(id, c.Set.Medium), gone...)
	}
	return records, contacts
}

// ScheduleReach is a contact that a problem's on-call schedule reached.
type ScheduleReach struct{ ContactID, Schedule string }

// WriteScheduleAlerted adds to r the writes of a check's schedule_alerted hash: a recovery
// clears it (clear), a problem records the contacts its schedules reached, so the recovery
// finds them whoever is on call by then.
func WriteScheduleAlerted(r *model.Record, keys schema.Keys, checkID string, clear bool, reached []ScheduleReach) {
	key := keys.ScheduleAlerted(checkID)
	if clear {
		r.Ops.Del(key)
		return
	}
	if len(reached) == 0 {
		return
	}
	fields := make([]any, 0, 2*len(reached))
	for _, c := range reached {
		fields = append(fields, c.ContactID, c.Schedule)
	}
	r.Ops.HSet(key, fields...)
}
