// bufpool.go holds the listener's pool of reply buffers (Conn.Buffer):
// bounded in what it keeps, and counting what connections hold.

package remoting

import (
	"sync"
	"sync/atomic"

	"github.com/valyala/bytebufferpool"
)

// maxPooledBuffer bounds a reply buffer the pool keeps: one that grew
// larger (a topic list of a big table) is left to the collector.
// maxPooledBytes bounds what the pool keeps in all. An attack of large
// answers thus leaves at most maxPooledBytes behind in the pool once its
// connections are gone, where a pool that keeps whatever comes back (a
// sync.Pool) would hold every buffer of the attack's size until two
// collections have run, and an idle server runs none for minutes.
// maxPooledBuffers bounds how many it keeps, however small.
const (
	maxPooledBuffer  = 1 << 20
	maxPooledBytes   = 8 << 20
	maxPooledBuffers = 1024
)

// bufPool lends reply buffers to connections and takes them back after
// their flush. A buffer a failed flush may still be referenced from is
// forgotten instead (drop), and goes to the collector. It is safe for
// concurrent use; Get and Put allocate nothing once buffers circulate.
type bufPool struct {
	mu   sync.Mutex
	free []*bytebufferpool.ByteBuffer
	// idle is the capacity of the buffers in free.
	idle int
	// lent counts the buffers connections hold (got, neither put nor
	// dropped): back at zero when every connection is idle or gone.
	lent atomic.Int64
}

// PoolStats is what a listener's reply-buffer pool holds, for metrics.
type PoolStats struct {
	// Lent counts the buffers connections hold now.
	Lent int64
	// IdleBytes is the capacity of the buffers kept for reuse (at most
	// 8 MiB).
	IdleBytes int64
}

func (p *bufPool) lend() *bytebufferpool.ByteBuffer {
	p.lent.Add(1)
	p.mu.Lock()
	n := len(p.free)
	if n == 0 {
		p.mu.Unlock()
		return new(bytebufferpool.ByteBuffer)
	}
	b := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	p.idle -= cap(b.B)
	p.mu.Unlock()
	return b
}

// reclaim takes b back, keeping it when it is small enough and the pool has
// room.
func (p *bufPool) reclaim(b *bytebufferpool.ByteBuffer) {
	p.lent.Add(-1)
	c := cap(b.B)
	if c > maxPooledBuffer {
		return
	}
	b.B = b.B[:0]
	p.mu.Lock()
	if p.idle+c <= maxPooledBytes && len(p.free) < maxPooledBuffers {
		p.free = append(p.free, b)
		p.idle += c
	}
	p.mu.Unlock()
}

// drop forgets n lent buffers without taking them back.
func (p *bufPool) drop(n int) {
	if n > 0 {
		p.lent.Add(-int64(n))
	}
}

func (p *bufPool) stats() PoolStats {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	return PoolStats{Lent: p.lent.Load(), IdleBytes: int64(idle)}
}
