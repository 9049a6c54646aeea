// A request the route table refuses, or a handler that fails part-way,
// leaves the tables as they were; a panic still answers SYSTEM_ERROR with
// a log line, and the server keeps serving.

package server

import (
	"strings"
	"testing"

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

// A panic between any two steps of a registration answers SYSTEM_ERROR,
// writes the listener's "handler panic" line, leaves the route and the
// cluster info as they were, and the same registration succeeds next.
func TestPanicMidRegistrationOverTheWire(t *testing.T) {
	armed := make(chan string, 1) // the point to panic at, once
	s, logs := startHooked(t, testConfig(t), func(s *Server) {
		s.hooks.routeStep = func(point string) {
			select {
			case want := <-armed:
				if want == point {
					panic("injected at " + point)
				}
				armed <- want
			default:
			}
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
	for _, point := range []string{"register: cluster", "register: group", "register: id", "register: filter servers",
		"view: published", "topics: applied", "register: topics applied", "live: added"} {
		armed <- point
		opaque++
		resp := w.Call(registerFrame(t, opaque, "c1", "broker-b", "127.0.0.1:10921", 0, "T1", "T3"))
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "injected at "+point) {
			t.Fatalf("panic at %q: answered %d %q", point, resp.Code, resp.Remark)
		}
		select {
		case <-armed:
			t.Fatalf("the registration never reached %q", point)
		default:
		}
		opaque++
		if ci := clusterInfo(t, w, opaque); ci != beforeCI {
			t.Fatalf("panic at %q changed the cluster info:\nbefore %s\nafter  %s", point, beforeCI, ci)
		}
		opaque++
		if r := route(opaque); r != beforeRoute {
			t.Fatalf("panic at %q changed the route:\nbefore %s\nafter  %s", point, beforeRoute, r)
		}
	}
	if n := strings.Count(logs.String(), "handler panic"); n != 8 {
		t.Fatalf("%d handler panic lines, want 8:\n%s", n, logs)
	}
	mustOK(t, w.Call(registerFrame(t, 100, "c1", "broker-b", "127.0.0.1:10921", 0, "T1", "T3")), "register broker-b")
	if r := route(101); !strings.Contains(r, "broker-b") {
		t.Fatalf("route after the registration went through: %s", r)
	}
}
