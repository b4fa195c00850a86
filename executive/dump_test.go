package executive

import (
	"regexp"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

var fingerprint = regexp.MustCompile(`(boot_id|pid_namespace|process_start)=[^,}]*, `)

// TestTimelineLeavesExactlyTheDocumentedKeys runs a problem, acknowledgement and recovery and
// compares every key in Redis afterwards with Flapjack 1.x's layout (docs/flapjack-1x.md 2.3-2.8).
func TestTimelineLeavesExactlyTheDocumentedKeys(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedOK(h)
	h.at(0).send(event("critical", `"summary":"down"`))
	h.at(30).send(event("critical", `"summary":"down"`, `"perfdata":"time=0.48s;;;0 size=10B"`))
	h.at(40).send(event("acknowledgement", `"summary":"on it"`, `"duration":3600`))
	h.at(100).send(event("ok", `"summary":"fine"`))
	want := map[string]string{
		"stats:events:202601041000":                                          "1",
		"stats:events:202601051000":                                          "3",
		"stats:events:202601051001":                                          "1",
		"all_checks":                                                         `zset[app-01.example.com:HTTP=1767607300]`,
		"all_checks:app-01.example.com":                                      `zset[HTTP=1767607300]`,
		"all_entity_ids_by_name":                                             `hash{app-01.example.com=c6936850-25f6-5716-8ebf-e8f1bef8947e}`,
		"all_entity_names_by_id":                                             `hash{c6936850-25f6-5716-8ebf-e8f1bef8947e=app-01.example.com}`,
		"app-01.example.com:HTTP:1767520800:count":                           `1`,
		"app-01.example.com:HTTP:1767520800:state":                           `ok`,
		"app-01.example.com:HTTP:1767607200:count":                           `2`,
		"app-01.example.com:HTTP:1767607200:state":                           `critical`,
		"app-01.example.com:HTTP:1767607200:summary":                         `down`,
		"app-01.example.com:HTTP:1767607240:unscheduled_maintenance:summary": `on it`,
		"app-01.example.com:HTTP:1767607300:count":                           `5`,
		"app-01.example.com:HTTP:1767607300:state":                           `ok`,
		"app-01.example.com:HTTP:1767607300:summary":                         `fine`,
		"app-01.example.com:HTTP:acknowledgement_notifications":              `list[1767607240]`,
		"app-01.example.com:HTTP:actions":                                    `hash{1767607240=acknowledgement}`,
		"app-01.example.com:HTTP:critical_notifications":                     `list[1767607230]`,
		"app-01.example.com:HTTP:last_acknowledgement_notification":          `1767607240`,
		"app-01.example.com:HTTP:last_critical_notification":                 `1767607230`,
		"app-01.example.com:HTTP:last_problem_notification":                  `1767607230`,
		"app-01.example.com:HTTP:last_recovery_notification":                 `1767607300`,
		"app-01.example.com:HTTP:problem_notifications":                      `list[1767607230]`,
		"app-01.example.com:HTTP:recovery_notifications":                     `list[1767607300]`,
		"app-01.example.com:HTTP:sorted_state_timestamps":                    `zset[1767520800=1767520800, 1767607200=1767607200, 1767607300=1767607300]`,
		"app-01.example.com:HTTP:sorted_unscheduled_maintenance_timestamps":  `zset[1767607240=1767607240]`,
		"app-01.example.com:HTTP:states":                                     `list[1767520800, 1767607200, 1767607300]`,
		"app-01.example.com:HTTP:unscheduled_maintenances":                   `zset[1767607240=60]`,
		"check:app-01.example.com:HTTP":                                      `hash{details=, initial_failure_delay=30, last_change=1767607300, last_notification_kind=recovery, last_sequence=5, last_update=1767607300, notified_severity=none, perfdata=[{"key":"time","value":"0.48s"},{"key":"size","value":"10B"}], repeat_failure_delay=60, revision=5, state=ok, summary=fine}`,
		"check_hashes_by_id":                                                 `hash{app-01.example.com:HTTP=cccf8770}`,
		"checks_by_hash":                                                     `hash{cccf8770=app-01.example.com:HTTP}`,
		"current_checks:app-01.example.com":                                  `zset[HTTP=1767607300]`,
		"current_entities":                                                   `zset[app-01.example.com=1767607300]`,
		"entity:c6936850-25f6-5716-8ebf-e8f1bef8947e":                        `hash{name=app-01.example.com}`,
		"entity_id:app-01.example.com":                                       `c6936850-25f6-5716-8ebf-e8f1bef8947e`,
		"event_counters":                                                     `hash{action=1, all=5, failure=2, invalid=0, ok=2}`,
		"event_counters:test:1":                                              `hash{action=1, all=5, failure=2, invalid=0, ok=2}`,
		"events_sequence":                                                    `5`,
		"explain:app-01.example.com:HTTP":                                    `list[{"time":1767607300,"stage":"executive","type":"service","state":"ok","verdict":"notified","notification":"recovery","severity":"critical"}, {"time":1767607240,"stage":"executive","type":"action","state":"acknowledgement","verdict":"notified","notification":"acknowledgement","severity":"critical"}, {"time":1767607230,"stage":"executive","type":"service","state":"critical","verdict":"notified","notification":"problem","severity":"critical"}, {"time":1767607200,"stage":"executive","type":"service","state":"critical","verdict":"blocked","filter":"delays","reason":"failing for 0 s of the 30 s initial_failure_delay"}, {"time":1767520800,"stage":"executive","type":"service","state":"ok","verdict":"blocked","filter":"ok","reason":"no problem was ever notified"}]`,
		"executive_instance:test:1":                                          `hash{boot_time=1767607200, heartbeat=1767607200, host=test, pid=1, processed=0, processing=executive_processing:test:1, queue=events, version=test}`,
		"executive_instances":                                                `set{test:1}`,
		"notifications":                                                      `list[{"event_id":"app-01.example.com:HTTP","event_hash":"cccf8770","state":"critical","summary":"down","details":null,"perfdata":"time=0.48s;;;0 size=10B","time":null,"duration":null,"count":3,"last_state":"ok","last_summary":null,"state_duration":30,"type":"problem","severity":"critical","tags":["app-01","example.com","http"]}, {"event_id":"app-01.example.com:HTTP","event_hash":null,"state":"acknowledgement","summary":"on it","details":null,"time":null,"duration":3600,"count":4,"last_state":"ok","last_summary":null,"state_duration":40,"type":"acknowledgement","severity":"critical","tags":["app-01","example.com","http"]}, {"event_id":"app-01.example.com:HTTP","event_hash":null,"state":"ok","summary":"fine","details":null,"time":null,"duration":null,"count":5,"last_state":"critical","last_summary":"down","state_duration":0,"type":"recovery","severity":"critical","tags":["app-01","example.com","http"]}]`,
	}
	got := h.db.Dump(t)
	// The process fingerprint differs per machine; package queue pins it.
	got[h.keys.Instance(Stage, "test:1")] = fingerprint.ReplaceAllString(got[h.keys.Instance(Stage, "test:1")], "")
	testredis.DiffDumps(t, got, want)
}
