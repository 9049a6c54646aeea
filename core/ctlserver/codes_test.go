// codes_test.go checks the controller port's code table and what is
// derived from it: names, the authorization classes the package
// documentation lists, the latency classes, the dispatch table, and that
// the leader class is what a node without a leader answers 2007.

package ctlserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// requestClass is the authorization class the code table gives req; a
// code outside it is open (answered 3 by anyone).
func requestClass(req *codec.Command) auth.Class {
	for _, c := range new(Server).codeTable() {
		if c.code == req.Code {
			return c.auth(req)
		}
	}
	return auth.ClassOpen
}

func TestCodeTable(t *testing.T) {
	table := new(Server).codeTable()
	byCode := map[int32]requestCode{}
	for _, c := range table {
		if _, dup := byCode[c.code]; dup {
			t.Errorf("code %d twice", c.code)
		}
		byCode[c.code] = c
		if codec.RequestCodeName(c.code) == "UNKNOWN" || c.handler == nil || c.auth == nil {
			t.Errorf("code %d has no name in codec, no handler or no authorization class", c.code)
		}
	}
	if len(table) != 12 {
		t.Errorf("%d codes, want the 12 the controller serves", len(table))
	}

	authOf := func(want auth.Class, codes ...int32) {
		t.Helper()
		for _, code := range codes {
			if got := requestClass(request(code, 1)); got != want {
				t.Errorf("code %d: auth class %s, want %s", code, got, want)
			}
		}
	}
	authOf(auth.ClassBrokerReport, 904, 1001, 1003, 1013)
	authOf(auth.ClassAdmin, 1009, 1011)
	authOf(auth.ClassConfigRead, 1010)
	authOf(auth.ClassOpen, 1004, 1005, 1006, 1012, 1014, 9999)
	elect := func(want auth.Class, fields ...string) {
		t.Helper()
		if got := requestClass(request(codec.ControllerElectMaster, 1, fields...)); got != want {
			t.Errorf("1002 %v: auth class %s, want %s", fields, got, want)
		}
	}
	elect(auth.ClassBrokerReport, "brokerName", "b", "brokerId", "2")
	elect(auth.ClassBrokerReport, "brokerName", "b", "brokerId", "0", "designateElect", "false")
	elect(auth.ClassAdmin, "brokerName", "b", "brokerId", "2", "designateElect", "true")
	elect(auth.ClassAdmin, "brokerName", "b", "brokerId", "-1")
	elect(auth.ClassAdmin, "brokerName", "b")

	classOf := func(want int, codes ...int32) {
		t.Helper()
		for _, code := range codes {
			if byCode[code].class != want {
				t.Errorf("code %d: class %s, want %s", code, requestClasses[byCode[code].class], requestClasses[want])
			}
		}
	}
	classOf(classHeartbeat, 904)
	classOf(classNode, 1005, 1009, 1010)
	classOf(classLeader, 1001, 1002, 1003, 1004, 1006, 1011, 1012, 1013)

	// Metrics: a counter per code under its name, in its class; UNKNOWN
	// in the node class for the rest.
	m, err := requestMetrics(table)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	m.Write(&text)
	for _, c := range table {
		series := fmt.Sprintf(`%srequests_total{code=%q} 0`, MetricsPrefix, codec.RequestCodeName(c.code))
		if !strings.Contains(text.String(), series) || m.ClassOf(c.code) != c.class {
			t.Errorf("code %d: no counter of its own, or class %d", c.code, m.ClassOf(c.code))
		}
	}
	for _, code := range []int32{0, 1014, 9999, -1} {
		if m.ClassOf(code) != classNode {
			t.Errorf("unknown code %d in class %d", code, m.ClassOf(code))
		}
	}

	// Dispatch: every code routed, only the heartbeats sampled.
	routes := new(Server).dispatchTable()
	if len(routes) != len(table) {
		t.Fatalf("%d routes for %d codes", len(routes), len(table))
	}
	for _, r := range routes {
		if want := r.Code == codec.BrokerHeartbeat; (r.TimeEvery == heartbeatSampleEvery) != want || r.Handler == nil {
			t.Errorf("code %d sampled every %d", r.Code, r.TimeEvery)
		}
	}
}

// A node that knows no leader answers exactly the leader class 2007, and
// the other codes itself.
func TestLeaderClassWithoutLeader(t *testing.T) {
	cfg := DefaultConfig(dledger(t, remotingtest.FreeAddrs(t, 3), 0), "")
	cfg.InMemory, cfg.BindAddress = true, "127.0.0.1"
	s := startNode(t, cfg)
	for _, c := range s.codeTable() {
		req := request(c.code, 1, "clusterName", "c", "brokerName", "b", "brokerId", "1")
		switch c.code {
		case codec.ControllerAlterSyncStateSet:
			req.Body = []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)
		case codec.ControllerGetSyncStateData:
			req.Body = []byte(`["b"]`)
		}
		r := call(t, s, req)
		if (r.Code == codec.ControllerNotLeader) != (c.class == classLeader) {
			t.Errorf("code %d of class %s answered %d %q without a leader", c.code, requestClasses[c.class], r.Code, r.Remark)
		}
	}
}
