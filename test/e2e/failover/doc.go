// Package failover holds end-to-end tests of flapjack against the Redis deployments production
// uses beyond a single local server: a Sentinel-managed master/replica pair that fails over
// under load, and a TLS-only Redis that wants a password. The tests build the real flapjack
// binary once and drive it as subprocesses, as an operator would, so what they check is what a
// deployment sees: the server keeps running through a master failure, its stages follow the
// new master, alerts resume (the alerting gap is measured and logged), and acknowledged events
// are accounted for afterwards; credentials never reach logs, errors or `flapjack status`.
//
// The package has no non-test code. It needs redis-server on PATH (Debian: apt-get install -y
// redis-server); the tests fail, never skip, without it.
package failover
