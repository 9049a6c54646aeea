// The raft StreamLayer: connections handed over by a shared listener or
// accepted on a port of its own, from members' addresses only, opened by
// the exchange in handshake.go, capped, and closed when idle.

package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// DefaultIdleTimeout closes an accepted raft connection that carried
// nothing for this long. A leader sends to each follower every few tens of
// milliseconds (heartbeats at a tenth of the heartbeat timeout, and its
// replication at the commit timeout), so only connections raft keeps
// pooled and unused, and held ones, reach it. A dialer replaces its own
// pooled connection idle for half as long before using it again, so raft
// never sends on one the acceptor is closing.
const DefaultIdleTimeout = 30 * time.Second

// ErrStreamClosed is returned by Accept and Handoff once the layer is closed.
var ErrStreamClosed = errors.New("raft stream layer closed")

// StreamOptions configure a StreamLayer.
type StreamOptions struct {
	// Advertise is the address peers dial to reach this node (its raft
	// address in the membership); raft tells followers the leader's
	// address from it. It may be a host name that does not resolve yet.
	// Empty means the bound address of Bind.
	Advertise string
	// Bind, when set, is a TCP listener of the layer's own (jRaft style:
	// raft on its own port); without it the layer is fed by Handoff only.
	Bind string
	Log  *slog.Logger

	// Secret is the cluster secret every member shares (at least
	// MinSecretLen bytes): each connection proves it both ways. Nil is
	// none.
	Secret []byte
	// TLS turns on mutual TLS between members. Nil is none.
	TLS *PeerTLS

	// MaxConns and MaxConnsPerIP cap the connections the own listener
	// holds (being opened or open), and those from one source address;
	// beyond them a connection is closed at accept. Zero is no cap.
	// Handed-over connections are counted by the listener that hands them.
	MaxConns, MaxConnsPerIP int
	// IdleTimeout closes an accepted connection silent this long; zero is
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a connection's opening exchange; zero is
	// PreambleTimeout.
	HandshakeTimeout time.Duration
}

// StreamLayer implements raft.StreamLayer. Accept returns connections fed by
// Handoff (from a listener shared with the remoting port) or by its own TCP
// listener; either way the source address must be a member's and the
// opening exchange (handshake.go) must succeed first. Until a node attaches
// its membership, every connection is refused.
type StreamLayer struct {
	advertise advertisedAddr
	conns     chan net.Conn
	closed    chan struct{}
	log       *slog.Logger
	peers     *peerSet
	secret    []byte
	tls       *PeerTLS

	maxConns, maxPerIP int
	idle               time.Duration
	handshakeTimeout   time.Duration

	mu       sync.Mutex // guards isClosed, open, perIP, held; orders wg.Add before wg.Wait
	isClosed bool
	// open holds every connection accepted or dialed and not yet closed:
	// raft's transport does not close them on shutdown, and a node stopped
	// inside a running process must not leave its peers' readers hanging.
	open map[*streamConn]struct{}
	// opening holds the connections in their opening exchange, closed by
	// Close so that it need not wait for their timeout.
	opening map[net.Conn]struct{}
	// held and perIP count the own listener's connections, being opened
	// or open, for the caps.
	held  int
	perIP map[netip.Addr]int
	ln    net.Listener // owned in standalone mode, nil otherwise
	wg    sync.WaitGroup

	refused  [refusalKinds]atomic.Int64
	refusals [refusalKinds]logLimiter
}

// refusal is why a connection was closed before raft saw it.
type refusal int

const (
	refusedAddress   refusal = iota // the source is no member's host
	refusedCap                      // MaxConns
	refusedCapPerIP                 // MaxConnsPerIP
	refusedHandshake                // no preamble, a failed TLS or hello, a timeout
	refusedProof                    // the cluster secret not proven
	refusedMember                   // the dialer's id is no member's
	refusalKinds
)

var refusalText = [refusalKinds]string{
	"the source address is not a member's host",
	"too many raft connections",
	"too many raft connections from one address",
	"the opening exchange failed",
	"the peer did not prove the cluster secret",
	"the peer's id is not a member",
}

