package alertmanager_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/receiver/alertmanager"
	"github.com/flapjackgo/flapjack/schema"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

const token = "s3cret-token"

// intake is the two endpoints mounted on the HTTP listener as `server` mounts them, over a
// real Redis.
type intake struct {
	db   *testredis.DB
	keys schema.Keys
	url  string
}

func newIntake(t testing.TB, maxBody int64) *intake {
	t.Helper()
	db := testredis.New(t)
	keys := schema.NewKeys("")
	clk := clock.NewFake(t0)
	keeper := events.NewKeeper(db.Pool, keys, clk, time.Hour, zap.NewNop())
	o := alertmanager.Options{Mapping: alertmanager.DefaultMapping(), Publisher: events.NewPublisher(db.Pool, keys, ""),
		Keys: keys, Clock: clk, Log: zap.NewNop(),
		Reject: func(ctx context.Context, source string, rejected []alertmanager.Rejection) error {
			var batch []checkstate.Rejected
			for _, r := range rejected {
				batch = append(batch, checkstate.Rejected{Source: source, Input: r.Input, Reasons: r.Reasons})
			}
			return keeper.Write(ctx, batch)
		}}
	h := api.Handler(api.Options{Addr: "127.0.0.1:0", Token: token, MaxBody: maxBody, EventsEnabled: true,
		Events: events.NewPublisher(db.Pool, keys, ""), Intakes: []api.Intake{
			{Path: alertmanager.WebhookPath, Handler: o.Webhook()}, {Path: alertmanager.AlertsPath, Handler: o.Alerts()}}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &intake{db: db, keys: keys, url: srv.URL}
}

func (in *intake) post(t *testing.T, path, body, bearer string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", in.url+path, strings.NewReader(body))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// queued is every event on the events list, oldest first.
func (in *intake) queued(t *testing.T) []schema.Event {
	t.Helper()
	raws, err := redis.ByteSlices(in.db.Do(t, "LRANGE", in.keys.Events(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.Event
	for i := len(raws) - 1; i >= 0; i-- {
		ev, err := schema.ParseEvent(raws[i])
		if err != nil {
			t.Fatalf("queued event %s: %v", raws[i], err)
		}
		out = append(out, ev)
	}
	return out
}

func (in *intake) rejected(t *testing.T) []schema.RejectedReason {
	t.Helper()
	whys, _ := redis.Strings(in.db.Do(t, "LRANGE", in.keys.EventsRejectedReasons(t0), 0, -1), nil)
	var out []schema.RejectedReason
	for _, w := range whys {
		var r schema.RejectedReason
		if err := json.Unmarshal([]byte(w), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// webhookV4 is an Alertmanager 0.2x webhook payload: a firing alert, a resolved one and one
// without alertname.
const webhookV4 = `{"receiver":"flapjack","status":"firing","alerts":[
 {"status":"firing","labels":{"alertname":"HighLoad","instance":"web-01:9100","job":"node","severity":"warning"},
  "annotations":{"summary":"load 12 on web-01","description":"5m load over 10"},"startsAt":"2026-11-28T11:58:00Z",
  "endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prom:9090/graph","fingerprint":"a1"},
 {"status":"resolved","labels":{"alertname":"DiskFull","instance":"db-1:9100","severity":"critical"},
  "annotations":{},"startsAt":"2026-11-28T11:00:00Z","endsAt":"2026-11-28T11:59:00Z","fingerprint":"b2"},
 {"status":"firing","labels":{"instance":"db-1:9100"},"annotations":{},"startsAt":"2026-11-28T11:00:00Z","fingerprint":"c3"}],
 "groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":"http://am:9093","version":"4",
 "groupKey":"{}:{}","truncatedAlerts":0}`

// grafana is what Grafana's webhook contact point sends: the same shape with more fields.
const grafana = `{"receiver":"flapjack","status":"firing","orgId":1,"alerts":[{"status":"firing",
 "labels":{"alertname":"CPU","grafana_folder":"infra","instance":"app-3"},"annotations":{"description":"cpu at 97%"},
 "startsAt":"2026-11-28T11:58:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://grafana/alerting/x",
 "fingerprint":"f","silenceURL":"http://grafana/s","dashboardURL":"","panelURL":"","values":{"B":97.1,"C":1},
 "valueString":"[ var='B' value=97.1 ]"}],"groupLabels":{"alertname":"CPU"},"commonLabels":{},"commonAnnotations":{},
 "externalURL":"http://grafana/","version":"1","groupKey":"{}:{}","truncatedAlerts":0,"title":"[FIRING:1] CPU",
 "state":"alerting","message":"**Firing**"}`

func TestWebhookMapsAlertsAndKeepsTheOneWithoutAlertname(t *testing.T) {
	in := newIntake(t, 1<<20)
	status, body := in.post(t, alertmanager.WebhookPath, webhookV4, token)
	if status != http.StatusOK || body["accepted"] != 2.0 {
		t.Fatalf("status %d, body %v; want 200 with 2 accepted", status, body)
	}
	got := in.queued(t)
	want := []schema.Event{
		{Entity: "web-01", Check: "HighLoad", Type: "service", State: "warning", Summary: "load 12 on web-01", Details: "5m load over 10",
			Tags: []string{"alertname:HighLoad", "instance:web-01:9100", "job:node", "severity:warning"}, Time: t0.Unix(), HasTime: true},
		{Entity: "db-1", Check: "DiskFull", Type: "service", State: "ok", Summary: "DiskFull",
			Tags: []string{"alertname:DiskFull", "instance:db-1:9100", "severity:critical"}, Time: t0.Unix(), HasTime: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("queued\n%+v\nwant\n%+v", got, want)
	}
	labels, _ := redis.String(in.db.Do(t, "HGET", in.keys.AlertmanagerLabels(), "web-01:HighLoad"), nil)
	if labels != `{"via":"alertmanager","labels":{"alertname":"HighLoad","instance":"web-01:9100","job":"node","severity":"warning"}}` {
		t.Fatalf("labels kept for web-01:HighLoad: %q", labels)
	}
	rej := in.rejected(t)
	if len(rej) != 1 || rej[0].Source != alertmanager.SourceWebhook || !strings.Contains(rej[0].Event, `"fingerprint":"c3"`) ||
		!reflect.DeepEqual(rej[0].Reasons, []string{"alert has no alertname label"}) {
		t.Fatalf("rejected list: %+v", rej)
	}
}

func TestWebhookAcceptsGrafana(t *testing.T) {
	in := newIntake(t, 1<<20)
	if status, body := in.post(t, alertmanager.WebhookPath, grafana, token); status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	got := in.queued(t)
	if len(got) != 1 || got[0].ID() != "app-3:CPU" || got[0].State != "critical" || got[0].Summary != "cpu at 97%" {
		t.Fatalf("queued %+v", got)
	}
}

func TestAPIv2AlertsTTLFromEndsAt(t *testing.T) {
	in := newIntake(t, 1<<20)
	list := `[{"labels":{"alertname":"Up","job":"prometheus","instance":"localhost:9090","severity":"critical"},
	  "annotations":{"summary":"target down"},"startsAt":"2026-11-28T11:59:00Z","endsAt":"2026-11-28T12:00:04.2Z"},
	 {"labels":{"alertname":"Gone","job":"x"},"annotations":{},"startsAt":"2026-11-28T11:00:00Z","endsAt":"2026-11-28T11:59:59Z"},
	 {"labels":{"alertname":"NoEnd","job":"x"},"annotations":{},"startsAt":"2026-11-28T11:00:00Z"}]`
	if status, body := in.post(t, alertmanager.AlertsPath, list, token); status != http.StatusOK || body["accepted"] != 3.0 {
		t.Fatalf("status %d: %v", status, body)
	}
	got := in.queued(t)
	if len(got) != 3 {
		t.Fatalf("queued %+v", got)
	}
	if e := got[0]; e.ID() != "localhost:Up" || e.State != "critical" || !e.HasTTL || e.TTL != 5 {
		t.Errorf("firing alert ending in 4.2 s: %+v, want critical with ttl 5", e)
	}
	if e := got[1]; e.ID() != "x:Gone" || e.State != "ok" || e.HasTTL {
		t.Errorf("alert whose endsAt has passed: %+v, want ok without ttl", e)
	}
	if e := got[2]; e.State != "critical" || e.HasTTL {
		t.Errorf("alert without endsAt: %+v, want critical without ttl", e)
	}
}

func TestBadInput(t *testing.T) {
	in := newIntake(t, 2048)
	cases := []struct {
		name, path, body, bearer string
		status                   int
		kept                     string // source of the rejection kept; "" = none
	}{
		{"not JSON", alertmanager.WebhookPath, `{"alerts": [`, token, http.StatusBadRequest, alertmanager.SourceWebhook},
		{"no alerts array", alertmanager.WebhookPath, `{"version":"4"}`, token, http.StatusBadRequest, alertmanager.SourceWebhook},
		{"object where a list is due", alertmanager.AlertsPath, `{"labels":{}}`, token, http.StatusBadRequest, alertmanager.SourceAPI},
		{"every alert refused", alertmanager.AlertsPath, `[{"labels":{"job":"x"}}]`, token, http.StatusBadRequest, alertmanager.SourceAPI},
		{"label not a string", alertmanager.AlertsPath, `[{"labels":{"alertname":1}}]`, token, http.StatusBadRequest, alertmanager.SourceAPI},
		{"too big", alertmanager.WebhookPath, `{"alerts":[` + strings.Repeat(" ", 4096) + `]}`, token, http.StatusRequestEntityTooLarge, ""},
		{"no token", alertmanager.WebhookPath, webhookV4, "", http.StatusUnauthorized, ""},
		{"wrong token", alertmanager.AlertsPath, `[]`, "nope", http.StatusUnauthorized, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in.db.Do(t, "FLUSHDB")
			status, body := in.post(t, c.path, c.body, c.bearer)
			if status != c.status {
				t.Fatalf("status %d (%v), want %d", status, body, c.status)
			}
			if n := len(in.queued(t)); n != 0 {
				t.Fatalf("%d events queued", n)
			}
			rej := in.rejected(t)
			switch {
			case c.kept == "" && len(rej) != 0:
				t.Fatalf("kept %+v", rej)
			case c.kept != "" && (len(rej) != 1 || rej[0].Source != c.kept || len(rej[0].Reasons) == 0):
				t.Fatalf("rejected list %+v, want one from %s", rej, c.kept)
			}
		})
	}
}
