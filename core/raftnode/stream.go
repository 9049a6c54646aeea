// The raft StreamLayer: connections handed over by a shared listener or
// accepted on a port of its own, told apart by a fixed preamble.

package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Preamble opens every raft connection. A listener shared with the
// RocketMQ remoting protocol matches it to hand the connection to
// StreamLayer.Handoff. Its first byte can never start a remoting frame (a
// 4-byte big-endian length capped at 16 MiB, so 0x00 or 0x01) nor a TLS
// record (0x16): 'R' is 0x52. The digit is the raft wire generation, bumped
// if the framing ever changes (generation 2 added PreambleAck).
const Preamble = "RNSRAFT2"

// PreambleAck is what the accepting side writes once it has read and
// checked the preamble; the dialer sends nothing else before it has read
// it. A shared listener takes a sniffed connection off its poller after
// the preamble: bytes arriving at that moment could be lost, so none may
// be in flight then (the remoting Sniffer contract).
const PreambleAck = "RNSOK2\n"

// PreambleTimeout bounds how long an accepted connection may take to send
// the preamble before it is dropped, and how long a dialer waits for the
// acknowledgement when raft gives it no timeout.
const PreambleTimeout = 5 * time.Second

// ErrStreamClosed is returned by Accept and Handoff once the layer is closed.
var ErrStreamClosed = errors.New("raft stream layer closed")

// StreamLayer implements raft.StreamLayer. Accept returns connections fed by
// Handoff (from a listener shared with the remoting port) or by its own TCP
// listener (ListenStream); either way the preamble is read and checked
// first, and a connection without it is closed.
type StreamLayer struct {
	advertise net.Addr
	conns     chan net.Conn
	closed    chan struct{}
	mu        sync.Mutex // guards isClosed and open; orders wg.Add before wg.Wait
	isClosed  bool
	// open holds every connection accepted or dialed and not yet closed:
	// raft's transport does not close them on shutdown, and a node stopped
	// inside a running process must not leave its peers' readers hanging.
	open map[*trackedConn]struct{}
	ln   net.Listener // owned in standalone mode, nil otherwise
	log  *slog.Logger
	wg   sync.WaitGroup
	// preambleTimeout is PreambleTimeout; tests shorten it.
	preambleTimeout time.Duration
}

// NewStreamLayer returns a layer fed only by Handoff. advertise is the
// address peers dial to reach this node (its raft address in the
// membership); raft tells followers the leader's address from it.
func NewStreamLayer(advertise string, log *slog.Logger) (*StreamLayer, error) {
	// Checked, not resolved: a peer named by a host name (a StatefulSet
	// pod's DNS name) may not resolve yet when its node starts, and raft
	// only hands the text to peers, which dial it later.
	host, port, err := net.SplitHostPort(advertise)
	if err == nil && (host == "" || port == "") {
		err = errors.New("want host:port")
	}
	if err != nil {
		return nil, fmt.Errorf("raft advertise address %q: %w", advertise, err)
	}
	if log == nil {
		log = slog.Default()
	}
	return &StreamLayer{
		advertise: advertisedAddr{text: advertise},
		conns:     make(chan net.Conn),
		closed:    make(chan struct{}),
		log:       log,
		open:      map[*trackedConn]struct{}{},

		preambleTimeout: PreambleTimeout,
	}, nil
}

// ListenStream returns a layer that owns a TCP listener on bind (jRaft
// style: raft on its own port) and also accepts Handoff connections. An
// empty advertise means the bound address.
func ListenStream(bind, advertise string, log *slog.Logger) (*StreamLayer, error) {
	return listenStream(bind, advertise, log, PreambleTimeout)
}

func listenStream(bind, advertise string, log *slog.Logger, preambleTimeout time.Duration) (*StreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("raft listen %s: %w", bind, err)
	}
	if advertise == "" {
		advertise = ln.Addr().String()
	}
	s, err := NewStreamLayer(advertise, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.ln = ln
	s.preambleTimeout = preambleTimeout
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

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
		if err := s.Handoff(c); err != nil {
			return
		}
	}
}

