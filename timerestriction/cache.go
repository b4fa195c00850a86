package timerestriction

import (
	"sync"
	"time"
)

// DefaultCacheSize suits a few thousand distinct (time_restrictions, timezone) pairs.
const DefaultCacheSize = 4096

// Cache memoises ParseList by (raw string, location name): rules are re-read from Redis for
// every notification, and parsing rrules each time would dominate the notifier's work. It is
// safe for concurrent use and holds at most its size in entries; when full, an arbitrary entry
// is evicted, which is enough because the working set is normally far smaller than the bound.
type Cache struct {
	size    int
	mu      sync.RWMutex
	entries map[cacheKey]cacheEntry
}

type cacheKey struct {
	raw, loc string
}

type cacheEntry struct {
	rs   []*Restriction
	errs []error
}

// NewCache returns a cache holding at most size entries (DefaultCacheSize if size < 1).
func NewCache(size int) *Cache {
	if size < 1 {
		size = DefaultCacheSize
	}
	return &Cache{size: size, entries: make(map[cacheKey]cacheEntry)}
}

// ParseList is the package's ParseList, memoised. Locations are told apart by name, so two
// different locations must not share one. The returned slices are the caller's own.
func (c *Cache) ParseList(raw string, loc *time.Location) ([]*Restriction, []error) {
	if loc == nil {
		loc = time.UTC
	}
	key := cacheKey{raw: raw, loc: loc.String()}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok {
		// Parsing outside the lock lets other lookups proceed; two goroutines may parse the
		// same value at once, which only costs time.
		e.rs, e.errs = ParseList(raw, loc)
		c.mu.Lock()
		if _, present := c.entries[key]; !present && len(c.entries) >= c.size {
			for k := range c.entries { // map order is unspecified: this evicts an arbitrary entry
				delete(c.entries, k)
				break
			}
		}
		c.entries[key] = e
		c.mu.Unlock()
	}
	return clone(e.rs), clone(e.errs)
}

// Active tells whether a rule with this time_restrictions value is active at t in loc, with
// the errors of the restrictions that could not be read (those count as inactive, docs/decisions.md D9).
// It has the shape of the notifier's TimeRestrictions interface.
func (c *Cache) Active(raw string, loc *time.Location, t time.Time) (bool, []error) {
	rs, errs := c.ParseList(raw, loc)
	return ListActive(rs, errs, t), errs
}

// Len returns the number of cached entries.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

func clone[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}
