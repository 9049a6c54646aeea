// limits.go holds the per-listener connection limits: the connection cap
// at accept and the watchdog on unread input.

package remoting

import (
	"syscall"
	"time"

	"github.com/cloudwego/netpoll"
)

// addConn publishes c unless MaxConnections is reached. Connections are
// counted whatever carries them, TLS included.
func (s *Server) addConn(c *Conn) bool {
	limit := s.limits.maxConns
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if limit > 0 && len(s.conns) >= limit {
		return false
	}
	s.conns[c.id] = c
	return true
}

// refuseConn logs a connection closed at accept for MaxConnections, at
// most once a second so a connection storm does not become a log storm;
// the line says how many were refused since the previous one.
func (s *Server) refuseConn(peer string) {
	if h := s.events.ConnRefused; h != nil {
		h()
	}
	n := s.refusedN.Add(1)
	now := time.Now().UnixMilli()
	last := s.refusedLogAt.Load()
	if now-last < 1000 || !s.refusedLogAt.CompareAndSwap(last, now) {
		return
	}
	s.refusedN.Add(-n)
	s.log.Warn("connection refused: too many connections", "peer", peer, "limit", s.limits.maxConns,
		"refused", n, "setting", "maxConnections")
}

// refuseAtAccept ends a connection from onPrepare. It shuts the socket down
// rather than closing it: netpoll has not registered the connection with
// its poller yet, and a Close here makes it log a failed detach for every
// refused connection. The poller then sees the hang-up and closes it.
func refuseAtAccept(nc netpoll.Connection) {
	if f, ok := nc.(interface{ Fd() int }); ok && syscall.Shutdown(f.Fd(), syscall.SHUT_RDWR) == nil {
		return
	}
	nc.Close()
}

// checkInput closes a netpoll connection whose unread input exceeds
// MaxPendingRequestBytes. serveBuffered checks between requests; this runs
// from the tick for connections whose handler is blocked in a flush, when
// netpoll keeps reading from the socket with nobody consuming.
func (s *Server) checkInput(c *Conn) {
	limit := s.limits.maxIn
	if c.in == nil || limit <= 0 {
		return
	}
	// Len is an atomic load in netpoll's buffers, safe beside the reader.
	if n := c.in.Len(); n > limit {
		s.log.Warn("closing connection: too many unread request bytes", "peer", c.peer,
			"buffered_bytes", n, "limit", limit, "setting", "maxPendingRequestBytes")
		c.Close()
	}
}
