// Package config owns flapjack's settings: their names, defaults and meaning (the Core table;
// each medium adds its own, see gateways/media), and how a value is found and checked —
// command-line flag, then FLAPJACK_* environment variable, then the YAML file, then the
// default (docs/decisions.md I3), parsed to its kind when loaded. A setting `redis.url` is the YAML key
// redis: {url: ...}, the flag --redis-url and the variable FLAPJACK_REDIS_URL.
package config

import (
	"strings"

	"github.com/flapjackgo/flapjack/schema"
)

// Kind is how a setting's text is read.
type Kind int

// Setting kinds.
const (
	String   Kind = iota
	Duration      // integer seconds, Go duration ("90s") or words ("15 minutes")
	Int
	Bool
	List // comma-separated in flags and env, a YAML sequence in the file
)

// Setting is one configurable value.
type Setting struct {
	Key     string
	Kind    Kind
	Default string
	Usage   string
	Secret  bool // never printed (tokens, passwords)
	// Choices, when set, are the only values a String setting accepts.
	Choices []string
	// AliasOf marks a deprecated name of another setting: its value is carried there, with a
	// warning, so configurations written for the old name still load.
	AliasOf string
}

// Table is a list of settings: Core plus what the media add.
type Table []Setting

// Flag is the command-line flag of a setting: dots and underscores become dashes.
func (s Setting) Flag() string { return FlagName(s.Key) }

// Env is the environment variable of a setting.
func (s Setting) Env() string { return EnvName(s.Key) }

