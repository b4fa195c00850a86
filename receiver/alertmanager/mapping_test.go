package alertmanager

import (
	"reflect"
	"testing"

	"github.com/flapjackgo/flapjack/schema"
)

func TestMappingEvent(t *testing.T) {
	base := DefaultMapping()
	withDevice := base
	withDevice.CheckLabels = []string{"device"}
	withStates := base
	withStates.SeverityStates = map[string]string{"page": schema.StateCritical, "info": schema.StateOK}
	noTags := base
	noTags.LabelTags = false
	keepPort := base
	keepPort.KeepPort = true
	cases := []struct {
		name     string
		m        Mapping
		a        alert
		resolved bool
		want     schema.Event
		reasons  []string
	}{
		{name: "instance without its port, severity warning, summary annotation",
			m: base, a: alert{Labels: map[string]string{"alertname": "HighLoad", "instance": "web-01:9100", "job": "node", "severity": "warning"},
				Annotations: map[string]string{"summary": "load 12", "description": "load is high"}},
			want: schema.Event{Entity: "web-01", Check: "HighLoad", Type: "service", State: "warning", Summary: "load 12", Details: "load is high",
				Tags: []string{"alertname:HighLoad", "instance:web-01:9100", "job:node", "severity:warning"}}},
		{name: "port kept when asked", m: keepPort,
			a:    alert{Labels: map[string]string{"alertname": "A", "instance": "web-01:9100"}},
			want: schema.Event{Entity: "web-01:9100", Check: "A", Type: "service", State: "critical", Summary: "A", Tags: []string{"alertname:A", "instance:web-01:9100"}}},
		{name: "IPv6 instance", m: noTags, a: alert{Labels: map[string]string{"alertname": "A", "instance": "[::1]:9090"}},
			want: schema.Event{Entity: "::1", Check: "A", Type: "service", State: "critical", Summary: "A"}},
		{name: "job when no instance, no severity is critical, description as summary", m: noTags,
			a:    alert{Labels: map[string]string{"alertname": "Down", "job": "api"}, Annotations: map[string]string{"description": "gone"}},
			want: schema.Event{Entity: "api", Check: "Down", Type: "service", State: "critical", Summary: "gone", Details: "gone"}},
		{name: "neither: alertmanager; alert name as summary; info is warning", m: noTags,
			a:    alert{Labels: map[string]string{"alertname": "Watchdog", "severity": "info"}},
			want: schema.Event{Entity: "alertmanager", Check: "Watchdog", Type: "service", State: "warning", Summary: "Watchdog"}},
		{name: "none is warning too", m: noTags, a: alert{Labels: map[string]string{"alertname": "W", "severity": "none"}},
			want: schema.Event{Entity: "alertmanager", Check: "W", Type: "service", State: "warning", Summary: "W"}},
		{name: "unmapped severity is the default state", m: noTags, a: alert{Labels: map[string]string{"alertname": "W", "severity": "High"}},
			want: schema.Event{Entity: "alertmanager", Check: "W", Type: "service", State: "critical", Summary: "W"}},
		{name: "configured severities win", m: withStates, a: alert{Labels: map[string]string{"alertname": "W", "severity": "info"}},
			want: schema.Event{Entity: "alertmanager", Check: "W", Type: "service", State: "ok", Summary: "W", Tags: []string{"alertname:W", "severity:info"}}},
		{name: "resolved is ok whatever the severity", m: noTags, resolved: true,
			a:    alert{Labels: map[string]string{"alertname": "W", "severity": "critical"}},
			want: schema.Event{Entity: "alertmanager", Check: "W", Type: "service", State: "ok", Summary: "W"}},
		{name: "check labels make the check unique", m: withDevice,
			a: alert{Labels: map[string]string{"alertname": "DiskFull", "instance": "db-1", "device": "sda"}},
			want: schema.Event{Entity: "db-1", Check: "DiskFull device=sda", Type: "service", State: "critical", Summary: "DiskFull device=sda",
				Tags: []string{"alertname:DiskFull", "device:sda", "instance:db-1"}}},
		{name: "no alertname", m: base, a: alert{Labels: map[string]string{"instance": "x"}}, reasons: []string{"alert has no alertname label"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reasons := c.m.event(c.a, c.resolved)
			if !reflect.DeepEqual(reasons, c.reasons) {
				t.Fatalf("reasons %q, want %q", reasons, c.reasons)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("event\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseSeverityStates(t *testing.T) {
	got, err := ParseSeverityStates([]string{"Page=critical", " ticket = WARNING "})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"page": "critical", "ticket": "warning"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"page", "page=loud", "=critical"} {
		if _, err := ParseSeverityStates([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
