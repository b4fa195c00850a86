// Package schema owns the Redis contract: the name of every key flapjack reads or writes (the
// documented Flapjack 1.x layout plus the keys we add, listed in the README), and the JSON of
// events, notifications and alerts. No other package builds a key name.
package schema

import (
	"strconv"
	"strings"
	"time"
)

// Keys builds key names under an optional prefix (redis.key_prefix; empty = Flapjack-compatible).
// A family's builder called with "" gives the family's prefix (Contact("") is "contact:"): Lua
// scripts append ids they discover to it, so key names still come only from here.
type Keys struct {
	prefix string
}

// NewKeys returns the key builder for prefix.
func NewKeys(prefix string) Keys { return Keys{prefix: prefix} }

// Prefix is the configured key prefix.
func (k Keys) Prefix() string { return k.prefix }

func (k Keys) key(parts ...string) string {
	var b strings.Builder
	n := len(k.prefix)
	for _, p := range parts {
		n += len(p) + 1
	}
	b.Grow(n)
	b.WriteString(k.prefix)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(p)
	}
	return b.String()
}

func ts(t int64) string { return strconv.FormatInt(t, 10) }

// hourBucket formats the UTC hour used by the archive and rejected lists (YYYYMMDDHH).
func hourBucket(t time.Time) string { return t.UTC().Format("2006010215") }

// ---- queues ----

// DefaultEventsQueue is the name of the events list when executive.queue does not name another.
const DefaultEventsQueue = "events"

// DefaultMediumQueue is a medium's list unless notifier.<medium>_queue names another.
func DefaultMediumQueue(medium string) string { return medium + "_notifications" }

// Events is the default events list (DefaultEventsQueue). Code that reads or writes the list
// the executive actually takes events from uses Queue(executive.queue) instead.
func (k Keys) Events() string { return k.key(DefaultEventsQueue) }

// Notifications is the list the executive pushes notifications onto.
func (k Keys) Notifications() string { return k.key("notifications") }

// Queue is an arbitrary configured queue name (e.g. notifier.jabber_queue) under the prefix.
func (k Keys) Queue(name string) string { return k.key(name) }

// FailedQueue is where a gateway dead-letters alerts it could not deliver (docs/decisions.md D13).
func (k Keys) FailedQueue(queue string) string { return k.key(queue + "_failed") }

// EventsArchive is the hourly archive list of processed events.
func (k Keys) EventsArchive(t time.Time) string { return k.key("events_archive", hourBucket(t)) }

// KnownEventsArchiveKeys is the set indexing the archive lists.
func (k Keys) KnownEventsArchiveKeys() string { return k.key("known_events_archive_keys") }

// EventsRejected is the hourly list of raw rejected events.
func (k Keys) EventsRejected(t time.Time) string { return k.key("events_rejected", hourBucket(t)) }

// EventsRejectedReasons parallels EventsRejected: one JSON record {time, reasons, event} per
// rejected event, pushed in the same order (added by us; the documented list holds raw payloads).
func (k Keys) EventsRejectedReasons(t time.Time) string {
	return k.key("events_rejected_reasons", hourBucket(t))
}

// EventsSequence is a global counter of claimed events; it orders events taken by different
// executives in the same second (added by us).
func (k Keys) EventsSequence() string { return k.key("events_sequence") }

// EventsPerMinute is the windowed event counter for `flapjack status` (added by us; expires).
func (k Keys) EventsPerMinute(t time.Time) string {
	return k.key("stats", "events", t.UTC().Format("200601021504"))
}

// ---- counters and instances ----

// EventCounters is the global counter hash (all/ok/failure/action/invalid).
func (k Keys) EventCounters() string { return k.key("event_counters") }

// InstanceEventCounters is one executive instance's counter hash.
func (k Keys) InstanceEventCounters(instance string) string {
	return k.key("event_counters", instance)
}

// Instance is a running stage's record, e.g. executive_instance:HOST:PID (documented for the
// executive; notifier_instance, jabber_gateway_instance ... follow the same shape).
func (k Keys) Instance(stage, instance string) string { return k.key(stage+"_instance", instance) }

// Instances is the set of instance ids of a stage, so dead ones are found without SCAN.
func (k Keys) Instances(stage string) string { return k.key(stage + "_instances") }

