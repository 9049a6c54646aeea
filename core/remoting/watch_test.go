// watch_test.go checks the watcher's bookkeeping: which connections it
// lists, that it lets go of them, and that a flush that begins while it
// lets go is not lost. What the watch does to a blocked connection's input
// is checked by the budget and limit tests.

package remoting

import (
	"sync"
	"testing"

	"github.com/cloudwego/netpoll"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// watchedConn is a connection of s as onPrepare makes it, without a
// socket: an empty input buffer stands in for netpoll's.
func watchedConn(t *testing.T, s *Server) *Conn {
	t.Helper()
	c := s.newConn("127.0.0.1:1", nil, nil)
	c.in = netpoll.NewLinkBuffer()
	c.watched = true
	return c
}

func (w *watcher) lists(c *Conn) bool {
	for _, l := range w.list {
		if l == c {
			return true
		}
	}
	return false
}

// A connection is listed from its flush's first tick until the tick after
// it ended, looked at only once the flush lasted a whole tick, and pushed
// again by its next flush. Driven tick by tick, without the goroutine.
func TestWatcherListsOnlyFlushesUnderWay(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0", MaxPendingRequestBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	w := s.watch
	step := func() { w.tick++; w.take(); w.scan() }
	a, b := watchedConn(t, s), watchedConn(t, s)

	a.beginFlush(0)
	a.beginFlush(0) // not a second push: a is listed
	if w.incoming.Load() != a || a.watchNext != nil {
		t.Fatal("a's flush did not push it once")
	}
	step()
	if !w.lists(a) || a.watchAt != w.tick+1 {
		t.Fatalf("a not listed with its look a tick away: listed %v, look at %d, tick %d", w.lists(a), a.watchAt, w.tick)
	}
	step() // the same flush a tick later: looked at, nothing to do
	if a.watchAt != w.tick+uint64(watchEvery/watchSoon) {
		t.Fatalf("after a look with slow input the next is at %d, tick %d", a.watchAt, w.tick)
	}
	a.endFlush()
	a.endFlush() // a second end changes nothing
	if a.flushState.Load()&1 != 0 {
		t.Fatal("flush still under way after endFlush")
	}
	b.beginFlush(0)
	step()
	if w.lists(a) || a.listed.Load() || !w.lists(b) || w.watching.Load() != 1 {
		t.Fatalf("after a's flush ended: a listed %v (flag %v), b listed %v, watching %d",
			w.lists(a), a.listed.Load(), w.lists(b), w.watching.Load())
	}
	// A new flush of b between two ticks is a new flush: its look is a
	// tick away again.
	b.endFlush()
	b.beginFlush(0)
	step()
	if !w.lists(b) || b.watchAt != w.tick+1 {
		t.Fatalf("b's second flush: listed %v, look at %d, tick %d", w.lists(b), b.watchAt, w.tick)
	}
	a.beginFlush(0)
	b.endFlush()
	step()
	if !w.lists(a) || w.lists(b) {
		t.Fatalf("a's second flush listed %v, b's ended flush listed %v", w.lists(a), w.lists(b))
	}
	a.endFlush()
	step()
	if len(w.list) != 0 || w.watching.Load() != 0 || w.incoming.Load() != nil {
		t.Fatalf("watching %d after every flush ended", len(w.list))
	}
}

// A flush begins while the watcher lets go of its connection: whatever
// the interleaving, a flush under way is listed or on its way there.
func TestWatcherKeepsAFlushThatBeginsWhileItLetsGo(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0", MaxPendingRequestBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	w := s.watch
	c := watchedConn(t, s)
	for round := range 2000 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.endFlush()
			c.beginFlush(0)
		}()
		w.tick++
		w.take()
		w.scan()
		wg.Wait()
		w.tick++
		w.take()
		w.scan()
		if !w.lists(c) || !c.listed.Load() {
			t.Fatalf("round %d: a flush under way is not listed (flag %v)", round, c.listed.Load())
		}
	}
}

// On a real listener the watcher lets go of every connection once their
// traffic ends, and parks.
func TestWatcherParksWhenTrafficEnds(t *testing.T) {
	s, _ := startTiny(t, func(o *Options) { o.Budget = NewBudget(64 << 20) })
	var wires []*remotingtest.Wire
	for range 8 {
		wires = append(wires, dial(t, s))
	}
	for i, wire := range wires {
		for j := range 50 {
			wire.Call(request(codeEcho, int32(i*100+j)))
		}
	}
	remotingtest.WaitFor(t, "the watcher to list nothing and park", func() bool {
		return s.watch.watching.Load() == 0 && s.watch.parked.Load()
	})
}

// The price of a flush that does not block: begun and ended, the
// connection listed as under load (the watcher lets go of it only between
// ticks).
func BenchmarkFlushWatch(b *testing.B) {
	s, err := New(Options{Addr: "127.0.0.1:0", MaxPendingRequestBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	c := s.newConn("127.0.0.1:1", nil, nil)
	c.in = netpoll.NewLinkBuffer()
	c.watched = true
	b.ReportAllocs()
	for b.Loop() {
		c.beginFlush(0)
		c.endFlush()
	}
}
