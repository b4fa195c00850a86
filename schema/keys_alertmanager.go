package schema

// AlertmanagerLabels is the hash where the Alertmanager and Prometheus intake keeps the labels of
// the latest alert of each check it fed: field ENTITY:CHECK, value an AlertLabels as JSON.
// Written in the same transaction as the events, so a check acknowledged in flapjack can be
// silenced in Alertmanager by exactly the labels its alert carried.
func (k Keys) AlertmanagerLabels() string { return k.key("alertmanager_labels") }

// AlertmanagerSilences is the hash of the acknowledgements mirrored into Alertmanager as
// silences: field ENTITY:CHECK, value a MirroredSilence as JSON, the acknowledgement last queued
// as a silence. A field is removed when its silence has been queued for expiry or has run out.
func (k Keys) AlertmanagerSilences() string { return k.key("alertmanager_silences") }

// AlertmanagerSilenceQueue is the list the silence gateway drains (its dead letters go to
// FailedQueue of it).
const AlertmanagerSilenceQueue = "alertmanager_silences_queue"

// Ways an alert came in, as AlertLabels.Via records them.
const (
	ViaAlertmanager = "alertmanager" // POST /integrations/alertmanager
	ViaPrometheus   = "prometheus"   // POST /api/v2/alerts
)

// AlertLabels is the value of an AlertmanagerLabels field: the labels of the check's latest
// alert and the way it came in.
type AlertLabels struct {
	Via    string            `json:"via"`
	Labels map[string]string `json:"labels"`
}

// MirroredSilence is the value of an AlertmanagerSilences field: the acknowledgement's window
// (unix seconds) and the labels (and their way in) its silence was queued with, so the silence
// is found again to expire it even after the check's labels changed.
type MirroredSilence struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	AlertLabels
}
