// Package silences owns mirroring acknowledgements into Alertmanager: while a check that an
// Alertmanager or Prometheus alert fed (its labels are in schema.Keys.AlertmanagerLabels) is
// acknowledged, Alertmanager holds a silence matching those labels until the acknowledgement
// ends; ending the acknowledgement early expires the silence.
//
// The Watcher observes the acknowledgements where every way of making or ending one leaves
// them, the check's unscheduled maintenance windows (the executive's acknowledgement events
// from the CLI, web, API, Jabber, PagerDuty or Slack; an end by the API, the CLI or a
// recovery), rather than any one path to them: each pass compares the windows covering now with
// what it mirrored last (schema.Keys.AlertmanagerSilences) and queues a job for each change.
// The jobs are alerts of the medium "alertmanager" on their own queue, delivered by the shared
// gateway runner (retried with backoff, dead-lettered with the reason), so a slow or absent
// Alertmanager never holds up the executive.
package silences