// Processing is the list holding what one instance of a stage has claimed but not finished.
func (k Keys) Processing(stage, instance string) string {
	return k.key(stage+"_processing", instance)
}

// ---- per check (id = ENTITY:CHECK) ----

// Check is the current-state hash check:ENTITY:CHECK.
func (k Keys) Check(id string) string { return k.key("check", id) }

// States is the list of state-change timestamps.
func (k Keys) States(id string) string { return k.key(id, "states") }

// StateHistoryPrefix is "ID:" under the prefix; a per-timestamp key is this plus "TS:state" etc.
// Lua scripts that discover timestamps in Redis receive it from here.
func (k Keys) StateHistoryPrefix(id string) string { return k.key(id) + ":" }

// StateAt is ID:TS:state.
func (k Keys) StateAt(id string, t int64) string { return k.key(id, ts(t), stateAt) }

// SummaryAt is ID:TS:summary.
func (k Keys) SummaryAt(id string, t int64) string { return k.key(id, ts(t), summaryAt) }

const stateAt, summaryAt = "state", "summary"

// StateAtSuffix and SummaryAtSuffix end the per-timestamp keys: StateAt(id, TS) is
// StateHistoryPrefix(id) + TS + StateAtSuffix. Scripts that find timestamps in Redis append them.
const (
	StateAtSuffix   = ":" + stateAt
	SummaryAtSuffix = ":" + summaryAt
)

// DetailsAt is ID:TS:details.
func (k Keys) DetailsAt(id string, t int64) string { return k.key(id, ts(t), "details") }

// CountAt is ID:TS:count.
func (k Keys) CountAt(id string, t int64) string { return k.key(id, ts(t), "count") }

// CheckLatencyAt is ID:TS:check_latency.
func (k Keys) CheckLatencyAt(id string, t int64) string { return k.key(id, ts(t), "check_latency") }

// SortedStateTimestamps mirrors States as a sorted set.
func (k Keys) SortedStateTimestamps(id string) string {
	return k.key(id, SortedStateTimestampsSuffix)
}

// Actions is the hash TIMESTAMP -> action state.
func (k Keys) Actions(id string) string { return k.key(id, "actions") }

// FailedChecks is the sorted set of failing checks.
func (k Keys) FailedChecks() string { return k.key("failed_checks") }

// CurrentChecks is current_checks:ENTITY (removal = disabled). CurrentChecks("") is the
// family's prefix.
func (k Keys) CurrentChecks(entity string) string { return k.key("current_checks", entity) }

// CurrentEntities is the sorted set of entities with current checks.
func (k Keys) CurrentEntities() string { return k.key("current_entities") }

// AllChecks is the sorted set of every check ever seen.
func (k Keys) AllChecks() string { return k.key("all_checks") }

// AllChecksFor is all_checks:ENTITY.
func (k Keys) AllChecksFor(entity string) string { return k.key("all_checks", entity) }

// ChecksByHash maps ack hash -> check id.
func (k Keys) ChecksByHash() string { return k.key("checks_by_hash") }

// CheckHashesByID maps check id -> ack hash.
func (k Keys) CheckHashesByID() string { return k.key("check_hashes_by_id") }

// CheckTag is the set of checks carrying a tag (check_tag:TAG).
func (k Keys) CheckTag(tag string) string { return k.key("check_tag", tag) }

// KnownCheckTags is known_tags:check_tag.
func (k Keys) KnownCheckTags() string { return k.key("known_tags", "check_tag") }

// KnownEntityTags is known_tags:entity_tag.
func (k Keys) KnownEntityTags() string { return k.key("known_tags", "entity_tag") }

// Maintenance kinds.
const (
	Scheduled   = "scheduled"
	Unscheduled = "unscheduled"
)

// Per-check keys are "ID:" + a suffix. Scripts that build them from StateHistoryPrefix take the
// suffixes from these functions, so the names still come from this file alone.

// CurrentMaintenanceSuffix names ID:<kind>_maintenance.
func CurrentMaintenanceSuffix(kind string) string { return kind + "_maintenance" }

// MaintenancesSuffix names ID:<kind>_maintenances.
func MaintenancesSuffix(kind string) string { return kind + "_maintenances" }

