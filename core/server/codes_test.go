// codes_test.go checks the request-code table and what is derived from it:
// names, the authorization classes the README documents, the metrics'
// classes, and the dispatch table.

package server

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
)

func TestCodeTable(t *testing.T) {
	s, err := New(testConfig(t), quietLog)
	if err != nil {
		t.Fatal(err)
	}
	table := s.codeTable()
	byCode := map[int32]requestCode{}
	for _, c := range table {
		if _, dup := byCode[c.code]; dup {
			t.Errorf("code %d twice", c.code)
		}
		byCode[c.code] = c
		if codec.RequestCodeName(c.code) == "UNKNOWN" {
			t.Errorf("code %d has no name in codec", c.code)
		}
		if c.handler == nil {
			t.Errorf("code %d has no handler", c.code)
		}
	}
	authOf := func(want auth.Class, codes ...int32) {
		t.Helper()
		for _, code := range codes {
			if c, ok := byCode[code]; !ok || c.auth != want {
				t.Errorf("code %d: auth class %s, want %s", code, c.auth, want)
			}
		}
	}
	authOf(auth.ClassAdmin, 100, 102, 205, 216, 318, 327)
	authOf(auth.ClassBrokerWrite, 104, 217)
	authOf(auth.ClassConfigRead, 319)
	authOf(auth.ClassBrokerReport, 103, 322, 904)
	authOf(auth.ClassOpen, 101, 105, 106, 206, 219, 224, 304, 311, 312, 313, 901)
	if len(table) != 23 {
		t.Errorf("%d codes, want the 23 the NameServer serves", len(table))
	}

	// Metrics: a counter slot per code, the class of each, UNKNOWN for
	// the rest.
	m := s.metrics
	for _, c := range table {
		if m.names[m.codeSlot(c.code)] != codec.RequestCodeName(c.code) || m.classOf(c.code) != c.class {
			t.Errorf("code %d: metrics slot %q class %d", c.code, m.names[m.codeSlot(c.code)], m.classOf(c.code))
		}
	}
	for _, code := range []int32{0, 10, 9999, -1, 1 << 20} {
		if m.codeSlot(code) != 0 || m.classOf(code) != classAdmin {
			t.Errorf("unknown code %d counted in slot %d class %d", code, m.codeSlot(code), m.classOf(code))
		}
	}
	if m.classOf(codec.GetRouteInfoByTopic) != classRoute || m.classOf(codec.BrokerHeartbeat) != classRegistration {
		t.Error("route or registration class lost")
	}

	// Dispatch: every code routed, only the route class sampled.
	routes := s.dispatchTable()
	if len(routes) != len(table) {
		t.Fatalf("%d routes for %d codes", len(routes), len(table))
	}
	for _, r := range routes {
		if want := byCode[r.Code].class == classRoute; (r.TimeEvery == routeSample) != want {
			t.Errorf("code %d sampled every %d", r.Code, r.TimeEvery)
		}
	}
}

func TestMetricsRefuseABadTable(t *testing.T) {
	ok := requestCode{code: 100}
	for _, codes := range [][]requestCode{{ok, ok}, {{code: codeSlots}}, {{code: 0}}} {
		if _, err := newServerMetrics(codes); err == nil {
			t.Errorf("newServerMetrics(%v) accepted", codes)
		}
	}
}
