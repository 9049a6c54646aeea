// heavy.go holds the queue heavy requests wait in for their turn
// (Route.Weigh): a few at a time, the turns going round the source
// addresses and busy for at most a share of the time, while every other
// request is answered on its connection's task at once.

package remoting

import (
	"runtime"
	"sync"
	"time"

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

// DefaultHeavyShare is Options.HeavyShare when not set: a turn is busy at
// most a tenth of the time once its burst is spent. Measured on two cores,
// a registration storm then left route p99 at 0.8-1.3x its idle figure
// (2.6-8.8x with a half) and was still answered at about 120 000
// topic-broker entries a second.
const DefaultHeavyShare = 0.1

// heavyBurst is how long each turn may be busy back to back before the
// share holds it back: a 100k-topic registration (about 120 ms of work)
// and the ordinary registrations of a few hundred brokers never wait for
// it; only a storm of heavy requests does.
const heavyBurst = 500 * time.Millisecond

// heavyMaxHold is the longest the share holds back a waiting request: once
// one has waited this long, turns are handed out whatever the credit until
// none has. When heavy requests arrive faster than the share answers them
// (a table of millions of entries re-registered on few cores), the queue
// would otherwise grow without end, and a broker whose registration waits
// past its 120 s timeout loses its routes; under the 6 s a 4.x broker
// waits for its answer, a storm is still slowed down by the share.
const heavyMaxHold = 2 * time.Second

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
//
// Turns are also bounded in time. Bounding how many run at once leaves
// cores to route queries only where there are cores to leave: with the
// server on one core (or two shared with other work), a storm of
// registrations decoded back to back takes most of the CPU, and route
// queries, answered at once but waiting for the CPU, were measured with a
// p99 11-12x their idle one. So the turns together may be busy for share
// of their time: each turn's busy time is taken from a credit that grows
// by share of the time passed for each slot, up to heavyBurst per slot;
// while the credit is below zero, turns that free are handed out only
// once it is back to zero. A route query then waits for the CPU behind at
// most one heavy request at a time, not behind a queue of them.
type heavyQueue struct {
	mu      sync.Mutex
	free    int
	waiting int
	// slots is the number of turns, share their bound (>= 1: none).
	slots int
	share float64
	// credit is the turns' busy time left, as of creditAt; paused is
	// set while a timer will hand out the turns held back.
	credit   time.Duration
	creditAt time.Time
	paused   bool
	// now and after are the clock and timer (time.Now, time.AfterFunc;
	// tests step them).
	now   func() time.Time
	after func(time.Duration, func())
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
	since  time.Time // when it began to wait
	// turn receives true with the turn, or false when the connection
	// closed while it waited: it is not served.
	turn chan bool
}

func newHeavyQueue(slots int, share float64) *heavyQueue {
	slots = max(1, slots)
	q := &heavyQueue{free: slots, slots: slots, share: share, sources: make(map[string]*heavySource),
		now: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
	q.credit, q.creditAt = q.burst(), q.now()
	return q
}

// burst is the most credit the turns keep.
func (q *heavyQueue) burst() time.Duration { return heavyBurst * time.Duration(q.slots) }

// bounded says whether the turns' time is bounded at all.
func (q *heavyQueue) bounded() bool { return q.share > 0 && q.share < 1 }

// refillLocked brings the credit up to now: share of the time passed, for
// each slot.
func (q *heavyQueue) refillLocked() {
	now := q.now()
	if d := now.Sub(q.creditAt); d > 0 {
		q.credit = min(q.burst(), q.credit+time.Duration(float64(d)*q.share*float64(q.slots)))
	}
	q.creditAt = now
}

// spentLocked reports whether the credit is spent and no request has
// waited heavyMaxHold: turns wait. It then arranges for the turns held back
// to be handed out when the credit is back to zero, or a waiting request
// is overdue, whichever comes first.
func (q *heavyQueue) spentLocked() bool {
	if !q.bounded() {
		return false
	}
	q.refillLocked()
	if q.credit >= 0 || q.overdueLocked() {
		return false
	}
	if !q.paused {
		q.paused = true
		q.after(min(time.Duration(float64(-q.credit)/(q.share*float64(q.slots)))+1, heavyMaxHold), q.resume)
	}
	return true
}

// overdueLocked reports whether a request has waited heavyMaxHold or more.
func (q *heavyQueue) overdueLocked() bool {
	now := q.now()
	for _, src := range q.ring {
		for _, w := range src.waiters {
			if now.Sub(w.since) >= heavyMaxHold {
				return true
			}
		}
	}
	return false
}

// resume hands out the turns held back while the credit was spent.
func (q *heavyQueue) resume() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.paused = false
	q.handLocked()
}

// acquire waits for a turn for c's request of weight and reports whether
// it got one (then release must follow); false means c closed meanwhile.
func (q *heavyQueue) acquire(c *Conn, weight int) bool {
	q.mu.Lock()
	if q.free > 0 && q.waiting == 0 && !q.spentLocked() {
		q.free--
		q.mu.Unlock()
		return true
	}
	w := &heavyWaiter{c: c, weight: weight, since: q.now(), turn: make(chan bool, 1)}
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

// release gives back a turn that was busy for busy: it goes to the next
// waiting request of a connection still open, or is freed.
func (q *heavyQueue) release(busy time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bounded() {
		q.refillLocked()
		q.credit -= busy
	}
	q.free++
	q.handLocked()
}

// handLocked hands the free turns to the waiting requests of connections
// still open, unless the credit is spent.
func (q *heavyQueue) handLocked() {
	for q.free > 0 && q.waiting > 0 && !q.spentLocked() {
		w := q.pickLocked()
		if w.c.open() {
			q.free--
			w.turn <- true
		} else {
			w.turn <- false
		}
	}
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