// FlagName maps a setting key to its flag.
func FlagName(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

// EnvName maps a setting key to its environment variable.
func EnvName(key string) string {
	return "FLAPJACK_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// Section is the first part of a key ("redis", "gateways.jabber" for gateway settings).
func (s Setting) Section() string {
	parts := strings.Split(s.Key, ".")
	if parts[0] == "gateways" && len(parts) > 2 {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

// Core lists the settings of everything but the media. gateways/media adds each medium's;
// README's configuration table and etc/flapjack.yaml.example follow the whole table and a test
// keeps them in step.
var Core = Table{
	{Key: "log.level", Default: "info", Choices: []string{"debug", "info", "warn", "error"}, Usage: "log level: debug, info, warn or error (SIGHUP re-reads it)"},
	{Key: "log.format", Default: "console", Choices: []string{"console", "json"}, Usage: "log format: console or json"},

	{Key: "redis.url", Default: "", Usage: "Redis URL: redis://[user:password@]host:port/db, rediss:// for TLS, unix:///path?db=N. Empty: redis://127.0.0.1:6379/0, and `server` falls back to an embedded Redis when nothing answers there", Secret: true},
	{Key: "redis.embedded", Default: "auto", Choices: []string{"auto", "never", "always"}, Usage: "embedded Redis for `server`: auto (only when redis.url and Sentinel are unset and nothing answers at 127.0.0.1:6379), never, or always (demos, tests)"},
	{Key: "redis.key_prefix", Default: "", Usage: "prefix for every key (empty = Flapjack-compatible layout); lets installations share a Redis"},
	{Key: "redis.sentinel.addrs", Kind: List, Usage: "Sentinel addresses host:port; when set the master is found through them"},
	{Key: "redis.sentinel.master", Default: "", Usage: "Sentinel master name"},
	{Key: "redis.sentinel.username", Default: "", Usage: "user for the sentinels (optional)"},
	{Key: "redis.sentinel.password", Default: "", Usage: "password for the sentinels (optional)", Secret: true},
	{Key: "redis.tls.ca_file", Default: "", Usage: "CA certificate file for rediss://"},
	{Key: "redis.tls.cert_file", Default: "", Usage: "client certificate file for rediss://"},
	{Key: "redis.tls.key_file", Default: "", Usage: "client key file for rediss://"},
	{Key: "redis.tls.insecure_skip_verify", Kind: Bool, Default: "false", Usage: "do not verify the Redis server certificate (testing only)"},
	{Key: "redis.command_timeout", Kind: Duration, Default: "5s", Usage: "longest wait for Redis to answer one command (0 = no limit): past it POST /events and the JSON API answer 503 with the reason, a receiver spools the event and a stage backs off and retries, so a frozen Redis (a stopped process, a slow disk) never hangs a request; blocking waits for a queue's next item get their own block time on top"},
	{Key: "redis.pool_size", Kind: Int, Default: "32", Usage: "maximum Redis connections per process (the executive uses a second one to apply a batch in parts; with `1` it applies each batch in one call)"},

	{Key: "executive.enabled", Kind: Bool, Default: "true", Usage: "run the executive in `server`"},
	{Key: "executive.queue", Default: schema.DefaultEventsQueue, Usage: "list events are queued on (POST /events, the CLI, receivers, Jabber and PagerDuty acknowledgements) and the executive takes them from"},
	{Key: "executive.notifier_queue", AliasOf: "notifier.queue", Usage: "deprecated: use notifier.queue"},
	{Key: "executive.initial_failure_delay", Kind: Duration, Default: "30s", Usage: "how long a failure must last before the first problem notification (per-event initial_failure_delay overrides)"},
	{Key: "executive.repeat_failure_delay", Kind: Duration, Default: "60s", Usage: "minimum gap between problem notifications of the same severity (per-event repeat_failure_delay overrides)"},
	{Key: "executive.new_check_scheduled_maintenance_duration", Kind: Duration, Default: "0", Usage: "scheduled maintenance given to a never-seen check (0 = off; Flapjack 1.x used 100 years)"},
	{Key: "executive.new_check_scheduled_maintenance_ignore_tags", Kind: List, Usage: "event tags that exempt a new check from that maintenance"},
	{Key: "executive.acknowledgement_duration", Kind: Duration, Default: "4h", Usage: "length of an acknowledgement whose event has no duration"},
	{Key: "executive.archive_events", Kind: Bool, Default: "false", Usage: "keep a copy of every event in events_archive:YYYYMMDDHH"},
	{Key: "executive.events_archive_maxage", Kind: Duration, Default: "3h", Usage: "expiry of the event archive lists"},
	{Key: "executive.rejected_events_maxage", Kind: Duration, Default: "7 days", Usage: "expiry of events_rejected:YYYYMMDDHH (rejected raw events and their reasons)"},
	{Key: "executive.max_future_skew", Kind: Duration, Default: "5m", Usage: "an event time further in the future than this is not trusted for ordering"},
	{Key: "executive.batch_size", Kind: Int, Default: "256", Usage: "events claimed per batch"},
	{Key: "executive.facts_cache_checks", Kind: Int, Default: "100000", Usage: "checks whose facts the executive remembers between their results, so an ok result on an ok check, or a failing one on a check failing alike between its repeated notifications, is decided without reading it again (64 bytes each, outside the Go heap, and a failing check's notification times beside; 0 = read every event's check)"},
	{Key: "executive.explain_entries", Kind: Int, Default: "50", Usage: "decisions of the executive and the notifier kept per check in explain:ENTITY:CHECK for `flapjack explain` (0 = none)"},
	{Key: "executive.default_ttl", Kind: Duration, Default: "0", Usage: "ttl of results that carry none and match no executive.ttl_by_check entry: a check silent this long after its last result gets an unknown \"stale\" result, again every ttl (0 = off)"},
	{Key: "executive.ttl_by_check", Kind: List, Usage: "default ttls per check, each REGEX=DURATION matched against ENTITY:CHECK, first match wins (0 = none); an event's own ttl overrides"},
	{Key: "executive.staleness_interval", Kind: Duration, Default: "1s", Usage: "how often each executive claims the checks whose ttl ran out"},

	{Key: "notifier.enabled", Kind: Bool, Default: "true", Usage: "run the notifier in `server`"},
	{Key: "notifier.queue", Default: "notifications", Usage: "list the executive pushes notifications onto and the notifier takes them from"},
	{Key: "notifier.default_contact_timezone", Default: "", Usage: "timezone of contacts without one (default: the TZ environment variable, else UTC)"},
	{Key: "notifier.default_interval", Kind: Duration, Default: "15m", Usage: "repeat interval of a contact's medium without its own (Flapjack: 900 s)"},
	{Key: "notifier.batch_size", Kind: Int, Default: "64", Usage: "notifications claimed per batch"},

	{Key: "retention.enabled", Kind: Bool, Default: "true", Usage: "trim history continuously in `server` and `executive`"},
	{Key: "retention.max_age", Kind: Duration, Default: "90 days", Usage: "history (state changes, notifications, maintenance windows) older than this is removed continuously (0 = keep)"},
	{Key: "retention.max_entries", Kind: Int, Default: "10000", Usage: "state changes kept per check (0 = no limit)"},
	{Key: "retention.max_deliveries", Kind: Int, Default: "100000", Usage: "delivery log records kept, of all checks; the oldest beyond are removed (0 = no limit; retention.max_age also applies)"},
	{Key: "retention.interval", Kind: Duration, Default: "5m", Usage: "how often the retention sweep runs (in `server` and `executive`)"},

	{Key: "http.enabled", Kind: Bool, Default: "true", Usage: "serve http.addr in `server` (`flapjack api` serves it alone)"},
	{Key: "http.addr", Default: "127.0.0.1:3081", Usage: "address of the HTTP listener (/metrics, /healthz, /readyz, POST /events, the Prometheus and Alertmanager intakes, the JSON API); non-loopback needs http.token"},
	{Key: "http.token", Default: "", Usage: "bearer token required by write endpoints", Secret: true},
	{Key: "http.max_body_bytes", Kind: Int, Default: "1048576", Usage: "largest accepted request body"},
	{Key: "http.read_token", Default: "", Usage: "bearer token allowing JSON API reads only (with http.token set, reads need one of the two)", Secret: true},
	{Key: "http.cors_origins", Kind: List, Usage: "origins whose browsers may call the JSON API (`*` = any); empty = no CORS headers"},
	{Key: "http.base_url", Default: "", Usage: "URL prefix of the Location of resources the JSON API creates (empty = the URL the request came to)"},
	{Key: "web.enabled", Kind: Bool, Default: "true", Usage: "serve the web UI on web.addr in `server` (`flapjack web` serves it alone)"},
	{Key: "web.addr", Default: "127.0.0.1:3080", Usage: "address of the web UI; off loopback every page needs a login (web.users or web.auth_header)"},
	{Key: "web.auto_refresh", Kind: Duration, Default: "120s", Usage: "how often the web UI's pages reload themselves (0 = never)"},
	{Key: "web.base_url", Default: "/", Usage: "URL prefix of every web UI link and form, when a reverse proxy serves it under a path"},
	{Key: "web.logo_image_path", Default: "", Usage: "image file shown as the web UI's logo (empty = none)"},
	{Key: "web.users", Kind: List, Usage: "web UI logins (HTTP Basic) as name:bcrypt-hash; actions need a login even on loopback", Secret: true},
	{Key: "web.csrf_key", Default: "", Usage: "key signing the web UI's CSRF tokens: set the same on every web process behind one load balancer, so a form served by one is accepted by another (empty: a random key per process; forms open across a restart need a reload)", Secret: true},
	{Key: "web.auth_header", Default: "", Usage: "request header holding the user name set by a trusted reverse proxy (SSO); empty = none"},
	{Key: "metrics.addr", Default: "", Usage: "address for /metrics when a single stage runs alone (empty = none; `server` uses http.addr)"},

	{Key: "receiver.nagios.fifo", Default: "/var/lib/nagios4/flapjack.fifo", Usage: "named pipe `receiver nagios` reads Nagios perfdata from (created when missing; Debian's Nagios 4 keeps perfdata in /var/lib/nagios4; Flapjack 1.x: /var/cache/nagios3/event_stream.fifo)"},
	{Key: "receiver.nagios.fifo_mode", Default: "0660", Usage: "octal mode of a pipe `receiver nagios` creates"},
	{Key: "receiver.nagios.fifo_group", Default: "", Usage: "group (name or number) of a pipe `receiver nagios` creates, e.g. nagios (empty: the receiver's own)"},
	{Key: "receiver.nagios.pipe_size", Kind: Int, Default: "1048576", Usage: "pipe buffer asked for at open, capped by /proc/sys/fs/pipe-max-size (Nagios drops a result that finds the pipe full)"},
	{Key: "receiver.nagios.spool_dir", Default: "/var/spool/flapjack/nagios", Usage: "directory where `receiver nagios` spools events while Redis is away (drained in order when it returns)"},
	{Key: "receiver.nagios.spool_max_bytes", Kind: Int, Default: "268435456", Usage: "bound of the Nagios spool (default: an hour of 10,000 services at one result a minute); when full the oldest events are dropped and counted"},
	{Key: "receiver.nsca.fifo", Default: "/var/lib/nagios4/flapjack-nsca.fifo", Usage: "named pipe `receiver nsca` reads Nagios external command lines from: the nsca daemon's command_file (created when missing; not Nagios' own command file; Flapjack 1.x example: /var/lib/nagios3/rw/nagios.cmd)"},
	{Key: "receiver.nsca.fifo_mode", Default: "0660", Usage: "octal mode of a pipe `receiver nsca` creates"},
	{Key: "receiver.nsca.fifo_group", Default: "", Usage: "group (name or number) of a pipe `receiver nsca` creates, e.g. nagios, nsca's nsca_group (empty: the receiver's own)"},
	{Key: "receiver.nsca.pipe_size", Kind: Int, Default: "1048576", Usage: "pipe buffer asked for at open, capped by /proc/sys/fs/pipe-max-size"},
	{Key: "receiver.nsca.spool_dir", Default: "/var/spool/flapjack/nsca", Usage: "directory where `receiver nsca` spools events while Redis is away (drained in order when it returns)"},
	{Key: "receiver.nsca.spool_max_bytes", Kind: Int, Default: "268435456", Usage: "bound of the NSCA spool; when full the oldest events are dropped and counted"},
	{Key: "receiver.sensu.enabled", Kind: Bool, Default: "false", Usage: "run the Sensu TCP receiver (receiver.sensu.listen) in `server`; `flapjack receiver sensu` runs it alone"},
	{Key: "receiver.sensu.listen", Default: "127.0.0.1:3031", Usage: "address the Sensu receiver accepts Sensu Go TCP handler connections on (one JSON event per connection)"},
	{Key: "receiver.sensu.spool_dir", Default: "/var/tmp/flapjack-sensu-spool", Usage: "directory Sensu events are kept in while Redis is unavailable (the TCP receiver and `receiver json --sensu`), delivered in order when it answers again"},
	{Key: "receiver.sensu.spool_max_bytes", Kind: Int, Default: "67108864", Usage: "largest size of receiver.sensu.spool_dir; when full the oldest events are dropped (a sixteenth of it at a time), counted and logged"},
	{Key: "receiver.alertmanager.entity_labels", Default: "instance,job", Usage: "labels naming an alert's entity, comma-separated, the first one set wins (POST /integrations/alertmanager and /api/v2/alerts)"},
	{Key: "receiver.alertmanager.default_entity", Default: "alertmanager", Usage: "entity of an alert with none of receiver.alertmanager.entity_labels"},
	{Key: "receiver.alertmanager.keep_port", Kind: Bool, Default: "false", Usage: "keep a trailing :port of the entity label (instance=\"web-01:9100\" is entity web-01 unless set)"},
	{Key: "receiver.alertmanager.check_label", Default: "alertname", Usage: "label naming the check; an alert without it is rejected"},
	{Key: "receiver.alertmanager.check_labels", Kind: List, Usage: "labels appended to the check name as ` name=value` when set, for alerts that are one per device, path, ... on an entity"},
	{Key: "receiver.alertmanager.severity_label", Default: "severity", Usage: "label holding the severity: critical and warning are those states, info and none receiver.alertmanager.info_state"},
	{Key: "receiver.alertmanager.info_state", Default: "warning", Choices: []string{"ok", "warning", "critical", "unknown"}, Usage: "state of an alert with severity info or none"},
	{Key: "receiver.alertmanager.default_state", Default: "critical", Choices: []string{"ok", "warning", "critical", "unknown"}, Usage: "state of an alert without a severity, or with one nothing maps"},
	{Key: "receiver.alertmanager.severity_states", Kind: List, Usage: "more severities as SEVERITY=STATE (page=critical,ticket=warning); they win over the built-in ones"},
	{Key: "receiver.alertmanager.summary_annotations", Default: "summary,description", Usage: "annotations tried in order for the summary, comma-separated (none set: the check name)"},
	{Key: "receiver.alertmanager.details_annotation", Default: "description", Usage: "annotation holding the details"},
	{Key: "receiver.alertmanager.label_tags", Kind: Bool, Default: "true", Usage: "make every label of an alert a tag name:value"},
	{Key: "receiver.alertmanager.ttl_from_ends_at", Kind: Bool, Default: "true", Usage: "give alerts posted to /api/v2/alerts (by Prometheus) a ttl reaching to their endsAt, so a firing alert Prometheus stops resending goes stale"},

	{Key: "alertmanager.url", Default: "", Usage: "base URL of an Alertmanager (http://127.0.0.1:9093) that acknowledgements of checks fed by Alertmanager or Prometheus are mirrored into as silences (empty = none)"},
	{Key: "alertmanager.username", Default: "", Usage: "HTTP basic auth user for alertmanager.url (optional)"},
	{Key: "alertmanager.password", Default: "", Usage: "HTTP basic auth password for alertmanager.url", Secret: true},
	{Key: "alertmanager.bearer_token", Default: "", Usage: "bearer token for alertmanager.url (optional; not with alertmanager.username)", Secret: true},
	{Key: "alertmanager.timeout", Kind: Duration, Default: "10s", Usage: "HTTP request timeout towards alertmanager.url"},
	{Key: "alertmanager.sync_interval", Kind: Duration, Default: "2s", Usage: "how often acknowledgements are compared with the silences mirrored"},

	{Key: "gateways.retry.max_attempts", Kind: Int, Default: "6", Usage: "delivery attempts before an alert is dead-lettered to <medium>_notifications_failed"},
	{Key: "gateways.retry.first_backoff", Kind: Duration, Default: "1s", Usage: "wait after the first failed attempt (doubles each time)"},
	{Key: "gateways.sms_replies.code_lifetime", Kind: Duration, Default: "24h", Usage: "how long the code an SMS alert asks to be replied with (\"Reply ACK 4821\") acknowledges its check, for the SMS media with replies on"},
	{Key: "gateways.sms_replies.max_failures", Kind: Int, Default: "5", Usage: "replies naming an unknown or expired code a phone number may send within a code lifetime; further replies from it are refused until the lifetime has passed since its first failure"},
	{Key: "gateways.retry.max_backoff", Kind: Duration, Default: "1m", Usage: "longest wait between attempts (a longer Retry-After is honoured)"},

	{Key: "instance.heartbeat", Kind: Duration, Default: "5s", Usage: "how often each stage refreshes its instance record; a peer silent for 3 beats is dead and its claimed work is requeued, once the peer judging has itself been connected to Redis for longer than 3 beats (so an outage makes no live peer dead)"},
}

// Lookup finds the setting of a key.
func (t Table) Lookup(key string) (Setting, bool) {
	for _, s := range t {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}
