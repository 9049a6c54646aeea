// The size and range bounds (README "Limits"): the KV store's sizes, the cap
// on a broker's heartbeat timeout, and the range every numeric key that can
// change at run time must stay in, checked at load and before an update is
// applied.

package config

import (
	"math"
	"strconv"
)

// Bounds are the limits that keep one request from costing every peer:
// a KV entry large enough to make registration replies unframeable, or a
// heartbeat timeout whose expiry overflows. Start-up settings only.
type Bounds struct {
	KVMaxKeyBytes       int // kvMaxKeyBytes: a KV key or namespace name
	KVMaxValueBytes     int // kvMaxValueBytes: a KV value
	KVMaxNamespaceBytes int // kvMaxNamespaceBytes: one namespace, keys and values, as its JSON counts them
	KVMaxTotalBytes     int // kvMaxTotalBytes: every namespace together (the kvConfig.json file, roughly)

	// MaxHeartbeatTimeoutMillis (maxHeartbeatTimeoutMillis) caps the
	// heartbeatTimeoutMillis a broker registers with.
	MaxHeartbeatTimeoutMillis int64
}

// defaultBounds keeps a namespace at 2 MiB, so the ORDER_TOPIC_CONFIG table a
// registration reply carries fits a 16 MiB frame even if every byte of it
// is a control character the JSON writes as a 6-byte escape; real order-topic
// tables are a few tens of bytes per topic. A heartbeat timeout of up to 10
// minutes covers any real brokerNotActiveTimeoutMillis (the broker's default
// is 10 s, and it registers every 30 s).
func defaultBounds() Bounds {
	return Bounds{
		KVMaxKeyBytes:             1024,
		KVMaxValueBytes:           64 << 10,
		KVMaxNamespaceBytes:       2 << 20,
		KVMaxTotalBytes:           8 << 20,
		MaxHeartbeatTimeoutMillis: 600000,
	}
}

// boundsKeys are the keys of Bounds, part of knownKeys.
func boundsKeys() []Key {
	return []Key{
		intKey("kvMaxKeyBytes", OriginRocketns, false, func(c *Config) *int { return &c.KVMaxKeyBytes }),
		intKey("kvMaxValueBytes", OriginRocketns, false, func(c *Config) *int { return &c.KVMaxValueBytes }),
		intKey("kvMaxNamespaceBytes", OriginRocketns, false, func(c *Config) *int { return &c.KVMaxNamespaceBytes }),
		intKey("kvMaxTotalBytes", OriginRocketns, false, func(c *Config) *int { return &c.KVMaxTotalBytes }),
		int64Key("maxHeartbeatTimeoutMillis", OriginRocketns, false, func(c *Config) *int64 { return &c.MaxHeartbeatTimeoutMillis }),
	}
}

// intRange is the closed range a numeric key must stay in.
type intRange struct{ min, max int64 }

// keyRanges are the ranges checked by Validate and, for the run-time keys,
// by RuntimeUpdate before anything is applied. Never modified.
var keyRanges = map[string]intRange{
	// Route queries are refused for this long after start; brokers
	// register every 30 s, so Java's 45 covers one round and 10 minutes is
	// ample. A peer setting it to 68 years made every route query answer
	// "not ready" forever, across restarts, since the update is persisted.
	"waitSecondsForService": {0, 600},

	"kvMaxKeyBytes":       {16, 1 << 20},
	"kvMaxValueBytes":     {16, 1 << 30},
	"kvMaxNamespaceBytes": {16, 1 << 30},
	"kvMaxTotalBytes":     {16, 1 << 30},
	// At least a second, so a broker is not evicted between two scans of
	// its own heartbeats; at most a day.
	"maxHeartbeatTimeoutMillis": {1000, 86400000},
}

// keyRange returns the range of key, if it has one.
func keyRange(key string) (intRange, bool) {
	r, ok := keyRanges[key]
	return r, ok
}

// outOfRange returns the reason key's value in c is out of its range, or
// "" when it is in it or has none.
func (c *Config) outOfRange(key string) string {
	r, ok := keyRanges[key]
	if !ok {
		return ""
	}
	k, ok := LookupKey(key)
	if !ok {
		return ""
	}
	var v int64
	switch k.Type {
	case TypeInt:
		v = int64(*k.intPtr(c))
	case TypeInt64:
		v = *k.i64Ptr(c)
	default:
		return ""
	}
	if v < r.min || v > r.max {
		return "want " + itoa(r.min) + ".." + itoa(r.max)
	}
	return ""
}

func itoa(n int64) string {
	if n == math.MaxInt64 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

// validateBounds checks every ranged key and the order of the KV sizes.
func (c *Config) validateBounds() []error {
	var errs []error
	for _, k := range knownKeys {
		if why := c.outOfRange(k.Name); why != "" {
			errs = append(errs, c.invalid(k.Name, "%s", why))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if c.KVMaxNamespaceBytes < c.KVMaxValueBytes {
		errs = append(errs, c.invalid("kvMaxNamespaceBytes", "want at least kvMaxValueBytes (%d)", c.KVMaxValueBytes))
	}
	if c.KVMaxTotalBytes < c.KVMaxNamespaceBytes {
		errs = append(errs, c.invalid("kvMaxTotalBytes", "want at least kvMaxNamespaceBytes (%d)", c.KVMaxNamespaceBytes))
	}
	return errs
}

// checkRuntimeRanges is the range check of an update: the first updated
// key out of its range, as an *UpdateError.
func (c *Config) checkRuntimeRanges(keys []string) error {
	for _, k := range keys {
		if why := c.outOfRange(k); why != "" {
			return &UpdateError{Key: k, Err: ErrBadValue, Detail: why}
		}
	}
	return nil
}
