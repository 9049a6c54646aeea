// limits.go holds the per-listener connection limits: the connection cap
// and the per-source-address cap at accept, and the watchdog on unread
// input.

package remoting

import (
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cloudwego/netpoll"
)

// addConn publishes c unless MaxConnections (less the reserved room when
// c's address is not one it is kept for), or MaxConnectionsPerIP for c's
// source address, is reached; perIP says which refused it. Connections
// are counted whatever carries them, TLS and those handed to a sniffer's
// protocol included.
func (s *Server) addConn(c *Conn) (ok, perIP bool) {
	limit, ipLimit := s.limits.maxConns, s.limits.maxPerIP
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if limit > 0 {
		n := len(s.conns) + len(s.handed)
		if n >= limit || (n >= limit-s.limits.reserved && !s.reservedFor(c.ip)) {
			return false, false
		}
	}
	if ipLimit > 0 && s.perIP[c.ip] >= ipLimit {
		return false, true
	}
	s.addConnLocked(c)
	return true, false
}

// reservedFor reports whether the room ReservedConnections keeps is open
// to ip. It parses the address, so it runs only once that room is reached.
func (s *Server) reservedFor(ip string) bool {
	if s.limits.reservedFor == nil {
		return false
	}
	a, err := netip.ParseAddr(ip)
	return err == nil && s.limits.reservedFor(a.Unmap())
}

// addConnLocked publishes c; s.connsMu is held.
func (s *Server) addConnLocked(c *Conn) {
	s.conns[c.id] = c
	if c.ip != "" {
		s.perIP[c.ip]++
	}
}

// dropConnLocked forgets c; s.connsMu is held.
func (s *Server) dropConnLocked(c *Conn) {
	if _, ok := s.conns[c.id]; !ok {
		return
	}
	delete(s.conns, c.id)
	s.dropIPLocked(c.ip)
}

// dropIPLocked takes one connection off ip's count ("" is not counted);
// s.connsMu is held.
func (s *Server) dropIPLocked(ip string) {
	if ip == "" {
		return
	}
	if n := s.perIP[ip] - 1; n > 0 {
		s.perIP[ip] = n
	} else {
		delete(s.perIP, ip)
	}
}

// peerIP is the address of a host:port without the port.
func peerIP(peer string) string {
	if h, _, err := net.SplitHostPort(peer); err == nil {
		return h
	}
	return peer
}

// Stats are a listener's counts, for metrics.
type Stats struct {
	// Conns is the number of connections served now.
	Conns int
	// RefusedConns counts connections closed at accept, for any cap;
	// RefusedPerIP those of them for MaxConnectionsPerIP.
	RefusedConns, RefusedPerIP int64
	// Budget is the buffered-bytes budget's counts (shared with the
	// listeners given the same Budget).
	Budget BudgetStats
	// HeavyRunning and HeavyWaiting count the heavy requests (Route.Weigh)
	// being answered and waiting for their turn; HeavySlots bounds the
	// first.
	HeavyRunning, HeavyWaiting, HeavySlots int
	// Pool is the reply-buffer pool's (not shared between listeners).
	Pool PoolStats
}

// Stats reads the listener's counts.
func (s *Server) Stats() Stats {
	running, waiting := s.heavy.counts(s.heavySlots)
	return Stats{Conns: s.ConnCount(), RefusedConns: s.refusedTotal.Load(),
		RefusedPerIP: s.refusedIPTotal.Load(), Budget: s.budget.Stats(),
		HeavyRunning: running, HeavyWaiting: waiting, HeavySlots: s.heavySlots, Pool: s.bufPool.stats()}
}

// refuseConn logs a connection closed at accept for MaxConnections or
// MaxConnectionsPerIP, at most once a second per cause so a connection
// storm does not become a log storm; the line says how many were refused
// since the previous one.
func (s *Server) refuseConn(peer string, perIP bool) {
	s.refusedTotal.Add(1)
	if h := s.events.ConnRefused; h != nil && !perIP {
		h()
	}
	if perIP {
		s.refusedIPTotal.Add(1)
		n := s.refusedIP.Add(1)
		if !s.logEverySecond(&s.refusedIPLogAt) {
			return
		}
		s.refusedIP.Add(-n)
		s.log.Warn("connection refused: too many connections from one address", "peer", peer,
			"limit", s.limits.maxPerIP, "refused", n, "setting", "maxConnectionsPerIP")
		return
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

// logEverySecond reports whether a line rate-limited by at may be logged
// now, and if so records it.
func (s *Server) logEverySecond(at *atomic.Int64) bool {
	now := time.Now().UnixMilli()
	last := at.Load()
	return now-last >= 1000 && at.CompareAndSwap(last, now)
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
