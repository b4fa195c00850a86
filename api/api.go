// Package api owns flapjack's HTTP listener: Prometheus metrics, liveness and readiness,
// POST /events for producers that cannot LPUSH, the Flapjack 1.x JSON API (jsonapi.go), and an
// index of these at /. It binds loopback by default and refuses to
// listen elsewhere without a bearer token for its write endpoints.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/model/roster"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/schema"
)

// Options configure the listener.
type Options struct {
	Addr     string
	Token    string // bearer token for write endpoints; required off loopback
	MaxBody  int64
	Pool     *redis.Pool
	Keys     schema.Keys
	Events   *events.Publisher // where POST /events queues
	Gatherer prometheus.Gatherer
	// Ready reports whether the process's stages are running (nil: always).
	Ready func() error
	Log   *zap.Logger
	// EventsEnabled mounts POST /events and Intakes (metrics-only listeners of single stages
	// leave it off).
	EventsEnabled bool
	// Intakes are further POST endpoints that queue events from other tools' formats (the
	// Alertmanager webhook): behind Token as POST /events is.
	Intakes []Intake
	// JSONAPI mounts the Flapjack 1.x JSON API (contacts, media, PagerDuty credentials,
	// notification rules); its writes need Token, its reads ReadToken or Token when either is set.
	JSONAPI bool
	// ReadToken is a bearer token that allows JSON API reads only.
	ReadToken string
	// CORSOrigins are the origins whose browsers may call the listener ("*": any); none = no
	// CORS headers.
	CORSOrigins []string
	// BaseURL prefixes the Location of created resources; "" = the URL the request came to.
	BaseURL string
	// RedisTimeout bounds a JSON API request's wait for a pooled Redis connection
	// (redis.command_timeout; the pool bounds each command by it too); 0 = the request's own
	// context only. POST /events is bounded by its publisher (events.Publisher.WithTimeout).
	RedisTimeout time.Duration
	// Clock is the time requests are answered at (maintenance windows, reports, metrics); nil:
	// the real clock.
	Clock clock.Clock
}

// eventsList is the full key of the list events are queued on (executive.queue): the
// publisher's, else (no publisher configured) the default list.
func (o Options) eventsList() string {
	if o.Events == nil {
		return o.Keys.Events()
	}
	return o.Events.Key()
}

// Intake is one POST endpoint of another tool's format.
type Intake struct {
	Path    string
	What    string
	Handler BodyHandler
	// Signed intakes authenticate each request by its own signature (Slack's, Twilio's): a
	// provider cannot send http.token, so they are not behind it and their handler must refuse
	// an unsigned request.
	Signed bool
}

// BodyHandler handles a POST whose body the listener has read, within MaxBody.
type BodyHandler func(w http.ResponseWriter, r *http.Request, body []byte)

// Validate checks the address and the token rule.
func (o Options) Validate() error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("http.addr %q: %w", o.Addr, err)
	}
	if !isLoopback(host) && o.Token == "" && (o.EventsEnabled || o.JSONAPI) {
		return fmt.Errorf("http.addr %q is not a loopback address: set http.token so POST /events and the JSON API's writes are not open to anyone who can reach it", o.Addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler builds the routes.
func Handler(o Options) http.Handler {
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	mux := http.NewServeMux()
	// Every route is mounted through handle, so the index at / lists exactly what is served.
	var routes []route
	handle := func(method, path, what string, h http.Handler) {
		mux.Handle(method+" "+path, h)
		routes = append(routes, route{method, path, what})
	}
	if o.EventsEnabled {
		post := func(path, what string, h BodyHandler) {
			if o.Token != "" {
				what += " (needs Authorization: Bearer TOKEN)"
			}
			handle("POST", path, what, o.authorised(o.withBody(h)))
		}
		post("/events", "queue one event (a JSON object) or an array of them; none is queued unless all are valid", o.postEvents)
		for _, in := range o.Intakes {
			if in.Signed {
				handle("POST", in.Path, in.What+" (signed by the provider)", o.withBody(in.Handler))
				continue
			}
			post(in.Path, in.What, in.Handler)
		}
	}
	if o.Gatherer != nil {
		handle("GET", "/metrics", "Prometheus metrics (Flapjack 1.x JSON metrics with Accept: application/json)",
			o.metricsByAccept(promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(o.Log)})))
	}
	handle("GET", "/healthz", "liveness: \"ok\" while the process runs",
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }))
	handle("GET", "/readyz", "readiness: 200 when Redis answers and the stages run, else 503 with the reasons",
		http.HandlerFunc(o.readyz))
	if o.JSONAPI && o.Pool != nil {
		(&jsonAPI{o: o}).mount(handle)
	}
	// "/{$}" is exactly "/": other unknown paths stay 404.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { writeIndex(w, r, routes) })
	if !o.JSONAPI {
		return mux
	}
	mux.HandleFunc("/", notRoutable)
	return o.withCORS(mux)
}

