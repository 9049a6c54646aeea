// budget.go holds the process-wide budget for buffered request and
// response bytes, the account each connection keeps against it, and the
// hooks that charge those accounts where a connection buffers bytes.

package remoting

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Budget bounds the bytes all connections of a process (every listener
// given the same Budget) hold buffered: frames being received, requests
// read but not yet released, replies not yet sent. netpoll reads whatever
// a peer sends, so a peer that declares a 16 MiB frame and sends it slowly,
// or pipelines requests and never reads the replies, makes the process
// hold what it sent; without a bound, a few hundred such peers exhaust
// memory.
//
// A connection's account is set, not added to: each hook says how many
// bytes the connection holds (or is about to receive) now. A charge that
// does not fit closes connections holding more than the one asking, the
// largest first, when that makes room; otherwise the one asking is
// refused (and closed by its hook). A small request thus always gets
// through at the cost of the largest holders, and a large one cannot push
// out smaller ones. Amounts below budgetMinCharge are not charged: they
// stay off the budget's lock on the common path, and bound what they can
// hold by the connection count (see README "Limits").
//
// A Budget is safe for concurrent use.
type Budget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	holders map[*account]struct{} // accounts with cur > 0
	// peak is the most used at any time, for Stats: what the budget's
	// bound held against. high is the most used since the last
	// collection the budget started (settle), settledAt when that was.
	peak, high int64
	settledAt  time.Time

	refused atomic.Int64
	evicted atomic.Int64
	// logAt and logged rate-limit the over-budget log line.
	logAt  atomic.Int64
	logged atomic.Int64
}

// budgetMinCharge is the smallest amount charged; see Budget.
const budgetMinCharge = 16 << 10

// inputCost is what n request bytes in netpoll's input buffer cost in
// memory, as charged. netpoll reads into nodes as large as the most the
// connection has held (up to mallocMax), so besides the data there is
// the node being filled, up to that size again; and a frame that spans
// nodes is copied into one piece when it is read, which doubles it. So:
// the data, plus the larger of itself and the connection's peak (capped).
// It runs on the connection's goroutine and on its flush watch.
func (c *Conn) inputCost(n int) int {
	if n == 0 {
		return 0
	}
	peak := c.inPeak.Load()
	if int64(n) > peak {
		c.inPeak.CompareAndSwap(peak, int64(n))
		peak = int64(n)
	}
	return n + max(n, int(min(peak, netpollMallocMax)))
}

// netpollMallocMax is netpoll's largest input node (its mallocMax).
const netpollMallocMax = 8 << 20

// NewBudget is a budget of limit bytes; limit <= 0 is no bound (nil).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit, holders: make(map[*account]struct{})}
}

// DefaultBudgetBytes is the budget when no setting gives one: a quarter of
// the Go memory limit (GOMEMLIMIT, or what the program set), leaving the
// rest to the route table, the KV store and the runtime's own overhead;
// without a memory limit, 256 MiB. Never below 64 MiB, so that a few
// frames of the default 16 MiB maximum fit.
func DefaultBudgetBytes() int64 {
	const floor, unset = 64 << 20, 256 << 20
	lim := debug.SetMemoryLimit(-1) // reads the limit without changing it
	if lim <= 0 || lim == math.MaxInt64 {
		return unset
	}
	return max(lim/4, floor)
}

// BudgetStats is what a budget counts, for metrics.
type BudgetStats struct {
	Limit, Used int64
	// Peak is the most Used has been since the budget was made.
	Peak int64
	// Refused counts charges refused (each closed its connection);
	// Evicted counts connections closed to make room for a smaller one.
	Refused, Evicted int64
}

// Stats reads the budget's counts; a nil Budget reads zero.
func (b *Budget) Stats() BudgetStats {
	if b == nil {
		return BudgetStats{}
	}
	b.mu.Lock()
	used, peak := b.used, b.peak
	b.mu.Unlock()
	return BudgetStats{Limit: b.limit, Used: used, Peak: peak, Refused: b.refused.Load(), Evicted: b.evicted.Load()}
}

// account is one connection's share of a budget. cur and evicted are
// guarded by the budget's mu; mirror repeats cur for lock-free reads on
// the request path.
type account struct {
	cur     int64
	evicted bool
	mirror  atomic.Int64
	// evict closes the connection; it runs outside the budget's lock.
	evict func()
}

// set makes a's charge n bytes and reports whether it fits; victims are
// the accounts emptied to make room, whose connections the caller closes.
// An evicted account is refused every charge but zero.
func (b *Budget) set(a *account, n int64) (ok bool, victims []*account) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= a.cur {
		b.put(a, n)
		return true, nil
	}
	if a.evicted {
		return false, nil
	}
	need := b.used - a.cur + n - b.limit
	if need <= 0 {
		b.put(a, n)
		return true, nil
	}
	// Only accounts larger than a's new charge give way, largest first.
	var larger []*account
	var room int64
	for h := range b.holders {
		if h != a && h.cur > n {
			larger = append(larger, h)
			room += h.cur
		}
	}
	if room < need {
		b.refused.Add(1)
		return false, nil
	}
	slices.SortFunc(larger, func(x, y *account) int {
		switch {
		case x.cur > y.cur:
			return -1
		case x.cur < y.cur:
			return 1
		}
		return 0
	})
	for _, v := range larger {
		if need <= 0 {
			break
		}
		need -= v.cur
		b.put(v, 0)
		v.evicted = true
		victims = append(victims, v)
	}
	b.evicted.Add(int64(len(victims)))
	b.put(a, n)
	return true, victims
}

