package alertmanager

import (
	"fmt"

	"github.com/flapjackgo/flapjack/config"
)

// MappingFrom reads the receiver.alertmanager.* settings.
func MappingFrom(v *config.Values) (Mapping, error) {
	states, err := ParseSeverityStates(v.List("receiver.alertmanager.severity_states"))
	if err != nil {
		return Mapping{}, fmt.Errorf("receiver.alertmanager.severity_states: %w", err)
	}
	m := Mapping{
		EntityLabels:       config.SplitList(v.String("receiver.alertmanager.entity_labels")),
		DefaultEntity:      v.String("receiver.alertmanager.default_entity"),
		KeepPort:           v.Bool("receiver.alertmanager.keep_port"),
		CheckLabel:         v.String("receiver.alertmanager.check_label"),
		CheckLabels:        v.List("receiver.alertmanager.check_labels"),
		SeverityLabel:      v.String("receiver.alertmanager.severity_label"),
		SeverityStates:     states,
		InfoState:          v.String("receiver.alertmanager.info_state"),
		DefaultState:       v.String("receiver.alertmanager.default_state"),
		SummaryAnnotations: config.SplitList(v.String("receiver.alertmanager.summary_annotations")),
		DetailsAnnotation:  v.String("receiver.alertmanager.details_annotation"),
		LabelTags:          v.Bool("receiver.alertmanager.label_tags"),
		TTLFromEndsAt:      v.Bool("receiver.alertmanager.ttl_from_ends_at"),
	}
	switch {
	case m.CheckLabel == "":
		return Mapping{}, fmt.Errorf("receiver.alertmanager.check_label is empty: every check needs a name")
	case m.DefaultEntity == "":
		return Mapping{}, fmt.Errorf("receiver.alertmanager.default_entity is empty: every event needs an entity")
	}
	return m, nil
}