// Handoff gives the layer a connection that starts with the preamble (a
// sniffer that peeked at it must put the peeked bytes back). The preamble
// is checked on a goroutine of its own so a slow or silent client stalls
// nobody, and answered with PreambleAck; a connection without it is closed
// and logged. It fails only once the layer is closed, and then closes c.
func (s *StreamLayer) Handoff(c net.Conn) error {
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		c.Close()
		return ErrStreamClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		if err := readPreamble(c, s.preambleTimeout); err != nil {
			s.log.Warn("raft connection refused", "remote", c.RemoteAddr().String(), "err", err)
			c.Close()
			return
		}
		if err := writeAck(c, s.preambleTimeout); err != nil {
			s.log.Debug("raft connection lost before its acknowledgement", "remote", c.RemoteAddr().String(), "err", err)
			c.Close()
			return
		}
		tc, ok := s.track(c)
		if !ok {
			return
		}
		select {
		case s.conns <- tc:
		case <-s.closed:
			tc.Close()
		}
	}()
	return nil
}

// trackedConn removes itself from the layer's open set when closed.
type trackedConn struct {
	net.Conn
	s    *StreamLayer
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.open, c)
		c.s.mu.Unlock()
	})
	return err
}

// track registers c, or closes it if the layer is already closed.
func (s *StreamLayer) track(c net.Conn) (*trackedConn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed {
		c.Close()
		return nil, false
	}
	tc := &trackedConn{Conn: c, s: s}
	s.open[tc] = struct{}{}
	return tc, true
}

var errNoPreamble = errors.New("connection did not start with the raft preamble")

func readPreamble(c net.Conn, timeout time.Duration) error {
	c.SetReadDeadline(time.Now().Add(timeout))
	var buf [len(Preamble)]byte
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if n > 0 && string(buf[:n]) != Preamble[:n] {
			return fmt.Errorf("%w: got %q", errNoPreamble, buf[:n])
		}
		if err != nil {
			return fmt.Errorf("read raft preamble: %w", err)
		}
	}
	return c.SetReadDeadline(time.Time{})
}

func writeAck(c net.Conn, timeout time.Duration) error {
	c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, PreambleAck); err != nil {
		return fmt.Errorf("write raft preamble acknowledgement: %w", err)
	}
	return c.SetWriteDeadline(time.Time{})
}

var errBadAck = errors.New("peer did not acknowledge the raft preamble")

// readAck reads the acceptor's PreambleAck. Anything else is a peer of
// another raft wire generation, or not a raft peer at all.
func readAck(c net.Conn, timeout time.Duration) error {
	c.SetReadDeadline(time.Now().Add(timeout))
	var buf [len(PreambleAck)]byte
	if _, err := io.ReadFull(c, buf[:]); err != nil {
		return fmt.Errorf("read raft preamble acknowledgement: %w", err)
	}
	if string(buf[:]) != PreambleAck {
		return fmt.Errorf("%w: got %q", errBadAck, buf[:])
	}
	return c.SetReadDeadline(time.Time{})
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
// connections being checked.
func (s *StreamLayer) Close() error {
	s.mu.Lock()
	var open []*trackedConn
	if !s.isClosed {
		s.isClosed = true
		close(s.closed)
		if s.ln != nil {
			s.ln.Close()
		}
		for c := range s.open {
			open = append(open, c)
		}
	}
	s.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	s.wg.Wait()
	return nil
}

// Addr implements net.Listener: the advertised address.
func (s *StreamLayer) Addr() net.Addr { return s.advertise }

// Dial implements raft.StreamLayer: it connects to a peer's raft address,
// sends the preamble and waits for the peer's PreambleAck before raft's
// first byte, all within timeout (PreambleTimeout when raft gives none).
func (s *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = PreambleTimeout
	}
	deadline := time.Now().Add(timeout)
	d := net.Dialer{Deadline: deadline}
	c, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, err
	}
	c.SetWriteDeadline(deadline)
	if _, err := c.Write([]byte(Preamble)); err != nil {
		c.Close()
		return nil, fmt.Errorf("send raft preamble to %s: %w", address, err)
	}
	c.SetWriteDeadline(time.Time{})
	if err := readAck(c, time.Until(deadline)); err != nil {
		c.Close()
		return nil, fmt.Errorf("raft peer %s: %w", address, err)
	}
	tc, ok := s.track(c)
	if !ok {
		return nil, ErrStreamClosed
	}
	return tc, nil
}
