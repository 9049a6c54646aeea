// handoff.go holds the first-bytes decision (plaintext remoting, TLS, or a
// sniffer's protocol) and the hand-off of a connection from netpoll to a
// goroutine of its own with the bytes already read put back in front.
//
// netpoll has no TLS, and a protocol such as a raft transport wants a plain
// net.Conn. Plaintext stays on netpoll; a connection whose first bytes say
// otherwise is detached from netpoll (Detach leaves the socket open), its
// descriptor is turned into a net.Conn, and the bytes netpoll already read
// are put back in front of it. The alternative, owning the listener and
// peeking before netpoll sees a connection, would put a goroutine and a
// blocking read in front of every plaintext accept; this way plaintext pays
// one byte comparison per connection.

package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/cloudwego/netpoll"
)

const (
	// tlsHandshakeRecord is the first byte of every TLS connection. A
	// plaintext frame cannot start with it: its 4-byte length would be
	// at least 0x16000000, far above any frame limit.
	tlsHandshakeRecord = 0x16
	// tlsRecordHeader is the record type, version and length.
	tlsRecordHeader = 5
)

// Sniffer is another protocol served on a listener's port, recognised by a
// fixed magic prefix on a connection's first bytes. Such a connection is
// taken off netpoll as a TLS connection is and handed to Serve as a plain
// net.Conn whose first bytes read are Magic itself.
//
// Magic[0] must be a byte no remoting frame can start with (above the
// first byte of the largest legal length, so 'R' 0x52 and up are safe
// with any frame limit below 1.3 GB) and not TLS's 0x16. Sniffers are
// matched before the TLS mode applies: an enforcing listener still hands
// them over in plaintext.
//
// The dialer must send Magic and then wait for the first bytes Serve
// writes (an acknowledgement) before sending more, the way a TLS client
// waits for the server's hello: bytes that arrive while the connection is
// taken off the poller are carried over when they are already read, but
// the poller may be reading at that very moment, and those would be lost.
type Sniffer struct {
	Magic []byte
	// Serve runs on a goroutine of its own and owns nc: it may return at
	// once and keep nc (a transport's Accept queue), and must close it
	// when done. Shutdown closes every handed-off connection still open.
	// A handed-off connection counts in MaxConnections and
	// MaxConnectionsPerIP until it is closed.
	Serve func(nc net.Conn)
}

// checkSniffers refuses magics that a frame or a TLS hello could start
// with, or that two sniffers share.
func (s *Server) checkSniffers() error {
	frameLead := byte(uint32(s.maxFrame-4) >> 24)
	seen := map[byte]bool{}
	for i, sn := range s.sniffers {
		switch {
		case len(sn.Magic) == 0 || sn.Serve == nil:
			return fmt.Errorf("sniffer %d: needs a magic and a Serve", i)
		case sn.Magic[0] == tlsHandshakeRecord:
			return fmt.Errorf("sniffer %d: magic %q starts like a TLS record", i, sn.Magic)
		case sn.Magic[0] <= frameLead:
			return fmt.Errorf("sniffer %d: magic %q starts like a frame under a %d-byte frame limit", i, sn.Magic, s.maxFrame)
		case seen[sn.Magic[0]]:
			return fmt.Errorf("sniffer %d: another sniffer's magic starts with %#x", i, sn.Magic[0])
		}
		seen[sn.Magic[0]] = true
	}
	return nil
}

// sniff looks at a netpoll connection's first bytes and picks its protocol.
// It reports whether the connection stays on netpoll as plaintext
// remoting.
func (s *Server) sniff(c *Conn, r netpoll.Reader) bool {
	b, err := r.Peek(1)
	if err != nil {
		c.Close()
		return false
	}
	for i := range s.sniffers {
		if sn := &s.sniffers[i]; b[0] == sn.Magic[0] {
			s.sniffMagic(c, r, sn)
			return false
		}
	}
	hello := b[0] == tlsHandshakeRecord
	switch {
	case hello && s.tls == nil:
		s.log.Warn("closing connection: TLS handshake but TLS is disabled", "peer", c.peer, "setting", "tls.server.mode")
		c.Close()
		return false
	case !hello && s.tls != nil && s.tls.Enforce:
		s.log.Warn("closing connection: plaintext but TLS is enforced", "peer", c.peer, "setting", "tls.server.mode")
		c.Close()
		return false
	case hello:
		s.beginTLS(c, r)
		return false
	}
	return true
}

// sniffMagic waits for the whole magic of sn and hands the connection to
// it; a connection that starts like the magic and then differs is neither
// remoting nor that protocol, and is closed.
func (s *Server) sniffMagic(c *Conn, r netpoll.Reader, sn *Sniffer) {
	p, err := r.Peek(len(sn.Magic))
	if err != nil {
		s.log.Debug("closing connection: incomplete protocol magic", "peer", c.peer, "err", err)
		c.Close()
		return
	}
	if !bytes.Equal(p, sn.Magic) {
		s.log.Warn("closing connection: unknown protocol", "peer", c.peer, "first_bytes", fmt.Sprintf("%q", p))
		c.Close()
		return
	}
	serve := sn.Serve
	s.beginHandoff(c, r, func(raw net.Conn, pre []byte) {
		serve(s.trackHanded(&prefixConn{Conn: raw, pre: pre}))
	})
}

