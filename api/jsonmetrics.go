package api

// Flapjack 1.x's JSON metrics (docs/flapjack-1x.md A.10). GET /metrics is shared with the Prometheus
// exposition: a request that asks for JSON (Accept: application/json or
// application/vnd.api+json) gets 1.6's JSON, anything else (scrapers ask for text/plain or
// OpenMetrics) the exposition.

import (
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/views"
)

func (a *jsonAPI) metricsRoutes(route func(method, path, what string, h apiHandler)) {
	if a.o.Gatherer == nil {
		route("GET", "/metrics", "JSON API: Flapjack 1.x metrics [?filter=a,b]", a.getMetrics)
	}
	route("GET", "/metrics/check_freshness", "JSON API: current checks by seconds since their last event", a.getMetricsPart("check_freshness"))
	route("GET", "/metrics/entities", "JSON API: entity counts (all, enabled, failing)", a.getMetricsPart("entities"))
	route("GET", "/metrics/checks", "JSON API: current check counts (all, failing, stale)", a.getMetricsPart("checks"))
	route("GET", "/metrics/events", "JSON API: events processed and queued", a.getMetricsPart("events"))
}

// metricsByAccept serves /metrics: JSON metrics to requests that ask for JSON when the JSON
// API is on, the Prometheus exposition prom to the others.
func (o Options) metricsByAccept(prom http.Handler) http.Handler {
	if !o.JSONAPI || o.Pool == nil {
		return prom
	}
	a := &jsonAPI{o: o}
	jsonMetrics := o.authorisedRead(a.serve(a.getMetrics))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wantsJSON(r.Header.Values("Accept")) {
			jsonMetrics.ServeHTTP(w, r)
			return
		}
		prom.ServeHTTP(w, r)
	})
}

// wantsJSON reports whether an Accept header prefers a JSON media type: one is listed with
// q > 0 and no other explicitly listed type (wildcards aside) has a higher q.
func wantsJSON(accept []string) bool {
	bestJSON, bestOther := -1.0, -1.0
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
			switch {
			case mt == "application/json" || mt == "application/vnd.api+json":
				bestJSON = max(bestJSON, q)
			case strings.Contains(mt, "*"):
			default:
				bestOther = max(bestOther, q)
			}
		}
	}
	return bestJSON > 0 && bestJSON >= bestOther
}

func (a *jsonAPI) readStoreMetrics(r *http.Request) (views.StoreMetrics, error) {
	var m views.StoreMetrics
	err := a.conn(r, func(c redis.Conn) error {
		var err error
		m, err = views.ReadStoreMetrics(c, a.o.Keys, a.o.eventsList(), a.now())
		return err
	})
	if m.EventCounters == nil {
		m.EventCounters = map[string]int64{}
	}
	return m, err
}

func entitiesJSON(m views.StoreMetrics) map[string]int64 {
	return map[string]int64{"all": m.EntitiesAll, "enabled": m.EntitiesEnabled, "failing": m.EntitiesFailing}
}

func checksJSON(m views.StoreMetrics) map[string]int64 {
	return map[string]int64{"all": m.ChecksAll, "failing": m.ChecksFailing, "stale": m.ChecksStale}
}

// getMetrics answers GET /metrics as Flapjack 1.6: every metric, or those ?filter=a,b names.
func (a *jsonAPI) getMetrics(w http.ResponseWriter, r *http.Request) error {
	m, err := a.readStoreMetrics(r)
	if err != nil {
		return err
	}
	fqdn, _ := os.Hostname()
	freshness := map[string]int64{}
	for i, b := range views.FreshnessBounds {
		freshness[strconv.FormatInt(b, 10)] = m.Freshness[i]
	}
	out := map[string]any{
		"fqdn":                      fqdn,
		"pid":                       os.Getpid(),
		"total_keys":                m.TotalKeys,
		"processed_events_all_time": map[string]any{"all_time": m.EventCounters},
		"event_queue_length":        m.EventQueueLength,
		"check_freshness":           freshness,
		"entities":                  entitiesJSON(m),
		"checks":                    checksJSON(m),
	}
	var filter []string
	for _, f := range r.URL.Query()["filter"] {
		for _, name := range strings.Split(f, ",") {
			if name = strings.TrimSpace(name); name != "" {
				filter = append(filter, name)
			}
		}
	}
	if len(filter) > 0 {
		kept := map[string]any{}
		for _, name := range filter {
			if v, ok := out[name]; ok {
				kept[name] = v
			}
		}
		out = kept
	}
	writeAPI(w, http.StatusOK, out)
	return nil
}

// getMetricsPart answers GET /metrics/<part>.
func (a *jsonAPI) getMetricsPart(part string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := a.readStoreMetrics(r)
		if err != nil {
			return err
		}
		var v any
		switch part {
		case "check_freshness":
			buckets := map[string]int64{}
			for i, b := range views.FreshnessBounds {
				to := "∞"
				if i+1 < len(views.FreshnessBounds) {
					to = strconv.FormatInt(views.FreshnessBounds[i+1], 10)
				}
				buckets["from_"+strconv.FormatInt(b, 10)+"_to_"+to] = m.Freshness[i]
			}
			v = buckets
		case "entities":
			v = entitiesJSON(m)
		case "checks":
			v = checksJSON(m)
		case "events":
			v = map[string]any{"processed": m.EventCounters, "queue": map[string]int64{"length": m.EventQueueLength}}
		}
		writeAPI(w, http.StatusOK, map[string]any{part: v})
		return nil
	}
}