// NewStreamLayer returns a layer fed only by Handoff, advertised at
// advertise.
func NewStreamLayer(advertise string, log *slog.Logger) (*StreamLayer, error) {
	return NewStream(StreamOptions{Advertise: advertise, Log: log})
}

// ListenStream returns a layer that owns a TCP listener on bind (jRaft
// style: raft on its own port) and also accepts Handoff connections. An
// empty advertise means the bound address.
func ListenStream(bind, advertise string, log *slog.Logger) (*StreamLayer, error) {
	return NewStream(StreamOptions{Bind: bind, Advertise: advertise, Log: log})
}

func listenStream(bind, advertise string, log *slog.Logger, handshakeTimeout time.Duration) (*StreamLayer, error) {
	return NewStream(StreamOptions{Bind: bind, Advertise: advertise, Log: log, HandshakeTimeout: handshakeTimeout})
}

// NewStream returns a layer configured by o.
func NewStream(o StreamOptions) (*StreamLayer, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if len(o.Secret) > 0 && len(o.Secret) < MinSecretLen {
		return nil, fmt.Errorf("raft cluster secret of %d bytes: want at least %d", len(o.Secret), MinSecretLen)
	}
	if o.TLS != nil && (o.TLS.Certificate == nil || o.TLS.Roots == nil) {
		return nil, errors.New("raft TLS needs a certificate and roots")
	}
	var ln net.Listener
	if o.Bind != "" {
		var err error
		if ln, err = net.Listen("tcp", o.Bind); err != nil {
			return nil, fmt.Errorf("raft listen %s: %w", o.Bind, err)
		}
		if o.Advertise == "" {
			o.Advertise = ln.Addr().String()
		}
	}
	// Checked, not resolved: a peer named by a host name (a StatefulSet
	// pod's DNS name) may not resolve yet when its node starts, and raft
	// only hands the text to peers, which dial it later.
	host, port, err := net.SplitHostPort(o.Advertise)
	if err == nil && (host == "" || port == "") {
		err = errors.New("want host:port")
	}
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, fmt.Errorf("raft advertise address %q: %w", o.Advertise, err)
	}
	s := &StreamLayer{
		advertise:        advertisedAddr{text: o.Advertise},
		conns:            make(chan net.Conn),
		closed:           make(chan struct{}),
		log:              o.Log,
		peers:            newPeerSet(o.Log),
		secret:           o.Secret,
		tls:              o.TLS,
		maxConns:         o.MaxConns,
		maxPerIP:         o.MaxConnsPerIP,
		idle:             o.IdleTimeout,
		handshakeTimeout: o.HandshakeTimeout,
		open:             map[*streamConn]struct{}{},
		opening:          map[net.Conn]struct{}{},
		perIP:            map[netip.Addr]int{},
		ln:               ln,
	}
	if s.idle <= 0 {
		s.idle = DefaultIdleTimeout
	}
	if s.handshakeTimeout <= 0 {
		s.handshakeTimeout = PreambleTimeout
	}
	if ln != nil {
		s.wg.Add(1)
		go s.acceptLoop()
	}
	return s, nil
}

// attach names the members the layer accepts and this node's id; a node
// attaches its membership before raft starts.
func (s *StreamLayer) attach(src memberSource) { s.peers.src.Store(&src) }

func (s *StreamLayer) selfID() string {
	if src := s.peers.source(); src != nil {
		return src.selfID()
	}
	return ""
}

// Authenticated reports whether connections prove the cluster secret or
// mutual TLS; without either only the source address is checked.
func (s *StreamLayer) Authenticated() bool { return len(s.secret) > 0 || s.tls != nil }

// advertisedAddr keeps the configured text (a host name stays a host name)
// for Addr().String(), which raft sends to peers.
type advertisedAddr struct {
	text string
}

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return a.text }

// ListenAddr is the bound address of the layer's own listener (nil when it
// has none); tests bind port 0 and read the port here.
func (s *StreamLayer) ListenAddr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// StreamStats are the layer's counts.
type StreamStats struct {
	// Open is the connections accepted or dialed and open now.
	Open int
	// Refused counts the connections closed before raft saw them, for
	// any reason (a stranger's address, a cap, a failed exchange).
	Refused int64
}

