// ordered_test.go covers the order-config-decorated route cache.

package route

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func TestRouteBodyOrderedIsCachedByConfAndNeverStale(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("broker-a", "10.0.0.1:10911", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))

	if _, ok := tb.RouteBodyOrdered("nope", body.Legacy, "broker-a:4"); ok {
		t.Fatal("a missing topic has a route")
	}
	b1, ok := tb.RouteBodyOrdered("T", body.Legacy, "broker-a:4")
	if !ok || !strings.Contains(string(b1), `"orderTopicConf":"broker-a:4"`) {
		t.Fatalf("route %s", b1)
	}
	plain, _ := tb.RouteBody("T", body.Legacy)
	if strings.Contains(string(plain), "orderTopicConf") {
		t.Fatalf("the plain body carries the order conf: %s", plain)
	}
	// Same conf: the cached bytes, not a rebuild.
	if b2, _ := tb.RouteBodyOrdered("T", body.Legacy, "broker-a:4"); &b2[0] != &b1[0] {
		t.Fatal("same conf rebuilt the body")
	}
	// A changed KV value is a miss.
	b3, _ := tb.RouteBodyOrdered("T", body.Legacy, "broker-a:2")
	if !strings.Contains(string(b3), `"orderTopicConf":"broker-a:2"`) {
		t.Fatalf("changed conf served %s", b3)
	}
	// A route change (a new broker group) is a miss too.
	mustRegister(t, tb, reg("broker-b", "10.0.0.2:10911", 0, 1, tc("T", 8, 6), tc("V", 4, 6)))
	b4, _ := tb.RouteBodyOrdered("T", body.Legacy, "broker-a:2")
	if !strings.Contains(string(b4), "broker-b") || !strings.Contains(string(b4), `"orderTopicConf":"broker-a:2"`) {
		t.Fatalf("after a route change: %s", b4)
	}
	// Standard dialect has its own slot.
	if b5, _ := tb.RouteBodyOrdered("T", body.Standard, "broker-a:2"); !strings.Contains(string(b5), `"0":"10.0.0.1:10911"`) {
		t.Fatalf("standard: %s", b5)
	}
	if got := tb.CachedRouteBytes(); got <= 0 {
		t.Fatalf("cached bytes %d", got)
	}
}