// put moves a's charge to n; b.mu is held.
func (b *Budget) put(a *account, n int64) {
	b.used += n - a.cur
	b.peak = max(b.peak, b.used)
	b.high = max(b.high, b.used)
	a.cur = n
	a.mirror.Store(n)
	if n == 0 {
		delete(b.holders, a)
	} else {
		b.holders[a] = struct{}{}
	}
}

// settleEvery is the least time between two collections settle starts.
const settleEvery = 30 * time.Second

// settle starts a collection when connections let go of most of what
// they held: the budget held a quarter of its limit or more since the
// last one and holds an eighth of that or less now. Go gives memory back
// to the system only after a collection has found it free, and an idle
// server allocates nothing that would start one (the runtime forces one
// every two minutes, and its scavenger then returns pages at its own
// pace): after an attack, the read buffers netpoll pooled for its
// connections (a sync.Pool, emptied by the second collection after they
// came back) and the replies built for them would stay resident until
// then. It runs from the listeners' tick, so at most once a second, and
// starts at most one pair of collections per settleEvery, only after a
// quarter of the budget was taken again. now is the tick's clock.
func (b *Budget) settle(now time.Time) (released int64, ok bool) {
	if b == nil {
		return 0, false
	}
	b.mu.Lock()
	high, used := b.high, b.used
	if high < b.limit/4 || used > high/8 || now.Sub(b.settledAt) < settleEvery {
		b.mu.Unlock()
		return 0, false
	}
	b.high, b.settledAt = used, now
	b.mu.Unlock()
	go func() {
		runtime.GC()
		runtime.GC()
	}()
	return high - used, true
}

// charge sets c's account to n bytes (nothing below budgetMinCharge) and
// reports whether the connection may go on; on false it has been closed.
// Connections closed to make room are closed here too. It must be called
// with no lock held (see the lock order in doc.go): closing a connection
// runs callbacks that take them.
func (s *Server) charge(c *Conn, n int, why string) bool {
	ok, victims := s.tryCharge(c, n, why)
	evictAll(victims)
	if !ok {
		c.Close()
	}
	return ok
}

// tryCharge is charge without closing anything: ok says whether c may go
// on, victims are the accounts emptied to make room, whose connections the
// caller closes (evictAll) once it holds no lock. The first refusal or
// eviction of each second is logged with the counts since the previous
// line.
func (s *Server) tryCharge(c *Conn, n int, why string) (ok bool, victims []*account) {
	b := s.budget
	if b == nil {
		return true, nil
	}
	if n < budgetMinCharge {
		n = 0
		if c.acct.mirror.Load() == 0 {
			return true, nil
		}
	}
	ok, victims = b.set(&c.acct, int64(n))
	if ok && len(victims) == 0 {
		return true, nil
	}
	b.logged.Add(1)
	now := time.Now().UnixMilli()
	if last := b.logAt.Load(); now-last >= 1000 && b.logAt.CompareAndSwap(last, now) {
		st := b.Stats()
		s.log.Warn("closing connections: buffered bytes over budget", "peer", c.peer, "wanted_bytes", n, "for", why,
			"budget_bytes", st.Limit, "used_bytes", st.Used, "closed_since_last_line", b.logged.Swap(0),
			"refused_total", st.Refused, "evicted_total", st.Evicted, "setting", "maxBufferedBytes")
	}
	return ok, victims
}

// evictAll closes the connections of accounts emptied to make room.
func evictAll(victims []*account) {
	for _, v := range victims {
		v.evict()
	}
}

// shutdownSocket makes netpoll stop reading from c at once: a Close of a
// connection whose handler is running takes effect only when the handler
// returns, and until then the poller keeps buffering what the peer sends.
// Only the watch may call it, under watchMu while the connection is held
// in a flush or a blocking wait: the descriptor is then certain to be the
// connection's (netpoll closes it only after the handler has returned).
// The Close follows once the watch lets go of watchMu.
func (c *Conn) shutdownSocket() {
	if f, ok := c.nc.(interface{ Fd() int }); ok {
		syscall.Shutdown(f.Fd(), syscall.SHUT_RDWR)
	}
}

// chargeBatch charges, between two requests of a batch, what c holds:
// the requests read since the last flush and those still unread (n), and
// the replies not yet flushed. It reports false when c was closed.
func (s *Server) chargeBatch(c *Conn, n int) bool {
	held := c.inputCost(n+c.consumed) + c.pending
	if held < budgetMinCharge || int64(held) <= c.acct.mirror.Load() {
		return true
	}
	return s.charge(c, held, "pipelined requests")
}

// uncharge empties c's account, when its connection ends.
func (s *Server) uncharge(c *Conn) {
	if s.budget != nil && c.acct.mirror.Load() != 0 {
		s.budget.set(&c.acct, 0)
	}
}

// reserveFrame charges, before waiting for the rest of a frame, the whole
// frame its length prefix declares: netpoll will buffer all of it,
// however slowly the peer sends. It waits for the prefix first (at most
// the idle timeout, as any partial read). It reports false when the
// connection was closed; a prefix that does not arrive or declares more
// than the frame limit is left to the read that follows, which fails on
// it as before.
func (s *Server) reserveFrame(c *Conn, r interface{ Peek(int) ([]byte, error) }) bool {
	if s.budget == nil {
		return true
	}
	p, err := r.Peek(4)
	if err != nil {
		return true
	}
	n := 4 + int(uint32(p[0])<<24|uint32(p[1])<<16|uint32(p[2])<<8|uint32(p[3]))
	if n > s.maxFrame {
		return true
	}
	// What the connection held before was flushed and released: the
	// frame is all it holds now.
	return s.charge(c, c.inputCost(n), "frame")
}
