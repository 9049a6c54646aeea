// statebounds_test.go checks the bounds on the controller's state over the
// wire: broker sets, ids per set and liveness entries stop at their
// settings, each refusal answered SYSTEM_ERROR naming the setting, while
// registered brokers still heartbeat into a full liveness table.

package ctlserver

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
)

func TestStateBoundsDefaults(t *testing.T) {
	c := DefaultConfig(dledger(t, []string{"127.0.0.1:1"}, 0), "")
	c.withDefaults()
	if c.MaxBrokerSets != config.DefaultControllerMaxBrokerSets || c.MaxBrokersPerSet != config.DefaultControllerMaxBrokersPerSet ||
		c.MaxLiveBrokers != config.DefaultControllerMaxLiveBrokers {
		t.Fatalf("bounds %d %d %d", c.MaxBrokerSets, c.MaxBrokersPerSet, c.MaxLiveBrokers)
	}
	s := single(t, nil)
	if s.live.Max != config.DefaultControllerMaxLiveBrokers {
		t.Fatalf("the liveness table is bounded at %d", s.live.Max)
	}
}

// The attack report's flood (20,000 sets, 200,000 liveness entries, all
// accepted), scaled to small bounds: every set, id and liveness entry
// beyond them is refused and nothing past them is stored.
func TestFloodStopsAtTheBounds(t *testing.T) {
	const sets, perSet, live = 20, 3, 40
	s := single(t, func(c *Config) { c.MaxBrokerSets, c.MaxBrokersPerSet, c.MaxLiveBrokers = sets, perSet, live })
	w := dialFrom(t, strangerHost, s.Addr().String())
	opaque := int32(0)
	call := func(code int32, kv ...string) *codec.Command {
		opaque++
		return w.Call(request(code, opaque, kv...))
	}
	apply := func(name string, id int) *codec.Command {
		return call(codec.ControllerApplyBrokerID, "clusterName", "c", "brokerName", name,
			"appliedBrokerId", strconv.Itoa(id), "registerCheckCode", "10.0.0.1:"+strconv.Itoa(id)+";1")
	}
	refusedSets := 0
	for i := 0; i < 2*sets; i++ {
		r := apply("flood-"+strconv.Itoa(i), 1)
		switch {
		case i < sets && r.Code != codec.Success:
			t.Fatalf("set %d refused below the bound: %d %q", i, r.Code, r.Remark)
		case i >= sets:
			if r.Code != codec.SystemError || !strings.Contains(r.Remark, "(controllerMaxBrokerSets)") {
				t.Fatalf("set %d beyond the bound: %d %q", i, r.Code, r.Remark)
			}
			refusedSets++
		}
	}
	for id := 2; id <= 2*perSet; id++ {
		r := apply("flood-0", id)
		if id <= perSet && r.Code != codec.Success || id > perSet && (r.Code != codec.SystemError || !strings.Contains(r.Remark, "(controllerMaxBrokersPerSet)")) {
			t.Fatalf("id %d of one set: %d %q", id, r.Code, r.Remark)
		}
	}
	if gs := s.Groups(); len(gs) != sets || len(groupOf(t, s, "flood-0").Members) != perSet {
		t.Fatalf("%d sets stored, want %d", len(gs), sets)
	}

	// Liveness: made-up brokers up to the bound, then refused; the
	// registered ones (the flood's own sets here) are still admitted.
	hb := func(name string, id int) *codec.Command {
		return call(codec.BrokerHeartbeat, "clusterName", "c", "brokerName", name, "brokerId", strconv.Itoa(id), "brokerAddr", "10.0.0.1:1")
	}
	for i := 0; i < 2*live; i++ {
		r := hb("ghost-"+strconv.Itoa(i), 1)
		if i < live && r.Code != codec.Success ||
			i >= live && (r.Code != codec.SystemError || !strings.Contains(r.Remark, "(controllerMaxLiveBrokers)")) {
			t.Fatalf("heartbeat %d: %d %q", i, r.Code, r.Remark)
		}
	}
	for i := 0; i < sets; i++ {
		if r := hb("flood-"+strconv.Itoa(i), 1); r.Code != codec.Success {
			t.Fatalf("a registered broker's heartbeat into a full table: %d %q", r.Code, r.Remark)
		}
	}
	s.liveMu.Lock()
	n := s.live.Len()
	s.liveMu.Unlock()
	if n != live+sets {
		t.Fatalf("%d liveness entries, want %d", n, live+sets)
	}
	got := s.Refusals()
	if got["broker_sets"] != uint64(refusedSets) || got["brokers_per_set"] != perSet || got["liveness"] != live {
		t.Fatalf("refusals %v", got)
	}
	// A field longer than the bound is never stored.
	long := strings.Repeat("n", 300)
	if r := apply(long, 1); r.Code != codec.SystemError || !strings.Contains(r.Remark, "its brokerName is 300 bytes, at most 256") {
		t.Fatalf("1013 with a long name: %d %q", r.Code, r.Remark)
	}
	if r := hb(long, 1); r.Code != codec.SystemError {
		t.Fatalf("904 with a long name: %d %q", r.Code, r.Remark)
	}
	if n := s.Refusals()["field_size"]; n != 2 {
		t.Fatalf("%d field-size refusals", n)
	}
}