// beginTLS hands a TLS connection to serveTLS. It waits for the whole
// first record (the ClientHello): the client sends nothing more until the
// server answers, so nothing can arrive while the connection is detached.
func (s *Server) beginTLS(c *Conn, r netpoll.Reader) {
	hdr, err := r.Peek(tlsRecordHeader)
	if err == nil {
		_, err = r.Peek(tlsRecordHeader + int(binary.BigEndian.Uint16(hdr[3:])))
	}
	if err != nil {
		s.log.Debug("closing connection: incomplete TLS hello", "peer", c.peer, "err", err)
		c.Close()
		return
	}
	s.beginHandoff(c, r, s.serveTLS)
}

// beginHandoff takes a connection off netpoll: it copies what netpoll has
// read and detaches, which happens once onRequest returns. The close
// callback (onClose) then continues the connection with to, in
// continueHandoff.
func (s *Server) beginHandoff(c *Conn, r netpoll.Reader, to func(raw net.Conn, pre []byte)) {
	buffered, err := r.Next(r.Len())
	if err != nil {
		c.Close()
		return
	}
	c.handoff = bytes.Clone(buffered)
	c.handoffTo = to
	r.Release()
	if err := c.nc.(interface{ Detach() error }).Detach(); err != nil {
		s.log.Warn("closing connection: cannot take it off netpoll", "peer", c.peer, "err", err)
		c.handoff, c.handoffTo = nil, nil
		c.Close()
	}
}

// continueHandoff runs in netpoll's close callback of a detached
// connection, after netpoll has removed the socket from its poller, so the
// descriptor is ours: it becomes a net.Conn (a duplicate) and the original
// is closed. Bytes the poller read after beginHandoff's copy are still in
// netpoll's buffer, which is freed after this callback: they go after the
// copy.
func (s *Server) continueHandoff(c *Conn) {
	pre := c.handoff
	if n := c.in.Len(); n > 0 {
		if late, err := c.in.Next(n); err == nil {
			pre = append(pre, late...)
		}
	}
	fdc, ok := c.nc.(interface{ Fd() int })
	if !ok {
		s.log.Error("hand-off: connection has no descriptor", "peer", c.peer)
		return
	}
	f := os.NewFile(uintptr(fdc.Fd()), "handoff")
	raw, err := net.FileConn(f)
	f.Close()
	if err != nil {
		s.log.Warn("closing connection: hand-off failed", "peer", c.peer, "err", err)
		return
	}
	s.connsMu.Lock()
	if s.closing.Load() {
		s.connsMu.Unlock()
		raw.Close()
		return
	}
	// Under connsMu with closing checked, so Shutdown, which snapshots
	// the connections under it after setting closing, waits for this one.
	s.handoffs.Add(1)
	s.connsMu.Unlock()
	to := c.handoffTo
	go func() {
		defer s.handoffs.Done()
		to(raw, pre)
	}()
}

// prefixConn reads pre before the connection: the bytes netpoll read before
// the hand-off.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// handedConn is a sniffed connection given to its protocol, remembered
// until it is closed so that Shutdown can close it. It counts in
// MaxConnections and MaxConnectionsPerIP as long as it is open: a
// protocol sharing the port must not be a way around the caps.
type handedConn struct {
	net.Conn
	s    *Server
	ip   string // for the per-address count; "" when not counted
	once sync.Once
	err  error
}

func (h *handedConn) Close() error {
	h.once.Do(func() {
		h.err = h.Conn.Close()
		h.s.connsMu.Lock()
		if _, ok := h.s.handed[h]; ok {
			delete(h.s.handed, h)
			h.s.dropIPLocked(h.ip)
		}
		h.s.connsMu.Unlock()
	})
	return h.err
}

// trackHanded remembers nc as handed off, counted in the caps (it passed
// them at accept); during Shutdown it is closed at once instead.
func (s *Server) trackHanded(nc net.Conn) net.Conn {
	h := &handedConn{Conn: nc, s: s}
	if s.limits.maxPerIP > 0 {
		h.ip = peerIP(nc.RemoteAddr().String())
	}
	s.connsMu.Lock()
	closing := s.closing.Load()
	if !closing {
		s.handed[h] = struct{}{}
		if h.ip != "" {
			s.perIP[h.ip]++
		}
	}
	s.connsMu.Unlock()
	if closing {
		nc.Close()
	}
	return h
}

// closeHanded closes every handed-off connection still open.
func (s *Server) closeHanded() {
	s.connsMu.Lock()
	list := make([]*handedConn, 0, len(s.handed))
	for h := range s.handed {
		list = append(list, h)
	}
	s.connsMu.Unlock()
	for _, h := range list {
		if err := h.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Debug("closing handed-off connection", "peer", h.RemoteAddr().String(), "err", err)
		}
	}
}