// Serve listens until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.JSONAPI && o.Pool != nil {
		o.repairContactIndex(ctx)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on http.addr %s: %w", o.Addr, err)
	}
	srv := &http.Server{Handler: Handler(o), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	o.Log.Info("HTTP listening", zap.String("addr", ln.Addr().String()), zap.Bool("events", o.EventsEnabled),
		zap.Bool("jsonapi", o.JSONAPI), zap.Bool("token", o.Token != ""), zap.Bool("read_token", o.ReadToken != ""))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}

// repairContactIndex brings all_contacts in line with the contact:ID hashes (a database
// Flapjack 1.6 wrote has none) before the JSON API serves; reads do not depend on it, so a
// failure is only logged.
func (o Options) repairContactIndex(ctx context.Context) {
	conn, err := o.Pool.GetContext(ctx)
	if err == nil {
		defer conn.Close()
		var n int
		if n, err = roster.RepairContactIndex(ctx, conn, o.Keys); err == nil && n > 0 {
			o.Log.Info("all_contacts repaired from the contact:ID hashes", zap.Int("contacts", n))
		}
	}
	if err != nil {
		o.Log.Warn("all_contacts not repaired", zap.Error(err))
	}
}

func (o Options) readyz(w http.ResponseWriter, r *http.Request) {
	var problems []string
	if o.Pool != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyzRedisTimeout)
		defer cancel()
		if err := ping(ctx, o.Pool); err != nil {
			problems = append(problems, redisProblem(err))
		}
	}
	if o.Ready != nil {
		if err := o.Ready(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: "+strings.Join(problems, "; ")+"\n")
		return
	}
	io.WriteString(w, "ready\n")
}

// readyzRedisTimeout bounds /readyz's PING.
const readyzRedisTimeout = 2 * time.Second

// redisProblem says why Redis is not ready, naming a timeout plainly: a frozen Redis (stopped,
// a slow disk, a long command) accepts connections but does not answer.
func redisProblem(err error) string {
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return fmt.Sprintf("redis: no answer within %v (%v)", readyzRedisTimeout, err)
	}
	return "redis: " + err.Error()
}

func ping(ctx context.Context, pool *redis.Pool) error {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = redis.DoContext(conn, ctx, "PING")
	return err
}

func (o Options) authorised(next http.Handler) http.Handler {
	if o.Token == "" {
		return next
	}
	want := []byte("Bearer " + o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flapjack"`)
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "missing or wrong bearer token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withBody reads a request's body for h: 413 when it is over MaxBody.
func (o Options) withBody(h BodyHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBody))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("body over %d bytes", o.MaxBody)})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "read body: " + err.Error()})
			return
		}
		h(w, r, body)
	})
}

// postEvents accepts one event or an array; all are validated first and queued only if every
// one is valid, so a client can fix and resend the whole request.
func (o Options) postEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	raws, err := splitEvents(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	if len(raws) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "no events in the request"})
		return
	}
	payloads := make([][]byte, len(raws))
	for i, raw := range raws {
		payloads[i] = raw
	}
	_, err = o.Events.PublishRaw(r.Context(), payloads...)
	var invalid *events.InvalidError
	if errors.As(err, &invalid) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid events; none were queued", "errors": invalid.Problems})
		return
	}
	if err != nil {
		// A write whose reply was lost may have been queued: the client's retry queues it at
		// least once (README, Guarantees).
		o.Log.Error("POST /events could not queue events", zap.Error(err))
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "could not queue events: Redis unavailable",
			"reason": err.Error()})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": len(raws)})
}

// splitEvents returns the raw events of a body holding one object or an array of them.
func splitEvents(body []byte) ([]json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(body))
	switch {
	case strings.HasPrefix(trimmed, "["):
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &list); err != nil {
			return nil, fmt.Errorf("body is not a JSON array of events: %w", err)
		}
		return list, nil
	case strings.HasPrefix(trimmed, "{"):
		return []json.RawMessage{json.RawMessage(trimmed)}, nil
	}
	return nil, errors.New("body must be a JSON event object or an array of them")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
