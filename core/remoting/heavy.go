// heavy.go holds the queue heavy requests wait in for their turn
// (Route.Weigh): a few at a time, the turns going round the source
// addresses, while every other request is answered on its connection's
// task at once.

package remoting

import (
	"runtime"
	"sync"

	"github.com/rocketns/rocketns/codec"
)

// Weigh says what a request costs to answer beyond a route query: 0 for
// nothing worth queueing, otherwise a weight in the bytes it makes the
// listener decode or encode (a registration's body, a topic list). See
// Route.Weigh.
type Weigh func(req *codec.Command) int

// HeavyWeight is the weight of a request whose cost has no better
// measure (a list whose size grows with the route table, a write to
// disk): the size of a registration body large enough to queue.
const HeavyWeight = 64 << 10

// Heavy weighs every request of its route HeavyWeight.
func Heavy(*codec.Command) int { return HeavyWeight }

// maxPassed is how many times a waiting request may be passed over by
// lighter ones of its source before it goes first: heavy ones still get
// their turn under a stream of medium ones.
const maxPassed = 8

// DefaultHeavySlots is Options.HeavySlots when not set: half the
// processors, at least one, so that a storm of heavy requests leaves
// cores for the rest (Java gives route queries a pool of their own for
// the same reason).
func DefaultHeavySlots() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// heavyQueue bounds the heavy requests being answered at once and picks
// the next one when a turn frees: the turns go round the source addresses
// that have requests waiting, so one address's connections, however many,
// get one turn in each round; among one address's, the lightest goes
// first, so a 2-topic registration does not wait for the multi-megabyte
// ones of its neighbours, and maxPassed keeps the heavy ones from
// starving. A connection serves its requests one after the other, so it
// has at most one waiting.
//
// A request waits on its connection's task (the connection is served no
// further meanwhile, its input watched as in any blocking wait), and then
// runs there: the queue hands out turns, not goroutines.
type heavyQueue struct {
	mu      sync.Mutex
	free    int
	waiting int
	// ring holds the sources with requests waiting, in the order their
	// turns come; next is the index of the next one.
	ring []*heavySource
	next int
	// sources finds a source of the ring by address.
	sources map[string]*heavySource
}

type heavySource struct {
	ip      string
	waiters []*heavyWaiter
}

type heavyWaiter struct {
	c      *Conn
	weight int
	passed int
	// turn receives true with the turn, or false when the connection
	// closed while it waited: it is not served.
	turn chan bool
}

func newHeavyQueue(slots int) *heavyQueue {
	return &heavyQueue{free: max(1, slots), sources: make(map[string]*heavySource)}
}

// acquire waits for a turn for c's request of weight and reports whether
// it got one (then release must follow); false means c closed meanwhile.
func (q *heavyQueue) acquire(c *Conn, weight int) bool {
	q.mu.Lock()
	if q.free > 0 && q.waiting == 0 {
		q.free--
		q.mu.Unlock()
		return true
	}
	w := &heavyWaiter{c: c, weight: weight, turn: make(chan bool, 1)}
	src := q.sources[c.ip]
	if src == nil {
		src = &heavySource{ip: c.ip}
		q.sources[c.ip] = src
		// A source joining goes last in the round: the one whose turn
		// is next keeps it.
		q.ring = append(q.ring, nil)
		copy(q.ring[q.next+1:], q.ring[q.next:])
		q.ring[q.next] = src
		q.next++
		if q.next == len(q.ring) {
			q.next = 0
		}
	}
	src.waiters = append(src.waiters, w)
	q.waiting++
	q.mu.Unlock()
	c.BeginBlocking()
	ok := <-w.turn
	c.EndBlocking()
	return ok
}

// release hands the turn to the next waiting request of a connection still
// open, or frees it.
func (q *heavyQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.waiting > 0 {
		w := q.pickLocked()
		if w.c.open() {
			w.turn <- true
			return
		}
		w.turn <- false
	}
	q.free++
}

// pickLocked takes the next waiter off the queue: the next source's
// lightest, or its oldest passed over maxPassed times.
func (q *heavyQueue) pickLocked() *heavyWaiter {
	src := q.ring[q.next]
	i := pickNext(src.waiters)
	w := src.waiters[i]
	src.waiters = append(src.waiters[:i], src.waiters[i+1:]...)
	for _, o := range src.waiters {
		if o.weight >= w.weight {
			o.passed++
		}
	}
	q.waiting--
	if len(src.waiters) == 0 {
		delete(q.sources, src.ip)
		q.ring = append(q.ring[:q.next], q.ring[q.next+1:]...)
	} else {
		q.next++
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
	return w
}

// pickNext is the index of the waiter that goes next: the first (oldest)
// one passed over maxPassed times, else the lightest, the oldest of
// equals.
func pickNext(ws []*heavyWaiter) int {
	best := 0
	for i, w := range ws {
		if w.passed >= maxPassed {
			return i
		}
		if w.weight < ws[best].weight {
			best = i
		}
	}
	return best
}

// counts reads how many heavy requests run and wait, for Stats.
func (q *heavyQueue) counts(slots int) (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slots - q.free, q.waiting
}
