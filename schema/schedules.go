package schema

// Schedule keys (added by us; no Flapjack 1.x key changes meaning). A schedule is a routing
// target: it resolves, at a notification's time, to the contacts on call (package oncall,
// docs/schedules.md).

// Schedules is the hash of every on-call schedule: field = schedule id, value = the schedule's
// JSON in the import format (oncall.Schedule).
func (k Keys) Schedules() string { return k.key("schedules") }

// EntitySchedules is the set of schedule ids an entity routes to (entity_schedules:ENTITY_ID),
// beside its contacts_for:ENTITY_ID; written by `flapjack import entities` (field schedules).
func (k Keys) EntitySchedules(entityID string) string { return k.key("entity_schedules", entityID) }

// ScheduleAlerted is the hash of the contacts a check's schedules reached for its current
// failure (schedule_alerted:ENTITY:CHECK): field = contact id, value = the schedule id. A
// recovery or acknowledgement goes to them as well as to whoever is on call then; the recovery
// deletes it.
func (k Keys) ScheduleAlerted(checkID string) string { return k.key("schedule_alerted", checkID) }
