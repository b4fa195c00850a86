package alertmanager

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/flapjackgo/flapjack/schema"
)

// Mapping turns an alert's labels and annotations into an event; every field is one
// receiver.alertmanager.* setting (README "From Prometheus").
type Mapping struct {
	// EntityLabels are tried in order; the first label set names the entity.
	EntityLabels []string
	// DefaultEntity is the entity of an alert with none of EntityLabels.
	DefaultEntity string
	// KeepPort keeps a trailing :port of the entity label (instance="web-01:9100").
	KeepPort bool
	// CheckLabel names the check; an alert without it is rejected.
	CheckLabel string
	// CheckLabels are appended to the check name as " name=value" when set, for alerts whose
	// alert name alone is not unique on an entity (one per disk: device).
	CheckLabels []string
	// SeverityLabel holds the severity.
	SeverityLabel string
	// SeverityStates maps severity values (lower-cased) to states; critical and warning map to
	// themselves and info and none to InfoState unless listed here.
	SeverityStates map[string]string
	// InfoState is the state of severity info or none.
	InfoState string
	// DefaultState is the state of an alert without a severity or with one not mapped.
	DefaultState string
	// SummaryAnnotations are tried in order for the summary; the check name when none is set.
	SummaryAnnotations []string
	// DetailsAnnotation holds the details.
	DetailsAnnotation string
	// LabelTags makes every label a tag name:value.
	LabelTags bool
	// TTLFromEndsAt gives alerts posted to /api/v2/alerts a ttl reaching to their endsAt.
	TTLFromEndsAt bool
}

// DefaultMapping is the mapping of the settings' defaults.
func DefaultMapping() Mapping {
	return Mapping{EntityLabels: []string{"instance", "job"}, DefaultEntity: "alertmanager", CheckLabel: "alertname",
		SeverityLabel: "severity", InfoState: schema.StateWarning, DefaultState: schema.StateCritical,
		SummaryAnnotations: []string{"summary", "description"}, DetailsAnnotation: "description",
		LabelTags: true, TTLFromEndsAt: true}
}

// ParseSeverityStates reads VALUE=STATE pairs (receiver.alertmanager.severity_states).
func ParseSeverityStates(pairs []string) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		value, state, ok := strings.Cut(p, "=")
		value, state = strings.ToLower(strings.TrimSpace(value)), strings.ToLower(strings.TrimSpace(state))
		if !ok || value == "" || !slices.Contains(mappableStates, state) {
			return nil, fmt.Errorf("%q is not SEVERITY=STATE with STATE one of %s", p, strings.Join(mappableStates, ", "))
		}
		out[value] = state
	}
	return out, nil
}

// mappableStates are the states a severity may map to.
var mappableStates = []string{schema.StateOK, schema.StateWarning, schema.StateCritical, schema.StateUnknown}

// alert is one alert as both payloads carry it.
type alert struct {
	Status      string            `json:"status"` // webhook only: firing or resolved
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    string            `json:"startsAt"`
	EndsAt      string            `json:"endsAt"`
}

// event maps one alert whose state is decided (resolved or not) to an event, or gives the
// reasons it cannot be.
func (m Mapping) event(a alert, resolved bool) (schema.Event, []string) {
	check := strings.TrimSpace(a.Labels[m.CheckLabel])
	if check == "" {
		return schema.Event{}, []string{fmt.Sprintf("alert has no %s label", m.CheckLabel)}
	}
	for _, name := range m.CheckLabels {
		if v := a.Labels[name]; v != "" {
			check += " " + name + "=" + v
		}
	}
	ev := schema.Event{Entity: m.entity(a.Labels), Check: check, Type: schema.TypeService, State: schema.StateOK,
		Summary: m.summary(a.Annotations, check), Details: a.Annotations[m.DetailsAnnotation]}
	if !resolved {
		ev.State = m.state(a.Labels[m.SeverityLabel])
	}
	if m.LabelTags {
		ev.Tags = labelTags(a.Labels)
	}
	return ev, nil
}

func (m Mapping) entity(labels map[string]string) string {
	for _, name := range m.EntityLabels {
		v := strings.TrimSpace(labels[name])
		if v == "" {
			continue
		}
		if !m.KeepPort {
			v = withoutPort(v)
		}
		return v
	}
	return m.DefaultEntity
}

// withoutPort drops a numeric :port ("web-01:9100" → "web-01", "[::1]:9100" → "::1").
func withoutPort(v string) string {
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return v
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return v
	}
	return host
}

func (m Mapping) state(severity string) string {
	severity = strings.ToLower(strings.TrimSpace(severity))
	if s, ok := m.SeverityStates[severity]; ok {
		return s
	}
	switch severity {
	case schema.StateCritical, schema.StateWarning:
		return severity
	case "info", "none":
		return m.InfoState
	}
	return m.DefaultState
}

func (m Mapping) summary(annotations map[string]string, check string) string {
	for _, name := range m.SummaryAnnotations {
		if v := strings.TrimSpace(annotations[name]); v != "" {
			return v
		}
	}
	return check
}

// labelTags are the labels as name:value, sorted by name.
func labelTags(labels map[string]string) []string {
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	slices.Sort(names)
	tags := make([]string, 0, len(names))
	for _, n := range names {
		if labels[n] != "" {
			tags = append(tags, n+":"+labels[n])
		}
	}
	return tags
}
