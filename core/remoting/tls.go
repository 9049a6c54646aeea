// tls.go serves a TLS connection, once handed off from netpoll, on a
// goroutine of its own with the same request loop.

package remoting

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/cloudwego/netpoll"
)

// defaultHandshakeTimeout bounds a handshake when TLS.HandshakeTimeout is
// not set.
const defaultHandshakeTimeout = 10 * time.Second

// tlsTransport is the TLS side of a Conn: replies are queued in a
// LinkBuffer exactly as on netpoll and written to the TLS connection on
// flush.
type tlsTransport struct {
	raw net.Conn
	tc  *tls.Conn
	out *netpoll.LinkBuffer
}

func (t *tlsTransport) flushRecords(timeout time.Duration) error {
	t.out.Flush()
	n := t.out.Len()
	if n == 0 {
		return nil
	}
	b, err := t.out.Next(n)
	if err != nil {
		return fmt.Errorf("tls flush: %w", err)
	}
	if timeout > 0 {
		t.raw.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err = t.tc.Write(b)
	t.out.Release()
	return err
}

// serveTLS serves one TLS connection on its own goroutine with the same
// request loop as netpoll's: the reader fills only when a frame needs more
// bytes, so input is bounded by one frame, and output by the same flush
// rules.
func (s *Server) serveTLS(raw net.Conn, pre []byte) {
	tc := tls.Server(&prefixConn{Conn: raw, pre: pre}, s.tls.Config)
	out := netpoll.NewLinkBuffer()
	// closer is raw, not tc: tc's Close may block sending close_notify.
	c := s.newConn(raw.RemoteAddr().String(), out, raw)
	c.sniffed = true
	c.tls = &tlsTransport{raw: raw, tc: tc, out: out}
	s.connsMu.Lock()
	if s.closing.Load() {
		// Shutdown may have taken its snapshot before this conn existed.
		s.connsMu.Unlock()
		raw.Close()
		return
	}
	s.addConnLocked(c)
	s.connsMu.Unlock()
	defer func() {
		raw.Close()
		// Deferred replies stop before their buffer goes.
		c.shut()
		out.Close()
		c.releaseHeld()
		s.onClose(c)
	}()
	timeout := s.tls.HandshakeTimeout
	if timeout <= 0 {
		timeout = defaultHandshakeTimeout
	}
	raw.SetDeadline(time.Now().Add(timeout))
	err := tc.Handshake()
	if h := s.events.TLSHandshake; h != nil {
		h(err == nil)
	}
	if err != nil {
		s.log.Info("closing connection: TLS handshake failed", "peer", c.peer, "err", err)
		return
	}
	raw.SetDeadline(time.Time{})
	r := netpoll.NewReader(tc)
	defer r.Release()
	for {
		// Blocks for the next frame; the idle check closes the socket
		// of a peer that sends nothing.
		if _, err := r.Peek(1); err != nil {
			s.log.Debug("tls connection ended", "peer", c.peer, "err", err)
			return
		}
		c.lastActive.Store(s.now.Load())
		if !s.serveBuffered(c, r) {
			return
		}
		c.lastActive.Store(s.now.Load())
	}
}
