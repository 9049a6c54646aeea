// watch.go holds the watch on the input of connections whose flush or
// handler blocks: one goroutine per listener (watcher) that looks at the
// connections that began such a wait, and what a connection does to be
// looked at (beginFlush, endFlush, BeginBlocking).

package remoting

import (
	"math"
	"sync/atomic"
	"time"
)

// watchSoon is the watcher's tick: a flush still under way at two ticks in
// a row has blocked, and its input is looked at then. netpoll reads a
// peer's requests while its replies wait for the peer to read them, and
// one second is hundreds of megabytes on loopback. After a look the next
// comes a tick later while the input grew by watchFast or more since the
// last one, watchEvery later otherwise: at loopback speed 10 ms are some
// 15 MB.
const (
	watchSoon  = time.Millisecond
	watchEvery = 10 * time.Millisecond
	watchFast  = 1 << 20
)

// watcher watches the input of a listener's connections while their flush
// or handler blocks. Nearly every flush ends within microseconds, so a
// flush must cost next to nothing when it does not block: beginning and
// ending one are two atomic stores and an uncontended lock, and only a
// connection not yet listed pushes itself (one CAS) onto incoming. The
// watcher's goroutine ticks every watchSoon while it lists anything and
// parks when it lists nothing; it drops a connection whose flush has ended
// at its next tick, so what it lists is the connections that flushed in
// the last tick, not every connection of the listener. (A timer per
// connection, reset at each flush and stopped after it, cost about a
// thousand instructions per flush.)
type watcher struct {
	s *Server
	// incoming is a stack of connections linked by watchNext, pushed by
	// beginFlush and emptied at once by the watcher.
	incoming atomic.Pointer[Conn]
	// parked is set while the goroutine waits on wake, listing nothing.
	parked atomic.Bool
	wake   chan struct{}
	// watching is len(list), for tests.
	watching atomic.Int64

	// The goroutine's own: the connections it lists, and its tick count.
	list []*Conn
	tick uint64
}

func newWatcher(s *Server) *watcher {
	return &watcher{s: s, wake: make(chan struct{}, 1)}
}

// push lists c; its caller set c.listed, so c is in no list and on no
// stack.
func (w *watcher) push(c *Conn) {
	for {
		h := w.incoming.Load()
		c.watchNext = h
		if w.incoming.CompareAndSwap(h, c) {
			// Parked is read after the push is visible, the reverse of
			// the goroutine's order (run): one of the two sees the other.
			if h == nil && w.parked.Load() {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
			return
		}
	}
}

// run is the watcher's goroutine, until stop closes.
func (w *watcher) run(stop <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		if len(w.list) == 0 {
			w.parked.Store(true)
			if w.incoming.Load() == nil {
				select {
				case <-w.wake:
				case <-stop:
					return
				}
			}
			w.parked.Store(false)
		}
		t.Reset(watchSoon)
		select {
		case <-t.C:
		case <-stop:
			return
		}
		w.tick++
		w.take()
		w.scan()
	}
}

// take moves the connections pushed since the last tick into the list.
// Each is looked at no sooner than the next tick: its flush may have begun
// just now.
func (w *watcher) take() {
	for c := w.incoming.Swap(nil); c != nil; {
		next := c.watchNext
		c.watchNext = nil
		c.watchState = c.flushState.Load()
		c.watchAt = w.tick + 1
		w.list = append(w.list, c)
		c = next
	}
}

// scan drops the connections whose flush ended and looks at those whose
// flush has lasted since the previous tick, when their look is due.
func (w *watcher) scan() {
	keep := w.list[:0]
	for _, c := range w.list {
		st := c.flushState.Load()
		if st&1 == 0 {
			if w.unlist(c) {
				continue
			}
			st = c.flushState.Load()
		}
		keep = append(keep, c)
		if st != c.watchState {
			// Another flush than the one seen last.
			c.watchState, c.watchAt = st, w.tick+1
			continue
		}
		if w.tick < c.watchAt {
			continue
		}
		ok, victims, next := w.s.watchInput(c)
		c.watchAt = w.tick + uint64(next/watchSoon)
		if !ok {
			// Its socket is shut: the flush fails and ends shortly.
			c.watchAt = math.MaxUint64
		}
		if !ok || len(victims) > 0 {
			// Closing runs the close callbacks (route table updates among
			// them) on the closing goroutine: not on the watcher's, which
			// the other blocked flushes wait for.
			go func() {
				evictAll(victims)
				if !ok {
					c.Close()
				}
			}()
		}
	}
	clear(w.list[len(keep):])
	w.list = keep
	w.watching.Store(int64(len(keep)))
}

