// Package alertmanager owns the intake of Prometheus alerts: the webhook of an Alertmanager's
// webhook_configs (payload version 4, and Grafana's webhook contact point, which sends the same
// shape with more fields) at POST /integrations/alertmanager, and Alertmanager's API v2 alert
// list at POST /api/v2/alerts, where Prometheus itself can send its alerts. Each alert becomes a
// flapjack event (Mapping says how its labels and annotations map) queued through the one
// events.Publisher; the labels of each check's latest alert are kept beside the events
// (schema.Keys.AlertmanagerLabels) so an acknowledgement can be mirrored back as a silence
// (package gateways/silences). Input that cannot be read is refused with 400 and kept in the
// rejected list; an alert that cannot be mapped is kept there while the rest are queued.
package alertmanager