// Stats reads the layer's counts.
func (s *StreamLayer) Stats() StreamStats {
	s.mu.Lock()
	open := len(s.open)
	s.mu.Unlock()
	var n int64
	for i := range s.refused {
		n += s.refused[i].Load()
	}
	return StreamStats{Open: open, Refused: n}
}

// refuse counts the refusal, closes c and logs it at most once a second
// per reason.
func (s *StreamLayer) refuse(c net.Conn, why refusal, err error) {
	s.refused[why].Add(1)
	c.Close()
	if why == refusedHandshake && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
		// A peer that went away or stayed silent, its place freed: a
		// debug line, at most once a second.
		if n, ok := s.refusals[why].allow(time.Now()); ok {
			s.log.Debug("raft connection closed during its opening exchange", "remote", c.RemoteAddr().String(), "err", err, "refused_since_last_line", n)
		}
		return
	}
	if n, ok := s.refusals[why].allow(time.Now()); ok {
		attrs := []any{"remote", c.RemoteAddr().String(), "reason", refusalText[why]}
		if err != nil {
			attrs = append(attrs, "err", err)
		}
		if n > 0 {
			attrs = append(attrs, "refused_since_last_line", n)
		}
		s.log.Warn("raft connection refused", attrs...)
	}
}

func (s *StreamLayer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("raft listener stopped accepting", "addr", s.ln.Addr().String(), "err", err)
			return
		}
		ip := remoteIP(c)
		if !s.peers.allowIP(ip) {
			s.refuse(c, refusedAddress, nil)
			continue
		}
		why, ok := s.admit(ip)
		if !ok {
			s.refuse(c, why, nil)
			continue
		}
		if err := s.serve(c, ip, true); err != nil {
			return
		}
	}
}

// admit counts a connection of the own listener against the caps.
func (s *StreamLayer) admit(ip netip.Addr) (refusal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxConns > 0 && s.held >= s.maxConns {
		return refusedCap, false
	}
	if s.maxPerIP > 0 && s.perIP[ip] >= s.maxPerIP {
		return refusedCapPerIP, false
	}
	s.held++
	s.perIP[ip]++
	return 0, true
}

// release undoes admit.
func (s *StreamLayer) release(ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	if n := s.perIP[ip] - 1; n > 0 {
		s.perIP[ip] = n
	} else {
		delete(s.perIP, ip)
	}
}

// Handoff gives the layer a connection that starts with the preamble (a
// sniffer that peeked at it must put the peeked bytes back). A connection
// from an address that is no member's host is closed at once; otherwise
// the opening exchange runs on a goroutine of its own so a slow or silent
// client stalls nobody, and a connection that fails it is closed and
// logged. It fails only once the layer is closed, and then closes c.
func (s *StreamLayer) Handoff(c net.Conn) error {
	ip := remoteIP(c)
	if !s.peers.allowIP(ip) {
		select {
		case <-s.closed:
			c.Close()
			return ErrStreamClosed
		default:
		}
		s.refuse(c, refusedAddress, nil)
		return nil
	}
	return s.serve(c, ip, false)
}

// serve runs the opening exchange of c on a goroutine and queues it for
// Accept. counted says c holds a place in the own listener's caps.
func (s *StreamLayer) serve(c net.Conn, ip netip.Addr, counted bool) error {
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		if counted {
			s.release(ip)
		}
		c.Close()
		return ErrStreamClosed
	}
	s.wg.Add(1)
	s.opening[c] = struct{}{}
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		a, err := s.acceptHandshake(c)
		s.mu.Lock()
		delete(s.opening, c)
		s.mu.Unlock()
		if err != nil {
			why := refusedHandshake
			switch {
			case errors.Is(err, errBadProof):
				why = refusedProof
			case errors.Is(err, errNotMember):
				why = refusedMember
			}
			if counted {
				s.release(ip)
			}
			s.refuse(c, why, err)
			return
		}
		sc := newStreamConn(s, a.conn, c)
		sc.accepted, sc.peer, sc.ip, sc.counted = true, a.peer, ip, counted
		if !s.track(sc) {
			return
		}
		select {
		case s.conns <- sc:
		case <-s.closed:
			sc.Close()
		}
	}()
	return nil
}

