package alertmanager

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/config"
)

// TestMappingFromSettings: the defaults are DefaultMapping, and every receiver.alertmanager.*
// setting reaches the mapping through the one settings loader.
func TestMappingFromSettings(t *testing.T) {
	load := func(env ...string) (Mapping, error) {
		v, err := config.Load(config.Core, "", nil, env)
		if err != nil {
			t.Fatal(err)
		}
		return MappingFrom(v)
	}
	m, err := load()
	if err != nil || !reflect.DeepEqual(m, withStates(DefaultMapping(), map[string]string{})) {
		t.Fatalf("defaults: %+v, %v", m, err)
	}
	m, err = load("FLAPJACK_RECEIVER_ALERTMANAGER_ENTITY_LABELS=host, instance", "FLAPJACK_RECEIVER_ALERTMANAGER_DEFAULT_ENTITY=prom",
		"FLAPJACK_RECEIVER_ALERTMANAGER_KEEP_PORT=true", "FLAPJACK_RECEIVER_ALERTMANAGER_CHECK_LABEL=rule",
		"FLAPJACK_RECEIVER_ALERTMANAGER_CHECK_LABELS=device,mountpoint", "FLAPJACK_RECEIVER_ALERTMANAGER_SEVERITY_LABEL=level",
		"FLAPJACK_RECEIVER_ALERTMANAGER_INFO_STATE=ok", "FLAPJACK_RECEIVER_ALERTMANAGER_DEFAULT_STATE=unknown",
		"FLAPJACK_RECEIVER_ALERTMANAGER_SEVERITY_STATES=page=critical", "FLAPJACK_RECEIVER_ALERTMANAGER_SUMMARY_ANNOTATIONS=title",
		"FLAPJACK_RECEIVER_ALERTMANAGER_DETAILS_ANNOTATION=runbook", "FLAPJACK_RECEIVER_ALERTMANAGER_LABEL_TAGS=false",
		"FLAPJACK_RECEIVER_ALERTMANAGER_TTL_FROM_ENDS_AT=false")
	want := Mapping{EntityLabels: []string{"host", "instance"}, DefaultEntity: "prom", KeepPort: true, CheckLabel: "rule",
		CheckLabels: []string{"device", "mountpoint"}, SeverityLabel: "level", SeverityStates: map[string]string{"page": "critical"},
		InfoState: "ok", DefaultState: "unknown", SummaryAnnotations: []string{"title"}, DetailsAnnotation: "runbook"}
	if err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("set:\n got %+v, %v\nwant %+v", m, err, want)
	}
	for _, bad := range []string{"FLAPJACK_RECEIVER_ALERTMANAGER_SEVERITY_STATES=page", "FLAPJACK_RECEIVER_ALERTMANAGER_CHECK_LABEL="} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "receiver.alertmanager.") {
			t.Errorf("%s: %v, want an error naming the setting", bad, err)
		}
	}
}

func withStates(m Mapping, states map[string]string) Mapping {
	m.SeverityStates = states
	return m
}
