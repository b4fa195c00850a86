package alertmanager_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// BenchmarkWebhook1000Alerts posts a 1,000-alert Alertmanager webhook payload to the intake on
// a real Redis and reports the time to accept it (`make bench`; the target is under 100 ms).
func BenchmarkWebhook1000Alerts(b *testing.B) {
	alerts := make([]map[string]any, 1000)
	for i := range alerts {
		alerts[i] = map[string]any{"status": "firing", "startsAt": "2026-11-28T11:58:00Z", "endsAt": "0001-01-01T00:00:00Z",
			"labels": map[string]string{"alertname": "DiskFull", "instance": fmt.Sprintf("node-%04d:9100", i), "job": "node",
				"severity": "critical", "device": "sda", "mountpoint": "/var"},
			"annotations": map[string]string{"summary": fmt.Sprintf("disk sda on node-%04d 97%% full", i),
				"description": "filesystem /var is over 95% used; ingest will stop when it is full"},
			"generatorURL": "http://prometheus:9090/graph?g0.expr=disk_used", "fingerprint": fmt.Sprintf("%016x", i)}
	}
	body, err := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "flapjack", "alerts": alerts,
		"groupLabels": map[string]string{}, "commonLabels": map[string]string{"alertname": "DiskFull"}, "groupKey": "{}:{}"})
	if err != nil {
		b.Fatal(err)
	}
	in := newIntake(b, 8<<20)
	client := &http.Client{}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", in.url+"/integrations/alertmanager", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %s", resp.Status)
		}
		b.StopTimer()
		in.db.Do(b, "DEL", in.keys.Events())
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/payload")
	if n, _ := redis.Int(in.db.Do(b, "HLEN", in.keys.AlertmanagerLabels()), nil); n != 1000 {
		b.Fatalf("%d checks' labels kept, want 1000", n)
	}
}
