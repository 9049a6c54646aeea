// Tests of the size and range bounds: their keys and defaults, the ranges
// checked at load, and the same ranges refusing a run-time update before
// anything is applied.

package config

import (
	"errors"
	"strings"
	"testing"
)

func TestRuntimeUpdateRefusesOutOfRange(t *testing.T) {
	t.Parallel()
	base := Default()
	f := func(text, key, want string) {
		t.Helper()
		n, err := base.RuntimeUpdate(parse(t, text))
		var ue *UpdateError
		if !errors.As(err, &ue) || !errors.Is(err, ErrBadValue) || ue.Key != key {
			t.Fatalf("%q: got %v, want a bad value of %s", text, err, key)
		}
		if n != nil {
			t.Fatalf("%q: refused update returned a config", text)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %q does not say %q", text, err, want)
		}
	}
	// The update that made every route query answer "not ready" forever.
	f("needWaitForService=true\nwaitSecondsForService=2147483647\n", "waitSecondsForService", "want 0..600")
	f("waitSecondsForService=601\n", "waitSecondsForService", "want 0..600")
	f("waitSecondsForService=-1\n", "waitSecondsForService", "want 0..600")
	if base.NeedWaitForService || base.WaitSecondsForService != 45 {
		t.Fatalf("base modified: %+v", base)
	}
	if _, err := base.RuntimeUpdate(parse(t, "needWaitForService=true\nwaitSecondsForService=600\n")); err != nil {
		t.Fatalf("the top of the range: %v", err)
	}
}

// Every numeric key an update may set has a range, so a key added to the
// run-time list cannot arrive without one.
func TestEveryRuntimeNumberHasARange(t *testing.T) {
	t.Parallel()
	for _, name := range RuntimeKeys(RoleBoth) {
		k, _ := LookupKey(name)
		if k.Type != TypeInt && k.Type != TypeInt64 {
			continue
		}
		if k.Range == nil {
			t.Errorf("%s: a run-time number without a range", name)
		}
	}
}

func TestValidateRanges(t *testing.T) {
	t.Parallel()
	f := func(set func(c *Config), want string) {
		t.Helper()
		c := Default()
		set(c)
		err := c.Validate()
		if want == "" {
			if err != nil {
				t.Fatalf("valid config refused: %v", err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
	}
	f(func(c *Config) {}, "")
	f(func(c *Config) { c.WaitSecondsForService = 2147483647 }, "waitSecondsForService=2147483647: want 0..600")
	f(func(c *Config) { c.KVMaxKeyBytes = 0 }, "kvMaxKeyBytes=0: want 16..")
	f(func(c *Config) { c.KVMaxValueBytes = 1<<30 + 1 }, "kvMaxValueBytes=1073741825: want 16..1073741824")
	f(func(c *Config) { c.KVMaxNamespaceBytes = 1000; c.KVMaxValueBytes = 2000 }, "kvMaxNamespaceBytes=1000: want at least kvMaxValueBytes")
	f(func(c *Config) { c.KVMaxTotalBytes = c.KVMaxNamespaceBytes - 1 }, "want at least kvMaxNamespaceBytes")
	f(func(c *Config) { c.MaxHeartbeatTimeoutMillis = 1 << 62 }, "maxHeartbeatTimeoutMillis=4611686018427387904: want 1000..86400000")
	f(func(c *Config) { c.MaxHeartbeatTimeoutMillis = 999 }, "want 1000..86400000")
}

func TestBoundsKeys(t *testing.T) {
	t.Parallel()
	c := Default()
	if c.KVMaxKeyBytes != 1024 || c.KVMaxValueBytes != 64<<10 || c.KVMaxNamespaceBytes != 2<<20 ||
		c.KVMaxTotalBytes != 8<<20 || c.MaxHeartbeatTimeoutMillis != 600000 {
		t.Fatalf("defaults: %+v", c)
	}
	for k, v := range map[string]string{
		"kvMaxKeyBytes": "100", "kvMaxValueBytes": "200", "kvMaxNamespaceBytes": "300",
		"kvMaxTotalBytes": "400", "maxHeartbeatTimeoutMillis": "5000",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
		key, ok := LookupKey(k)
		if !ok || key.Value(c) != v {
			t.Fatalf("%s: set %s, reads %q", k, v, key.Value(c))
		}
		if key.Runtime {
			t.Fatalf("%s: a start-up bound settable at run time", k)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// Clone copies them.
	if n := c.Clone(); n.KVMaxKeyBytes != 100 || n.MaxHeartbeatTimeoutMillis != 5000 {
		t.Fatalf("clone: %+v", n)
	}
}
