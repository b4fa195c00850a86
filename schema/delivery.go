package schema

// The delivery log (added by us) records each alert's fate: the notifier writes `queued` when it
// pushes the alert onto its medium's list, the gateway runner writes each attempt's outcome. It
// is keyed by the alert's id, indexed by time, check and contact, and trimmed by retention.

// Delivery is one alert's record, the hash `delivery:ALERT_ID`. The address is left out: it may
// be a secret (a PagerDuty routing key, a Slack webhook URL).
func (k Keys) Delivery(alertID string) string { return k.key("delivery", alertID) }

// Deliveries is the sorted set of every recorded alert id, scored by the unix time it was queued
// (retention forgets the oldest from it).
func (k Keys) Deliveries() string { return k.key("deliveries") }

// CheckDeliveries indexes a check's alert ids by queue time; id is ENTITY:CHECK.
func (k Keys) CheckDeliveries(id string) string { return k.key("deliveries_by_check", id) }

// ContactDeliveries indexes a contact's alert ids by queue time.
func (k Keys) ContactDeliveries(contactID string) string {
	return k.key("deliveries_by_contact", contactID)
}

// Delivery statuses: queued until a gateway took the alert; retrying after a transient failure;
// delivered once the provider accepted it; failed when dead-lettered.
const (
	DeliveryQueued    = "queued"
	DeliveryRetrying  = "retrying"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Fields of a `delivery:ALERT_ID` hash.
const (
	DeliveryFieldID        = "id"
	DeliveryFieldCheck     = "check"
	DeliveryFieldContact   = "contact"
	DeliveryFieldMedium    = "medium"
	DeliveryFieldType      = "type"
	DeliveryFieldState     = "state"
	DeliveryFieldQueuedAt  = "queued_at"
	DeliveryFieldStatus    = "status"
	DeliveryFieldUpdatedAt = "updated_at"
	DeliveryFieldAttempts  = "attempts"
	DeliveryFieldMessageID = "message_id"
	DeliveryFieldError     = "error"
	// DeliveryFieldEscalation is set on an escalation step's alert: "POLICY step N of M".
	DeliveryFieldEscalation = "escalation"
)

// DeliveryRecord is one alert's fate as read back (`flapjack log`, `GET /deliveries`, the web
// check page, `flapjack explain`). Attempts counts the tries a gateway made, across restarts;
// retried is Attempts-1.
type DeliveryRecord struct {
	ID        string `json:"id"`
	Check     string `json:"check"`
	Contact   string `json:"contact"`
	Medium    string `json:"medium"`
	Type      string `json:"type"`
	State     string `json:"state"`
	QueuedAt  int64  `json:"queued_at"`
	Status    string `json:"status"`
	UpdatedAt int64  `json:"updated_at"`
	Attempts  int    `json:"attempts"`
	MessageID string `json:"message_id,omitempty"`
	Error     string `json:"error,omitempty"`
	// Escalation names the escalation step the alert was ("POLICY step N of M"), if any.
	Escalation string `json:"escalation,omitempty"`
}

// Retried is how many times the alert was tried again after a failure.
func (d DeliveryRecord) Retried() int { return max(d.Attempts-1, 0) }
