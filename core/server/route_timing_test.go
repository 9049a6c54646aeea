// route_timing_test.go measures the route query walk in process, without
// sockets: decode from a netpoll buffer, look up, encode the reply into a
// netpoll buffer and flush it, through the listener's own connection loop.
// It is the hot path the server runs per GET_ROUTEINFO_BY_TOPIC.

package server

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

// routeWalk is one in-process connection asking one route.
type routeWalk struct {
	s     *Server
	p     *remoting.Pipe
	frame []byte
}

func newRouteWalk(tb testing.TB, version int32) *routeWalk {
	tb.Helper()
	s, err := New(testConfig(tb), quietLog)
	if err != nil {
		tb.Fatal(err)
	}
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1}}
	for i := 0; i < 100; i++ {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: fmt.Sprintf("Topic-%d", i), ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	}
	for _, b := range []struct {
		name, addr string
		id         int64
	}{{"broker-a", "10.0.0.1:10911", 0}, {"broker-a", "10.0.0.2:10911", 1}, {"broker-b", "10.0.0.3:10911", 0}} {
		if _, err := s.routes.Register(&route.Registration{Cluster: "DefaultCluster", BrokerName: b.name, BrokerAddr: b.addr, BrokerID: b.id, Body: rb}); err != nil {
			tb.Fatal(err)
		}
	}
	req := &codec.Command{Code: codec.GetRouteInfoByTopic, Version: version, Opaque: 1, Language: 9, HasExt: true}
	req.SetExt("topic", "Topic-42")
	return &routeWalk{s: s, p: pipe(tb, s), frame: codec.AppendFrame(nil, req)}
}

// once serves frames (one request or a batch) and returns the size of the
// replies.
func (w *routeWalk) once(tb testing.TB, frames []byte) int {
	if err := w.p.Send(frames); err != nil {
		tb.Fatal(err)
	}
	if !w.p.Serve() {
		tb.Fatal("connection closed")
	}
	return w.p.Drain()
}

func TestRouteWalkAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, v := range []int32{317, 479} {
		w := newRouteWalk(t, v)
		if n := w.once(t, w.frame); n < 200 {
			t.Fatalf("version %d: response of %d bytes is not a route", v, n)
		}
		if allocs := testing.AllocsPerRun(1000, func() { w.once(t, w.frame) }); allocs != 0 {
			t.Fatalf("version %d: %.1f allocations per route query, want 0", v, allocs)
		}
	}
}

// A batch of complete route queries buffered at once goes through the
// connection's own loop (the completeness checks, the dispatch, the flush)
// without allocating.
func TestPipelinedRouteQueriesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	const frames = 16
	w := newRouteWalk(t, 479)
	one := w.once(t, w.frame)
	batch := bytes.Repeat(w.frame, frames)
	run := func() {
		if n := w.once(t, batch); n != frames*one {
			t.Fatalf("%d response bytes flushed, want %d", n, frames*one)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(200, run); allocs != 0 {
		t.Fatalf("%.1f allocations per batch of %d pipelined route queries, want 0", allocs, frames)
	}
}

func BenchmarkRouteQueryInProcess(b *testing.B) {
	for _, tc := range []struct {
		name    string
		version int32
	}{{"legacy", 317}, {"standard", 479}} {
		b.Run(tc.name, func(b *testing.B) {
			w := newRouteWalk(b, tc.version)
			b.SetBytes(int64(w.once(b, w.frame)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.once(b, w.frame)
			}
		})
	}
}

// BenchmarkRouteRebuildBaseline is what the Java server does per query and
// what the cached body replaces: assemble the route from the tables and
// serialise it. Compare with BenchmarkRouteQueryInProcess in the same run.
func BenchmarkRouteRebuildBaseline(b *testing.B) {
	w := newRouteWalk(b, 479)
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, ok := w.s.routes.Route("Topic-42")
		if !ok {
			b.Fatal("no route")
		}
		buf = body.AppendTopicRoute(buf[:0], r, body.Standard)
	}
	b.SetBytes(int64(len(buf)))
}

// With orderMessageEnable and an ORDER_TOPIC_CONFIG entry, the decorated
// body is cached too: no allocation once it is built.
func TestOrderedRouteWalkAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	w := newRouteWalk(t, 479)
	plain := w.once(t, w.frame)
	cfg := *w.s.conf()
	cfg.OrderMessageEnable = true
	w.s.admin.cfg.Store(&cfg)
	if err := w.s.kv.Put(orderTopicNamespace, "Topic-42", "broker-a:4;broker-b:4"); err != nil {
		t.Fatal(err)
	}
	// The answer grows by exactly the orderTopicConf member.
	if n, want := w.once(t, w.frame), plain+len(`"orderTopicConf":"broker-a:4;broker-b:4",`); n != want {
		t.Fatalf("ordered answer %d bytes, want %d", n, want)
	}
	if allocs := testing.AllocsPerRun(1000, func() { w.once(t, w.frame) }); allocs != 0 {
		t.Fatalf("%.1f allocations per ordered route query, want 0", allocs)
	}
}
