// gate.go holds the count of running onRequest calls and deferred-reply
// writers that Shutdown waits to drain.

package remoting

import (
	"sync"
	"sync/atomic"
)

// gate counts the onRequest calls (and the writers of deferred replies)
// running so that Shutdown can wait for them. A sync.WaitGroup will not do:
// netpoll may start a call at any time, including while Shutdown waits, and
// a WaitGroup's Add from zero must not race with its Wait. Once closed, the gate turns new calls away instead.
type gate struct {
	n         atomic.Int64 // running calls, plus gateClosed once closed
	closeOnce sync.Once
	drainOnce sync.Once
	drained   chan struct{}
}

const gateClosed = 1 << 62

func newGate() *gate { return &gate{drained: make(chan struct{})} }

// enter reports whether a call may run; if so, leave must follow.
func (g *gate) enter() bool {
	if g.n.Add(1)&gateClosed != 0 {
		g.leave()
		return false
	}
	return true
}

func (g *gate) leave() {
	if g.n.Add(-1) == gateClosed {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

// close turns further calls away and returns a channel closed once the
// running ones have left. It may be called more than once.
func (g *gate) close() <-chan struct{} {
	g.closeOnce.Do(func() {
		if g.n.Add(gateClosed) == gateClosed {
			g.drainOnce.Do(func() { close(g.drained) })
		}
	})
	return g.drained
}