// SortedMaintenanceTimestampsSuffix names ID:sorted_<kind>_maintenance_timestamps.
func SortedMaintenanceTimestampsSuffix(kind string) string {
	return "sorted_" + kind + "_maintenance_timestamps"
}

// LastNotificationSuffix names ID:last_<kind>_notification.
func LastNotificationSuffix(kind string) string { return "last_" + kind + "_notification" }

// SortedStateTimestampsSuffix names ID:sorted_state_timestamps.
const SortedStateTimestampsSuffix = "sorted_state_timestamps"

// CurrentMaintenance is ID:scheduled_maintenance / ID:unscheduled_maintenance (value: start).
func (k Keys) CurrentMaintenance(kind, id string) string {
	return k.key(id, CurrentMaintenanceSuffix(kind))
}

// Maintenances is the zset start -> duration of every window of a kind.
func (k Keys) Maintenances(kind, id string) string { return k.key(id, MaintenancesSuffix(kind)) }

// SortedMaintenanceTimestamps is the zset start -> start mirror.
func (k Keys) SortedMaintenanceTimestamps(kind, id string) string {
	return k.key(id, SortedMaintenanceTimestampsSuffix(kind))
}

// MaintenanceSummary is ID:START:<kind>_maintenance:summary.
func (k Keys) MaintenanceSummary(kind, id string, start int64) string {
	return k.key(id, ts(start), kind+"_maintenance", "summary")
}

// LastNotification is ID:last_<kind>_notification.
func (k Keys) LastNotification(id, kind string) string {
	return k.key(id, LastNotificationSuffix(kind))
}

// NotificationHistory is ID:<kind>_notifications.
func (k Keys) NotificationHistory(id, kind string) string {
	return k.key(id, kind+"_notifications")
}

// ---- entities ----

// EntityIDsByName is Flapjack 1.6's all_entity_ids_by_name hash.
func (k Keys) EntityIDsByName() string { return k.key("all_entity_ids_by_name") }

// EntityNamesByID is Flapjack 1.6's all_entity_names_by_id hash.
func (k Keys) EntityNamesByID() string { return k.key("all_entity_names_by_id") }

// Entity is entity:ENTITY_ID {name}.
func (k Keys) Entity(entityID string) string { return k.key("entity", entityID) }

// EntityID is entity_id:ENTITY -> ENTITY_ID. EntityID("") is the family's prefix.
func (k Keys) EntityID(name string) string { return k.key("entity_id", name) }

// EntityTag is entity_tag:TAG (set of entity ids).
func (k Keys) EntityTag(tag string) string { return k.key("entity_tag", tag) }

// AllContactsID is the pseudo entity id whose contacts are interested in everything.
const AllContactsID = "ALL"

// ContactsFor is contacts_for:ENTITY_ID (or contacts_for:ALL).
func (k Keys) ContactsFor(entityID string) string { return k.key("contacts_for", entityID) }

// ContactsForCheck is contacts_for:ENTITY_ID:CHECK.
func (k Keys) ContactsForCheck(entityID, check string) string {
	return k.key("contacts_for", entityID, check)
}

// ---- contacts and rules ----

// Contact is contact:CONTACT_ID.
func (k Keys) Contact(id string) string { return k.key("contact", id) }

// AllContacts is our index of contact ids (kept by every writer of contacts, repaired from the
// contact:ID hashes by roster.RepairContactIndex). Only an addition: a contact is a contact:ID
// hash, as in Flapjack 1.6, which keeps no index.
func (k Keys) AllContacts() string { return k.key("all_contacts") }

// ContactMedia is contact_media:CONTACT_ID.
func (k Keys) ContactMedia(id string) string { return k.key("contact_media", id) }

// ContactTimezone is contact_tz:CONTACT_ID.
func (k Keys) ContactTimezone(id string) string { return k.key("contact_tz", id) }

// ContactMediaIntervals is contact_media_intervals:CONTACT_ID.
func (k Keys) ContactMediaIntervals(id string) string { return k.key("contact_media_intervals", id) }

// ContactRollupThresholds is contact_media_rollup_thresholds:CONTACT_ID.
func (k Keys) ContactRollupThresholds(id string) string {
	return k.key("contact_media_rollup_thresholds", id)
}

