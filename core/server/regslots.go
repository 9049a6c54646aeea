// regslots.go holds the registration slots: how many large registrations
// decode and apply at once, and which waiting one goes next.

package server

import (
	"sync"

	"github.com/rocketns/rocketns/core/remoting"
)

// A registration body under smallRegistration costs well under a
// millisecond to decode and apply: it takes no slot, so a broker's
// ordinary registration never waits behind the large ones of others.
const smallRegistration = 64 << 10

// compressedWeight is how much more a compressed body's byte costs than an
// uncompressed one's: its topic records inflate roughly tenfold.
const compressedWeight = 8

// maxPassed is how many times a waiting registration may be passed over
// by smaller ones before it goes first: large ones still get their turn
// under a stream of medium ones.
const maxPassed = 8

// regSlots bounds the registrations that decode and apply at once, so a
// storm of them leaves cores for route queries (Java gives route queries a
// pool of their own for the same reason). A freed slot goes to the
// cheapest waiting registration, not the first: with one slot, a 2-topic
// registration queued behind twelve connections re-sending multi-megabyte
// bodies would otherwise wait for all of them. A connection serves its
// requests one at a time, so each has at most one registration waiting:
// picking the cheapest is fair between connections, and maxPassed keeps
// the large ones from starving.
type regSlots struct {
	mu      sync.Mutex
	free    int
	waiting []*regWaiter
}

type regWaiter struct {
	cost   int
	passed int
	ready  chan struct{}
}

func newRegSlots(n int) *regSlots { return &regSlots{free: max(1, n)} }

// registrationCost is what a body weighs in the queue.
func registrationCost(bodyLen int, compressed bool) int {
	if compressed {
		return bodyLen * compressedWeight
	}
	return bodyLen
}

// acquire waits for a slot for a registration of cost and reports whether
// it took one (then release must follow); small ones take none. While it
// waits, c's input is watched (remoting.Conn.BeginBlocking); c may be nil.
func (q *regSlots) acquire(c *remoting.Conn, cost int) bool {
	if cost < smallRegistration {
		return false
	}
	q.mu.Lock()
	if q.free > 0 && len(q.waiting) == 0 {
		q.free--
		q.mu.Unlock()
		return true
	}
	w := &regWaiter{cost: cost, ready: make(chan struct{})}
	q.waiting = append(q.waiting, w)
	q.mu.Unlock()
	if c != nil {
		c.BeginBlocking()
		defer c.EndBlocking()
	}
	<-w.ready // the slot is handed over by release
	return true
}

// release gives the slot to the next waiting registration, or frees it.
func (q *regSlots) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.free++
		return
	}
	i := pickNext(q.waiting)
	w := q.waiting[i]
	q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
	for _, o := range q.waiting {
		if o.cost >= w.cost {
			o.passed++
		}
	}
	close(w.ready)
}

// pickNext is the index of the waiter that goes next: the first (oldest)
// one passed over maxPassed times, else the cheapest, the oldest of equals.
func pickNext(ws []*regWaiter) int {
	best := 0
	for i, w := range ws {
		if w.passed >= maxPassed {
			return i
		}
		if w.cost < ws[best].cost {
			best = i
		}
	}
	return best
}

// waitingCount is the number of registrations waiting, for tests.
func (q *regSlots) waitingCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}