// track registers c, or closes it if the layer is already closed or if
// c was accepted from a peer that stopped being a member since its
// opening exchange checked it: the revalidate of that change may have run
// before c was registered, and would not have seen it.
func (s *StreamLayer) track(c *streamConn) bool {
	s.mu.Lock()
	if !s.isClosed && (!c.accepted || s.peers.allowIP(c.ip) && s.peers.allowID(c.peer)) {
		s.open[c] = struct{}{}
		s.mu.Unlock()
		return true
	}
	s.mu.Unlock()
	c.Close()
	return false
}

// revalidate closes the accepted connections whose source address or id
// is no longer a member's: a membership change must not leave a removed
// member's connections open. The node runs it every membershipPoll.
func (s *StreamLayer) revalidate() {
	s.mu.Lock()
	var gone []*streamConn
	for c := range s.open {
		if c.accepted && (!s.peers.allowIP(c.ip) || !s.peers.allowID(c.peer)) {
			gone = append(gone, c)
		}
	}
	s.mu.Unlock()
	for _, c := range gone {
		s.log.Warn("closing a raft connection: the peer is no longer a member", "remote", c.RemoteAddr().String(), "id", c.peer)
		c.Close()
	}
}

// Accept implements net.Listener for raft's transport.
func (s *StreamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, ErrStreamClosed
	}
}

// Close stops Accept and Handoff, closes the own listener (if any) and
// every connection the layer accepted or dialed, and waits for the
// connections being checked and a host lookup in progress.
func (s *StreamLayer) Close() error {
	s.mu.Lock()
	var open []*streamConn
	if !s.isClosed {
		s.isClosed = true
		close(s.closed)
		if s.ln != nil {
			s.ln.Close()
		}
		for c := range s.open {
			open = append(open, c)
		}
		for c := range s.opening {
			c.Close()
		}
	}
	s.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	s.wg.Wait()
	s.peers.close()
	return nil
}

// Addr implements net.Listener: the advertised address.
func (s *StreamLayer) Addr() net.Addr { return s.advertise }

// Dial implements raft.StreamLayer: it connects to a peer's raft address
// and runs the opening exchange before raft's first byte, all within
// timeout (PreambleTimeout when raft gives none).
func (s *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	select {
	case <-s.closed:
		return nil, ErrStreamClosed
	default:
	}
	if timeout <= 0 {
		timeout = PreambleTimeout
	}
	conn, raw, peer, err := s.dial(string(address), time.Now().Add(timeout))
	if err != nil {
		return nil, err
	}
	sc := newStreamConn(s, conn, raw)
	sc.peer, sc.address = peer, string(address)
	if !s.track(sc) {
		return nil, ErrStreamClosed
	}
	return sc, nil
}

// dial connects to address and runs the dialer's exchange.
func (s *StreamLayer) dial(address string, deadline time.Time) (conn, raw net.Conn, peer string, err error) {
	d := net.Dialer{Deadline: deadline}
	raw, err = d.Dial("tcp", address)
	if err != nil {
		return nil, nil, "", err
	}
	conn, peer, err = s.dialHandshake(raw, address, deadline)
	if err != nil {
		raw.Close()
		return nil, nil, "", fmt.Errorf("raft peer %s: %w", address, err)
	}
	return conn, raw, peer, nil
}

// streamConn is a raft connection the layer accepted or dialed. It removes
// itself from the layer's open set when closed. An accepted one is closed
// when silent for the idle timeout (a read or a write waits at most that
// long); a dialed one idle for half of it is replaced by a fresh
// connection to the same peer before raft writes on it again, so a
// connection raft kept pooled never meets the acceptor's idle close.
type streamConn struct {
	s        *StreamLayer
	cur      atomic.Pointer[connPair]
	accepted bool
	peer     string     // the other side's id (at the last exchange)
	ip       netip.Addr // accepted: the source address
	counted  bool       // accepted: holds a place in the own listener's caps
	address  string     // dialed: the peer's raft address

	mu     sync.Mutex // dialed: serialises replacements and guards the deadlines
	rd, wd time.Time  // dialed: the deadlines raft set, applied to a replacement
	// lastUse is when the connection last read or wrote (unix ns).
	lastUse atomic.Int64
	closed  atomic.Bool
	once    sync.Once
}