// ContactPagerduty is contact_pagerduty:CONTACT_ID.
func (k Keys) ContactPagerduty(id string) string { return k.key("contact_pagerduty", id) }

// ContactTag is contact_tag:TAG.
func (k Keys) ContactTag(tag string) string { return k.key("contact_tag", tag) }

// ContactRules is contact_notification_rules:CONTACT_ID.
func (k Keys) ContactRules(id string) string { return k.key("contact_notification_rules", id) }

// Rule is notification_rule:RULE_ID.
func (k Keys) Rule(id string) string { return k.key("notification_rule", id) }

// AlertingChecks is contact_alerting_checks:CONTACT_ID:media:MEDIA.
func (k Keys) AlertingChecks(contactID, medium string) string {
	return k.key("contact_alerting_checks", contactID, "media", medium)
}

// DropAlerts is drop_alerts_for_contact:CONTACT_ID[:MEDIA[:ENTITY:CHECK[:STATE]]]; pass the parts
// that apply, in that order.
func (k Keys) DropAlerts(contactID string, more ...string) string {
	return k.key(append([]string{"drop_alerts_for_contact", contactID}, more...)...)
}

// DropRollupAlerts is drop_rollup_alerts_for_contact:CONTACT_ID:MEDIA.
func (k Keys) DropRollupAlerts(contactID, medium string) string {
	return k.key("drop_rollup_alerts_for_contact", contactID, medium)
}

// PagerdutyAcksLock is the lock that keeps one PagerDuty acknowledgement poller running.
func (k Keys) PagerdutyAcksLock() string { return k.key("sem_pagerduty_acks_running") }

// PagerdutyAcksQueued is a hash (added by us): ENTITY:CHECK -> the unix time in milliseconds (by
// the injected clock) at which a PagerDuty acknowledgement poller queued an acknowledgement
// event for the check. Pollers of every instance read it, so none queues a second one while the
// first waits for the executive. Its expiry only collects garbage: the stored times decide.
func (k Keys) PagerdutyAcksQueued() string { return k.key("pagerduty_acks_queued") }

// ContactAlertState is the notifier's own per-contact hash (added by us): "revision" guards
// concurrent notifiers, and the unix time at which each suppression ends — fields
// DropField(...) and RollupDropField(...) — lets decisions follow the injected clock (docs/decisions.md D1)
// while the documented drop_alerts_for_contact:... keys are still written for other tools.
func (k Keys) ContactAlertState(contactID string) string {
	return k.key("contact_alert_state", contactID)
}

// DropField is the ContactAlertState field holding when the interval of one check/state on one
// medium ends.
func DropField(medium, checkID, state string) string {
	return "drop:" + medium + ":" + checkID + ":" + state
}

// RollupDropField is the ContactAlertState field holding when a medium's rollup throttle ends.
func RollupDropField(medium string) string { return "rollup:" + medium }

// ParseDropField splits a DropField back into medium, check id and state.
func ParseDropField(field string) (medium, checkID, state string, ok bool) {
	rest, found := strings.CutPrefix(field, "drop:")
	if !found {
		return "", "", "", false
	}
	medium, rest, found = strings.Cut(rest, ":")
	i := strings.LastIndexByte(rest, ':')
	if !found || i <= 0 {
		return "", "", "", false
	}
	return medium, rest[:i], rest[i+1:], true
}

// ParseRollupDropField returns the medium of a RollupDropField.
func ParseRollupDropField(field string) (string, bool) {
	return strings.CutPrefix(field, "rollup:")
}

// RetentionLock lets one retention sweep run at a time across processes (added by us).
func (k Keys) RetentionLock() string { return k.key("retention_lock") }

// ---- staleness (docs/decisions.md D19, added by us) ----

// StaleDeadlines is the sorted set of checks with a ttl: member ENTITY:CHECK, score the unix
// time at which the check is stale unless a result arrives first.
func (k Keys) StaleDeadlines() string { return k.key("stale_deadlines") }

// StaleChecks is the hash ENTITY:CHECK -> StaleEntry JSON: the ttl a check's latest result set
// and when that result was applied.
func (k Keys) StaleChecks() string { return k.key("stale_checks") }