// unlist lets go of c, whose flush had ended, and reports whether it did:
// c is kept when a flush began meanwhile and found it still listed. The
// flag is cleared before the flush state is read, the reverse of
// beginFlush's order, so one of the two sees the other; when both do, c
// was pushed again and comes back through incoming.
func (w *watcher) unlist(c *Conn) bool {
	c.listed.Store(false)
	if c.flushState.Load()&1 == 0 {
		return true
	}
	return !c.listed.CompareAndSwap(false, true)
}

// beginFlush starts the watch of a netpoll connection's flush (endFlush
// ends it): while the flush blocks, the input netpoll buffers is charged
// beside held (what the flush holds already), and the connection closed
// when it passes MaxPendingRequestBytes or the budget. Only the
// connection's loop calls it; a second call before endFlush is the same
// flush.
func (c *Conn) beginFlush(held int) {
	if !c.watched {
		return
	}
	c.flushPending.Store(int64(held))
	// Written before the state turns odd; the watcher reads it only
	// after seeing it odd.
	c.watchSeen = c.in.Len()
	if st := c.flushState.Load(); st&1 == 0 {
		c.flushState.Store(st + 1)
	}
	if !c.listed.Load() && c.listed.CompareAndSwap(false, true) {
		c.srv.watch.push(c)
	}
}

// endFlush ends what beginFlush began; more than once, or without a
// beginFlush, it does nothing.
func (c *Conn) endFlush() {
	if !c.watched {
		return
	}
	// Under watchMu: a look under way finishes first, so the watcher never
	// acts on a connection whose handler has returned (shutdownSocket).
	c.watchMu.Lock()
	if st := c.flushState.Load(); st&1 == 1 {
		c.flushState.Store(st + 1)
	}
	c.watchMu.Unlock()
}

// BeginBlocking tells the listener that the handler is about to wait (for
// a slot, a lock held by others): netpoll goes on reading the peer's
// requests meanwhile, so the input is watched as during a blocked flush
// until EndBlocking. Only the handler may call it, during its call; TLS
// connections, which read only when asked, need neither.
func (c *Conn) BeginBlocking() {
	held := c.pending
	if c.srv.budget != nil {
		held += c.inputCost(c.consumed)
	}
	c.beginFlush(held)
}

// EndBlocking ends what BeginBlocking began.
func (c *Conn) EndBlocking() { c.endFlush() }

// watchInput charges c's input while its flush blocks; false means c
// must be closed (its socket is shut down already), victims are the
// connections to close to make room, next is when to look again.
func (s *Server) watchInput(c *Conn) (ok bool, victims []*account, next time.Duration) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.flushState.Load()&1 == 0 {
		return true, nil, watchEvery
	}
	n := c.in.Len()
	if limit := s.limits.maxIn; limit > 0 && n > limit {
		s.log.Warn("closing connection: too many unread request bytes", "peer", c.peer,
			"buffered_bytes", n, "limit", limit, "setting", "maxPendingRequestBytes")
		c.shutdownSocket()
		return false, nil, watchEvery
	}
	if want := c.inputCost(n) + int(c.flushPending.Load()); int64(want) > c.acct.mirror.Load() {
		if ok, victims = s.tryCharge(c, want, "input while the connection is blocked"); !ok {
			c.shutdownSocket()
			return false, victims, watchEvery
		}
	}
	next = watchEvery
	if n-c.watchSeen >= watchFast {
		next = watchSoon
	}
	c.watchSeen = n
	return true, victims, next
}
