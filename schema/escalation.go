package schema

import "strings"

// Escalation keys (added by us; no Flapjack 1.x key changes meaning). A ladder is one policy's
// escalation of one check: it starts when a problem notification of a check matched by the
// policy is routed, and its steps fire from the due set.

// EscalationPolicies is the hash of every escalation policy: field = policy id, value = the
// policy's JSON (roster.EscalationPolicy).
func (k Keys) EscalationPolicies() string { return k.key("escalation_policies") }

// EscalationLadder is the hash of one policy's ladder for one check,
// escalation:POLICY:ENTITY:CHECK: revision (guards concurrent notifiers), started_at, fired
// (steps fired), repeats, next_due, alerted (JSON list of contact ids), notification (the
// latest problem notification), stopped_at, stopped_reason, told (1 once those alerted heard of
// the stop). See roster.Ladder.
func (k Keys) EscalationLadder(policyID, checkID string) string {
	return k.key("escalation", policyID, checkID)
}

// EscalationsDue is the sorted set of ladders waiting for their next step: member
// EscalationMember(policy, check), score = the unix time the step is due. A tick reads only
// the members due, so its cost follows the escalations due, not the checks.
func (k Keys) EscalationsDue() string { return k.key("escalations_due") }

// EscalationsStopped is the sorted set of stopped ladders: member EscalationMember(policy,
// check), score = the unix time after which retention may forget the ladder (its stop plus the
// policy's restart window; a problem before then resumes it). Retention reads only the members
// whose time has come, so its cost follows the ladders it removes.
func (k Keys) EscalationsStopped() string { return k.key("escalations_stopped") }

// CheckEscalations is the set of policy ids that have a ladder for a check
// (check_escalations:ENTITY:CHECK), so a recovery finds the ladders to stop without reading
// every policy.
func (k Keys) CheckEscalations(checkID string) string { return k.key("check_escalations", checkID) }

// EscalationMember is the due set's member of a ladder: "POLICY:ENTITY:CHECK". Policy ids
// never contain ':' (roster.ValidateEscalationPolicy), so the first ':' splits it.
func EscalationMember(policyID, checkID string) string { return policyID + ":" + checkID }

// ParseEscalationMember splits a due set member into policy id and check id.
func ParseEscalationMember(m string) (policyID, checkID string, ok bool) {
	policyID, checkID, ok = strings.Cut(m, ":")
	if !ok || policyID == "" {
		return "", "", false
	}
	if _, _, valid := SplitCheckID(checkID); !valid {
		return "", "", false
	}
	return policyID, checkID, true
}

// AlertEscalation is the alert field "escalation" of an alert sent by an escalation step
// (absent on every other alert; gateways that do not know it ignore it).
type AlertEscalation struct {
	PolicyID string `json:"policy_id"`
	Step     int    `json:"step"`  // from 1
	Steps    int    `json:"steps"` // in the policy
	Repeat   int    `json:"repeat,omitempty"`
	// UnacknowledgedFor is how long since the first problem alert, in seconds.
	UnacknowledgedFor int64 `json:"unacknowledged_for"`
}
