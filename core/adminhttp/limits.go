// limits.go holds the admin listener's caps: connections (idle keep-alive
// ones give way to new clients), requests in flight, header size and
// timeouts. They keep the listener from taking the process's file
// descriptors or CPU from the remoting port, whoever connects to it.

package adminhttp

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Limits. A scraper, a few probes and an operator's browser
// need a handful of connections; every connection is a file descriptor the
// remoting port may need.
const (
	DefaultWriteTimeout      = 30 * time.Second
	DefaultMaxConns          = 64
	DefaultMaxInFlight       = 4
	DefaultQueueWait         = 2 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxHeaderBytes    = 8 << 10
)

// Limits bound what the admin listener's clients can hold. Zero fields
// take the defaults above.
type Limits struct {
	// MaxConns bounds open connections. At the cap a new connection
	// closes an idle keep-alive one, else the oldest that has not sent a
	// request yet; when every one is busy answering, it is closed at once.
	MaxConns int
	// MaxInFlight bounds requests handled at once (the probes /healthz and
	// /readyz excepted); a request waits up to QueueWait for a slot, then
	// gets 503 with Retry-After.
	MaxInFlight int
	QueueWait   time.Duration
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout are net/http's;
	// MaxHeaderBytes too (a larger header gets 431).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                              int
}

func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	def(&l.QueueWait, DefaultQueueWait)
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	return l
}

// gate bounds the requests handled at once.
type gate struct {
	slots chan struct{}
	wait  time.Duration
	busy  atomic.Uint64 // requests answered 503
}

func newGate(n int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, n), wait: wait}
}

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case g.slots <- struct{}{}:
		default:
			t := time.NewTimer(g.wait)
			select {
			case g.slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				g.busy.Add(1)
				w.Header().Set("Retry-After", strconv.Itoa(max(int(g.wait/time.Second), 1)))
				WriteText(w, http.StatusServiceUnavailable, "busy: too many admin requests at once, retry later\n")
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		defer func() { <-g.slots }()
		h.ServeHTTP(w, r)
	})
}

// limitListener caps the open connections of an http.Server whose
// ConnState is its track.
type limitListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu    sync.Mutex
	conns map[net.Conn]connInfo
	seq   uint64 // accept order, for the oldest silent connection

	refused, evicted atomic.Uint64
	warned           atomic.Bool
}

type connInfo struct {
	state http.ConnState
	seq   uint64
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, max: max, log: log, conns: make(map[net.Conn]connInfo, max)}
}

// Accept returns the next connection within the cap. At the cap it closes
// the oldest idle keep-alive connection (its client reconnects when it needs to),
// so idle connections cannot lock scrapers and probes out. With none idle the new connection is closed and Accept goes on, so a
// crowd of connections never holds more than max descriptors.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if len(l.conns) >= l.max {
			idle := l.victim()
			if idle == nil {
				l.mu.Unlock()
				// Counted before the close, which the refused peer sees.
				l.refused.Add(1)
				c.Close()
				if !l.warned.Swap(true) {
					l.log.Warn("admin listener at its connection cap: closing new connections until some close",
						"max_conns", l.max, "addr", l.Addr().String())
				}
				continue
			}
			delete(l.conns, idle)
			idle.Close()
			l.evicted.Add(1)
		}
		l.seq++
		l.conns[c] = connInfo{http.StateNew, l.seq}
		l.mu.Unlock()
		return c, nil
	}
}

// victim is the connection to close for a new one: the oldest idle one,
// else the oldest silent one, else nil. l.mu is held.
func (l *limitListener) victim() net.Conn {
	var idle, silent net.Conn
	var oldIdle, oldSilent uint64
	for c, in := range l.conns {
		switch {
		case in.state == http.StateIdle && (idle == nil || in.seq < oldIdle):
			idle, oldIdle = c, in.seq
		case in.state == http.StateNew && (silent == nil || in.seq < oldSilent):
			silent, oldSilent = c, in.seq
		}
	}
	if idle != nil {
		return idle
	}
	return silent
}

// track is the http.Server's ConnState: it keeps each connection's state
// and forgets closed and hijacked ones.
func (l *limitListener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
		if len(l.conns) < l.max {
			l.warned.Store(false)
		}
	default:
		if in, ok := l.conns[c]; ok {
			in.state = st
			l.conns[c] = in
		}
	}
}

// open is the number of connections counted against the cap.
func (l *limitListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}
