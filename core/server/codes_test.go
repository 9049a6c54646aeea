// codes_test.go checks the request-code table and what is derived from it:
// names, the authorization classes the README documents, the metrics'
// classes, and the dispatch table.

package server

import (
	"strings"
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
	authOf(auth.ClassConfigRead, 319, codec.GetRouteSnapshot)
	authOf(auth.ClassBrokerReport, 103, 322, 904)
	authOf(auth.ClassOpen, 101, 105, 106, 206, 219, 224, 304, 311, 312, 313, 901)
	if len(table) != 24 {
		t.Errorf("%d codes, want the 24 the NameServer serves", len(table))
	}
	// The table's copy grows with the table: it waits for a turn in the
	// heavy lane, never delaying route queries.
	if c := byCode[codec.GetRouteSnapshot]; c.weigh == nil || c.class != classAdmin {
		t.Error("ROCKETNS_GET_ROUTE_SNAPSHOT is not a heavy admin request")
	}

	// Metrics: a counter per code under its name, its class; UNKNOWN and
	// the admin class for the rest.
	m := s.metrics
	var text strings.Builder
	m.requests.Write(&text)
	for _, c := range table {
		if !strings.Contains(text.String(), `rocketns_requests_total{code="`+codec.RequestCodeName(c.code)+`"} 0`) || m.classOf(c.code) != c.class {
			t.Errorf("code %d: no counter of its own, or class %d", c.code, m.classOf(c.code))
		}
	}
	for _, code := range []int32{0, 10, 9999, -1, 1 << 20} {
		if m.classOf(code) != classAdmin {
			t.Errorf("unknown code %d in class %d", code, m.classOf(code))
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
