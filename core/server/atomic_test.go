// A request the route table refuses, or a handler that fails part-way,
// leaves the tables as they were; a panic still answers SYSTEM_ERROR with
// a log line, and the server keeps serving.

package server

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

func clusterInfo(t *testing.T, w interface {
	Call(*codec.Command) *codec.Command
}, opaque int32) string {
	t.Helper()
	resp := w.Call(request(codec.GetBrokerClusterInfo, opaque))
	if resp.Code != codec.Success {
		t.Fatalf("106: %d %q", resp.Code, resp.Remark)
	}
	return string(resp.Body)
}

// An empty brokerAddr is refused with a remark naming the field, before
// anything changes. Java stores {1:""}; rocketns used to panic half-way
// and leave the broker name in its cluster with no group behind it.
func TestRegisterEmptyAddressOverTheWire(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	mustOK(t, w.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")), "register broker-a")
	before := clusterInfo(t, w, 2)
	for i, name := range []string{"broker-a", "broker-new"} {
		req := registerFrame(t, int32(10+i), "c1", name, "", 1)
		resp := w.Call(req)
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "brokerAddr must not be empty") {
			t.Fatalf("%s with an empty brokerAddr: %d %q", name, resp.Code, resp.Remark)
		}
		if after := clusterInfo(t, w, int32(20+i)); after != before {
			t.Fatalf("refused registration changed the cluster info:\nbefore %s\nafter  %s", before, after)
		}
	}
}

// A panic inside a registration answers SYSTEM_ERROR, writes the
// listener's "handler panic" line, leaves the route and the cluster info as
// they were, and the same registration succeeds next. The panic comes from
// the route table's clock, which a registration reads once it has worked
// out its groups, topics and broker view.
func TestPanicMidRegistrationOverTheWire(t *testing.T) {
	cfg := testConfig(t)
	cfg.ScanNotActiveBrokerInterval = int64(time.Hour / time.Millisecond) // no scan reads the armed clock
	var armed atomic.Bool
	s, logs := startHooked(t, cfg, func(s *Server) {
		s.now = func() int64 {
			if armed.CompareAndSwap(true, false) {
				panic("injected at the clock")
			}
			return time.Now().UnixMilli()
		}
	})
	w := dialWire(t, s.Addr())
	mustOK(t, w.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")), "register broker-a")
	route := func(opaque int32) string {
		resp := w.Call(request(codec.GetRouteInfoByTopic, opaque, "topic", "T1"))
		return string(resp.Body)
	}
	beforeCI, beforeRoute := clusterInfo(t, w, 2), route(3)
	opaque := int32(10)
	for _, r := range []struct{ name, addr string }{{"broker-b", "127.0.0.1:10921"}, {"broker-a", "127.0.0.1:10912"}} {
		armed.Store(true)
		opaque++
		resp := w.Call(registerFrame(t, opaque, "c1", r.name, r.addr, 0, "T1", "T3"))
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "injected at the clock") {
			t.Fatalf("%s at %s: answered %d %q", r.name, r.addr, resp.Code, resp.Remark)
		}
		if armed.Load() {
			t.Fatalf("%s at %s: the registration never read the clock", r.name, r.addr)
		}
		opaque++
		if ci := clusterInfo(t, w, opaque); ci != beforeCI {
			t.Fatalf("the panic changed the cluster info:\nbefore %s\nafter  %s", beforeCI, ci)
		}
		opaque++
		if r := route(opaque); r != beforeRoute {
			t.Fatalf("the panic changed the route:\nbefore %s\nafter  %s", beforeRoute, r)
		}
	}
	if n := strings.Count(logs.String(), "handler panic"); n != 2 {
		t.Fatalf("%d handler panic lines, want 2:\n%s", n, logs)
	}
	mustOK(t, w.Call(registerFrame(t, 100, "c1", "broker-b", "127.0.0.1:10921", 0, "T1", "T3")), "register broker-b")
	if r := route(101); !strings.Contains(r, "broker-b") {
		t.Fatalf("route after the registration went through: %s", r)
	}
}