// connPair is what raft reads and writes (the TCP connection, or TLS over
// it) and the TCP connection.
type connPair struct {
	conn, raw net.Conn
}

func newStreamConn(s *StreamLayer, conn, raw net.Conn) *streamConn {
	c := &streamConn{s: s}
	c.cur.Store(&connPair{conn: conn, raw: raw})
	c.lastUse.Store(time.Now().UnixNano())
	return c
}

func (c *streamConn) Read(b []byte) (int, error) {
	conn := c.cur.Load().conn
	if c.accepted {
		conn.SetReadDeadline(time.Now().Add(c.s.idle))
	}
	n, err := conn.Read(b)
	if n > 0 {
		c.lastUse.Store(time.Now().UnixNano())
	}
	return n, c.mapErr(err)
}

func (c *streamConn) Write(b []byte) (int, error) {
	if !c.accepted {
		if err := c.refreshIfIdle(); err != nil {
			return 0, err
		}
	}
	conn := c.cur.Load().conn
	if c.accepted {
		conn.SetWriteDeadline(time.Now().Add(c.s.idle))
	}
	n, err := conn.Write(b)
	c.lastUse.Store(time.Now().UnixNano())
	return n, c.mapErr(err)
}

// mapErr turns the error of an accepted connection closed for silence, or
// by the layer, into io.EOF: raft's transport reads that as the peer
// hanging up, not as a broken frame worth an error line.
func (c *streamConn) mapErr(err error) error {
	if err == nil || !c.accepted {
		return err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.s.log.Debug("closing an idle raft connection", "remote", c.RemoteAddr().String(), "id", c.peer, "idle", c.s.idle)
		c.Close()
		return io.EOF
	}
	if c.closed.Load() {
		return io.EOF
	}
	return err
}

// refreshIfIdle replaces a dialed connection idle for half the idle
// timeout by a new one to the same peer. Nothing is in flight on an idle
// connection (raft pools it between whole exchanges), so raft sees the
// same byte stream.
func (c *streamConn) refreshIfIdle() error {
	idle := func() bool { return time.Since(time.Unix(0, c.lastUse.Load())) >= c.s.idle/2 }
	if !idle() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !idle() {
		return nil
	}
	deadline := time.Now().Add(c.s.handshakeTimeout)
	if !c.wd.IsZero() && c.wd.Before(deadline) {
		deadline = c.wd
	}
	conn, raw, _, err := c.s.dial(c.address, deadline)
	if err != nil {
		return err
	}
	old := c.cur.Swap(&connPair{conn: conn, raw: raw})
	old.raw.Close()
	if c.closed.Load() {
		// Closed during the dial: Close may have closed the old one only.
		raw.Close()
		return net.ErrClosed
	}
	conn.SetReadDeadline(c.rd)
	conn.SetWriteDeadline(c.wd)
	c.lastUse.Store(time.Now().UnixNano())
	c.s.log.Debug("replaced an idle raft connection", "peer", c.address)
	return nil
}

func (c *streamConn) SetDeadline(t time.Time) error {
	if !c.accepted {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.rd, c.wd = t, t
	}
	return c.cur.Load().conn.SetDeadline(t)
}

func (c *streamConn) SetReadDeadline(t time.Time) error {
	if !c.accepted {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.rd = t
	}
	return c.cur.Load().conn.SetReadDeadline(t)
}

func (c *streamConn) SetWriteDeadline(t time.Time) error {
	if !c.accepted {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.wd = t
	}
	return c.cur.Load().conn.SetWriteDeadline(t)
}

func (c *streamConn) LocalAddr() net.Addr  { return c.cur.Load().raw.LocalAddr() }
func (c *streamConn) RemoteAddr() net.Addr { return c.cur.Load().raw.RemoteAddr() }

// Close closes the TCP connection (a TLS close_notify could block on a
// peer that does not read) and forgets it.
func (c *streamConn) Close() error {
	var err error
	c.once.Do(func() {
		c.closed.Store(true)
		err = c.cur.Load().raw.Close()
		c.s.mu.Lock()
		delete(c.s.open, c)
		c.s.mu.Unlock()
		if c.counted {
			c.s.release(c.ip)
		}
	})
	return err
}
