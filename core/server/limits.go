// limits.go holds the per-server connection limits: the connection cap at
// accept, the watchdog on unread input, and the test hooks that observe
// them.
package server

import (
	"syscall"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/rocketns/rocketns/core/route"
)

// hooks let tests observe events that have no other outside effect. All nil
// in production.
type hooks struct {
	// connClosed runs after a connection's brokers were dropped.
	connClosed func(id route.ConnID)
	// flushFailed runs when a flush failed, before the connection is
	// closed and while its unsent responses are still held.
	flushFailed func(id route.ConnID)
	// shutdownBegun runs in Shutdown once the server counts as shutting
	// down, before anything is stopped.
	shutdownBegun func()
}

// addConn publishes c unless maxConnections is reached. Connections are
// counted whatever carries them, TLS included.
func (s *Server) addConn(c *conn) bool {
	limit := s.cfg.MaxConnections
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if limit > 0 && len(s.conns) >= limit {
		return false
	}
	s.conns[c.id] = c
	return true
}

// refuseConn logs a connection closed at accept for maxConnections, at most
// once a second so a connection storm does not become a log storm; the line
// says how many were refused since the previous one.
func (s *Server) refuseConn(peer string) {
	s.metrics.connRefused.Inc()
	n := s.refused.Add(1)
	now := time.Now().UnixMilli()
	last := s.refusedLogAt.Load()
	if now-last < 1000 || !s.refusedLogAt.CompareAndSwap(last, now) {
		return
	}
	s.refused.Add(-n)
	s.log.Warn("connection refused: too many connections", "peer", peer, "limit", s.cfg.MaxConnections,
		"refused", n, "setting", "maxConnections")
}

// refuseAtAccept ends a connection from onPrepare. It shuts the socket down rather
// than closing it: netpoll has not registered the connection with its
// poller yet, and a Close here makes it log a failed detach for every
// refused connection. The poller then sees the hang-up and closes it.
func refuseAtAccept(nc netpoll.Connection) {
	if f, ok := nc.(interface{ Fd() int }); ok && syscall.Shutdown(f.Fd(), syscall.SHUT_RDWR) == nil {
		return
	}
	nc.Close()
}

// checkInput closes a netpoll connection whose unread input exceeds
// maxPendingRequestBytes. serveBuffered checks between requests; this runs
// from the tick for connections whose handler is blocked in a flush, when
// netpoll keeps reading from the socket with nobody consuming.
func (s *Server) checkInput(c *conn) {
	limit := s.cfg.MaxPendingRequestBytes
	if c.in == nil || limit <= 0 {
		return
	}
	// Len is an atomic load in netpoll's buffers, safe beside the reader.
	if n := c.in.Len(); n > limit {
		s.log.Warn("closing connection: too many unread request bytes", "peer", c.peer,
			"buffered_bytes", n, "limit", limit, "setting", "maxPendingRequestBytes")
		c.close()
	}
}
