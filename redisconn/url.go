package redisconn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultURL is used when Config.URL is empty.
const DefaultURL = "redis://127.0.0.1:6379/0"

// defaultHost and defaultPort fill a redis:// URL that leaves them out.
const (
	defaultHost = "127.0.0.1"
	defaultPort = "6379"
)

// redacted replaces secrets in Redact's output.
const redacted = "xxxxx"

// endpoint is a parsed redis.url.
type endpoint struct {
	network  string // "tcp" or "unix"
	addr     string // host:port, or the socket path
	host     string // host part of addr ("" for unix), the default TLS server name
	username string // ACL user; empty for the default user
	password string
	db       int
	tls      bool
}

// String is the endpoint without credentials, for errors and logs.
func (e endpoint) String() string {
	if e.network == "unix" {
		return "unix:" + e.addr
	}
	return e.addr
}

// parseURL reads redis.url. Errors name the setting and never repeat the URL, which may hold a
// password (a "/" in an unencoded password moves it into the host or path).
func parseURL(raw string) (endpoint, error) {
	if raw == "" {
		raw = DefaultURL
	}
	if !strings.Contains(raw, "://") {
		return endpoint{}, errors.New("redis.url: must start with redis://, rediss:// or unix:// (for example redis://127.0.0.1:6379/0)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, errors.New("redis.url: not a valid URL (percent-encode special characters in the password, such as / as %2F and @ as %40)")
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return endpoint{}, errors.New("redis.url: unexpected #fragment")
	}
	if strings.Contains(u.Path, "@") {
		// redis://user:pa/ss@host: the password's "/" ended the host part early.
		return endpoint{}, errors.New("redis.url: \"@\" after the host; percent-encode / in the password as %2F")
	}
	var ep endpoint
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			ep.username, ep.password = u.User.Username(), pw
		} else {
			// redis-cli and redigo read a lone user-info part as the password.
			ep.password = u.User.Username()
		}
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return endpoint{}, errors.New("redis.url: malformed query string")
	}
	for name := range query {
		if name != "db" {
			return endpoint{}, fmt.Errorf("redis.url: unknown parameter %q (only db is understood)", name)
		}
	}
	dbParam, hasDBParam := query["db"]

	switch u.Scheme {
	case "redis", "rediss":
		ep.network, ep.tls = "tcp", u.Scheme == "rediss"
		if u.Opaque != "" {
			return endpoint{}, errors.New("redis.url: write redis://host:port/db")
		}
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = defaultHost
		}
		if port == "" {
			if strings.HasSuffix(u.Host, ":") {
				return endpoint{}, errors.New("redis.url: empty port")
			}
			port = defaultPort
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return endpoint{}, errors.New("redis.url: the port is out of range 1-65535")
		}
		ep.host, ep.addr = host, net.JoinHostPort(host, port)
		path := strings.TrimPrefix(u.Path, "/")
		switch {
		case path != "" && hasDBParam:
			return endpoint{}, errors.New("redis.url: database given both in the path and as ?db=")
		case path != "":
			if ep.db, err = parseDB(path); err != nil {
				return endpoint{}, fmt.Errorf("redis.url: the path must be /N with a database number N >= 0")
			}
		case hasDBParam:
			if ep.db, err = parseDB(dbParam[0]); err != nil || len(dbParam) > 1 {
				return endpoint{}, fmt.Errorf("redis.url: db must be one database number >= 0")
			}
		}
	case "unix":
		ep.network = "unix"
		if u.Host != "" {
			return endpoint{}, errors.New("redis.url: a unix socket path must be absolute: unix:///path/to/redis.sock?db=N")
		}
		if u.Path == "" || u.Path == "/" {
			return endpoint{}, errors.New("redis.url: unix:// needs a socket path: unix:///path/to/redis.sock?db=N")
		}
		ep.addr = u.Path
		if hasDBParam {
			if ep.db, err = parseDB(dbParam[0]); err != nil || len(dbParam) > 1 {
				return endpoint{}, fmt.Errorf("redis.url: db must be one database number >= 0")
			}
		}
	default:
		return endpoint{}, fmt.Errorf("redis.url: scheme %q is not supported; use redis://, rediss:// or unix://", u.Scheme)
	}
	return ep, nil
}

// parseDB reads a database number: digits only, no sign.
func parseDB(s string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not a database number")
	}
	return strconv.Atoi(s)
}

// Redact returns the URL with its password replaced by "xxxxx", for logs and `status`. A lone
// user-info part (redis://secret@host, which redis-cli reads as a password) is replaced whole.
// Text that does not parse as a URL has everything between "://" and the last "@" replaced, so
// a password holding an unencoded "/" or "@" does not leak either.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || strings.Contains(u.Path, "@") {
		return redactLoose(raw)
	}
	if u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	} else {
		u.User = url.User(redacted)
	}
	return u.String()
}

// redactLoose hides everything between the scheme and the last "@".
func redactLoose(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	return raw[:start] + redacted + raw[at:]
}
