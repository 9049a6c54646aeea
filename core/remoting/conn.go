// conn.go holds per-connection state and the read-dispatch-write loop that
// netpoll drives for each connection.

package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"
	"github.com/valyala/bytebufferpool"

	"github.com/rocketns/rocketns/codec"
)

// ConnID names one connection of a process's listener for as long as the
// listener runs; ids are not reused.
type ConnID uint64

type connKey struct{}

// Conn is one peer's connection, carried by netpoll (plaintext) or by
// crypto/tls on a goroutine of its own (tls.go). Handlers get it with each
// request; ID, Peer and Close may be used at any time and from any
// goroutine, Buffer and Defer only by the handler during its call.
//
// Its state is split by job, each part owned as its comment says: what
// identifies the connection and may be read from any goroutine (here),
// the request loop's (connLoop), the budget and input watch's (connWatch)
// and the TLS side and hand-off's (connHandoff). closer is set before the
// conn is published.
type Conn struct {
	srv        *Server
	id         ConnID
	nc         netpoll.Connection // nil for TLS
	in         netpoll.Reader     // nc.Reader(), read by the input watch; nil for TLS
	out        netpoll.Writer     // nc.Writer(); a LinkBuffer for TLS and Pipe
	closer     io.Closer          // ends the connection from any goroutine: nc, or the TLS socket
	peer       string
	lastActive atomic.Int64
	// ip is the peer's address without the port: the per-address cap
	// counts by it and the heavy queue's turns go round it.
	ip string
	// waiting is set while the connection blocks for bytes of a frame
	// that has not fully arrived; Shutdown closes such connections rather
	// than waiting for them (startWaiting, closeWaiting).
	waiting atomic.Bool

	connLoop
	connWatch
	connHandoff
}

// connLoop is the read-dispatch-write loop's state. netpoll runs at most
// one onRequest per connection at a time and a TLS connection has one
// goroutine, so only that goroutine touches it, but for async, which the
// goroutines completing deferred replies share (deferred.go).
type connLoop struct {
	// pending counts reply bytes written since the last flush.
	pending int
	// consumed counts request bytes read since the last flush: netpoll
	// frees them only at the Release after it.
	consumed int
	// samples is the timing state of the sampled routes (Route.TimeEvery).
	samples []sample

	// deferred is the Pending of the request being handled, if its
	// handler called Defer; async is set once any handler of the
	// connection did, and from then on its writes are shared with the
	// goroutines completing replies (deferred.go).
	deferred *Pending
	async    atomic.Pointer[asyncOut]

	req  codec.Command
	resp codec.Command
	hdr  []byte               // encoded reply frame prefix, reused up to maxKeptHeader
	tmpl codec.HeaderTemplate // the header of the last plain reply (writeInPlace)
	// held are pooled buffers that reply bodies point into; netpoll may
	// reference a large body without copying it until Flush, so they go back
	// to the pool only after the flush.
	held []*bytebufferpool.ByteBuffer
	pool *bufPool
}

// connWatch is the connection's share of the listener's Budget and the
// watch on its input while a flush or a handler blocks (budget.go,
// watch.go). The account is the budget's (under Budget.mu, mirror read
// freely); watchSeen is under watchMu; the loop begins and ends the
// flushes; watchNext, watchState and watchAt are the watcher's.
type connWatch struct {
	acct account
	// watched: the input is watched while the connection blocks (a
	// netpoll connection with a budget or an input limit).
	watched   bool
	watchMu   sync.Mutex
	watchSeen int // input length at the watch's last look; under watchMu
	// flushState counts the flushes begun and ended: odd while one is
	// under way. Only the loop writes it (and the close callback, which
	// runs after the loop's last call).
	flushState   atomic.Uint32
	flushPending atomic.Int64
	// listed is set while the connection is in the watcher's list or on
	// its incoming stack (watcher.push, watcher.unlist).
	listed     atomic.Bool
	watchNext  *Conn
	watchState uint32 // flushState at the watcher's last look
	watchAt    uint64 // the watcher's tick of the next look
	// inPeak is the most input the connection has held (inputCost).
	inPeak atomic.Int64
}

// connHandoff is the loop's state before its first request: whether the
// first bytes were looked at, and where they sent the connection, TLS
// (tls.go) or another protocol (handoff.go).
type connHandoff struct {
	// tls is the TLS side of a connection served by serveTLS, nil for
	// netpoll connections.
	tls *tlsTransport
	// sniffed: the first bytes have been looked at (plaintext, TLS or a
	// sniffer's protocol).
	sniffed bool
	// handoff holds the bytes netpoll read before the connection was
	// taken off it; non-nil means the close callback continues the
	// connection with handoffTo instead of ending it (handoff.go).
	handoff   []byte
	handoffTo func(raw net.Conn, pre []byte)
}

// sample is one sampled route's state on a connection: the requests since
// its last timed one, and whether one was timed yet.
type sample struct {
	untimed uint32
	timed   bool
}

// ID is the connection's id, the one ConnClosed reports.
func (c *Conn) ID() ConnID { return c.id }

// Peer is the remote address as net.Addr.String writes it.
func (c *Conn) Peer() string { return c.peer }

// Buffer hands out a pooled buffer for a reply body; it lives until this
// batch of replies is flushed. Only the handler may call it, during its
// call.
func (c *Conn) Buffer() *bytebufferpool.ByteBuffer {
	b := c.pool.lend()
	c.held = append(c.held, b)
	return b
}

// open reports whether the connection is still up as far as the listener
// knows: a netpoll connection its peer closed is not, even while its task
// still runs.
func (c *Conn) open() bool {
	return c.nc == nil || c.nc.IsActive()
}

// Close ends the connection; safe from any goroutine, and more than once.
func (c *Conn) Close() {
	if c.closer != nil {
		c.closer.Close()
	}
}

// dropHeld forgets the held buffers without returning them to the pool:
// after a failed flush the output buffer may still reference them.
func (c *Conn) dropHeld() {
	c.pool.drop(len(c.held))
	clear(c.held)
	c.held = c.held[:0]
}

func (c *Conn) releaseHeld() {
	for i, b := range c.held {
		c.pool.reclaim(b)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

// newConn is a connection of s before it is published.
func (s *Server) newConn(peer string, out netpoll.Writer, closer io.Closer) *Conn {
	c := &Conn{srv: s, id: ConnID(s.nextConn.Add(1)), out: out, closer: closer, peer: peer, ip: peerIP(peer)}
	c.pool = &s.bufPool
	c.acct.evict = c.Close
	if s.table.sampled > 0 {
		c.samples = make([]sample, s.table.sampled)
	}
	c.lastActive.Store(s.now.Load())
	return c
}

func (s *Server) onPrepare(nc netpoll.Connection) context.Context {
	c := s.newConn(nc.RemoteAddr().String(), nc.Writer(), nc)
	c.nc, c.in = nc, nc.Reader()
	// A read of a partial frame waits at most the idle time: a peer that
	// sends half a frame and stops cannot pin a goroutine forever.
	if s.limits.idle > 0 {
		nc.SetReadTimeout(s.limits.idle)
	}
	// A flush to a peer that does not read fails after the write timeout
	// instead of pinning the goroutine and the unsent replies.
	if s.limits.write > 0 {
		nc.SetWriteTimeout(s.limits.write)
	}
	c.watched = s.budget != nil || s.limits.maxIn > 0
	if ok, perIP := s.addConn(c); !ok {
		s.refuseConn(c.peer, perIP)
		refuseAtAccept(nc)
		return context.Background()
	}
	nc.AddCloseCallback(func(netpoll.Connection) error {
		s.onClose(c)
		return nil
	})
	if s.closing.Load() {
		nc.Close()
	}
	return context.WithValue(context.Background(), connKey{}, c)
}

// onClose forgets a closed connection and tells ConnClosed, or continues a
// connection taken off netpoll.
func (s *Server) onClose(c *Conn) {
	s.connsMu.Lock()
	s.dropConnLocked(c)
	s.connsMu.Unlock()
	c.endFlush()
	s.uncharge(c)
	// Replies built for a batch the connection did not live to flush:
	// netpoll may still reference them, so they go to the collector.
	c.dropHeld()
	if c.handoffTo != nil {
		// Taken off netpoll before any request: nothing was served over
		// it, and the connection lives on elsewhere.
		s.continueHandoff(c)
		return
	}
	c.shut()
	if s.connClosed != nil {
		s.connClosed(c.id)
	}
}

func (s *Server) onRequest(ctx context.Context, nc netpoll.Connection) error {
	c, ok := ctx.Value(connKey{}).(*Conn)
	if !ok {
		nc.Close()
		return nil
	}
	if !s.inflight.enter() {
		// Shutting down and past waiting for requests: netpoll wants the
		// input read or the connection closed.
		nc.Close()
		return nil
	}
	defer s.inflight.leave()
	r := nc.Reader()
	c.lastActive.Store(s.now.Load())
	if !c.sniffed {
		c.sniffed = true
		// Only a TLS hello or a sniffer's magic makes sniff wait for
		// bytes; a plaintext first byte is already here.
		if s.sniffs && !s.startWaiting(c) {
			return nil
		}
		stays := s.sniff(c, r)
		c.waiting.Store(false)
		if !stays {
			return nil // closed, or handed off
		}
	}
	s.serveBuffered(c, r)
	c.lastActive.Store(s.now.Load())
	return nil
}

// serveBuffered answers the requests buffered in r, waiting for the rest of
// a partial frame, and flushes: at the end, before waiting for the rest of a
// frame, and whenever the unflushed replies exceed MaxPendingResponseBytes,
// so a long pipelined batch never holds more than that (plus one reply)
// before the peer has taken it. It reports false when it closed the
// connection.
//
// It never returns with part of a frame buffered: netpoll calls onRequest
// again at once for unread input, so returning would spin.
func (s *Server) serveBuffered(c *Conn, r netpoll.Reader) bool {
	maxOut, maxIn := s.limits.maxOut, s.limits.maxIn
	for {
		size, whole := nextFrame(r)
		if !whole {
			// The rest may come late or never (then the idle close ends
			// the connection): answer what was handled before waiting, as
			// Java answers each frame as soon as it is handled.
			if c.pending > 0 || len(c.held) > 0 {
				if !s.flush(c, r) {
					return false
				}
			} else {
				r.Release()
				c.consumed = 0
			}
			if !s.startWaiting(c) {
				return false
			}
			if !s.reserveFrame(c, r) {
				c.waiting.Store(false)
				return false
			}
			if size == 0 { // fewer than 4 bytes had come: the prefix is here now
				size = frameSize(r)
			}
		}
		c.consumed += size
		var err error
		if size >= 4 {
			// The prefix was peeked for size: not again.
			err = codec.ReadCommandOfLength(r, uint32(size-4), s.maxFrame, &c.req)
		} else {
			err = codec.ReadCommand(r, s.maxFrame, &c.req)
		}
		if !whole {
			c.waiting.Store(false)
		}
		if err != nil {
			var de *codec.DecodeError
			if errors.As(err, &de) {
				if h := s.events.FrameRejected; h != nil {
					h(de.Reason)
				}
				s.log.Warn("closing connection: bad frame", "peer", c.peer, "reason", de.Reason, "err", err)
			} else {
				s.log.Debug("closing connection: read failed", "peer", c.peer, "err", err)
			}
			// Replies of this batch were never flushed and the output
			// buffer may still point into the held buffers: let them go to
			// the GC rather than back to the pool.
			c.dropHeld()
			r.Release()
			c.Close()
			return false
		}
		if !s.handle(c, r) {
			c.dropHeld()
			c.Close()
			return false
		}
		n := r.Len()
		if maxIn > 0 && n > maxIn {
			// netpoll keeps reading while requests are handled; a peer
			// that pipelines faster than it is served is cut off here.
			s.log.Warn("closing connection: too many unread request bytes", "peer", c.peer,
				"buffered_bytes", n, "limit", maxIn, "setting", "maxPendingRequestBytes")
			c.dropHeld()
			c.Close()
			return false
		}
		if s.budget != nil && !s.chargeBatch(c, n) {
			c.dropHeld()
			return false
		}
		if n == 0 {
			break
		}
		if maxOut > 0 && (c.pending >= maxOut || c.consumed >= maxOut) {
			if !s.flush(c, r) {
				return false
			}
		}
	}
	return s.flush(c, r)
}

// frameSize is the size of the next frame, prefix included, as its length
// prefix declares; 0 when the prefix is not there (the read then fails).
func frameSize(r netpoll.Reader) int {
	p, err := r.Peek(4)
	if err != nil {
		return 0
	}
	return 4 + int(binary.BigEndian.Uint32(p))
}

// nextFrame peeks the next frame's length prefix once for both questions
// the loop asks: the frame's size, prefix included (0 while fewer than 4
// bytes are buffered), and whether r holds all of it, so that reading it
// does not block. It allocates nothing: the prefix is peeked, not consumed.
func nextFrame(r netpoll.Reader) (size int, whole bool) {
	n := r.Len()
	if n < 4 {
		return 0, false
	}
	p, err := r.Peek(4)
	if err != nil {
		return 0, false
	}
	total := 4 + uint64(binary.BigEndian.Uint32(p))
	return int(total), total <= uint64(n)
}

// startWaiting marks c as about to block for bytes that have not arrived
// and reports whether it may. The flag is set before closing is read, the
// reverse of closeWaiting's order, so a Shutdown that began before the flag
// was visible is seen here and the connection closes itself: it must not
// block, since netpoll's shutdown waits for it and nothing else would
// close it before the idle timeout.
func (s *Server) startWaiting(c *Conn) bool {
	c.waiting.Store(true)
	if s.closing.Load() {
		c.waiting.Store(false)
		c.Close()
		return false
	}
	return true
}

// flush sends the queued replies and releases what they and the handled
// requests held. A flush that fails (the peer stopped reading for longer
// than the write timeout, or the connection broke) closes the connection.
func (s *Server) flush(c *Conn, r netpoll.Reader) bool { return s.send(c, r, true) }

// send is flush; release says whether the handled requests' bytes go too,
// which they may not while the request being handled points into them.
func (s *Server) send(c *Conn, r netpoll.Reader, release bool) bool {
	pending := c.pending
	c.pending = 0
	consumed := c.consumed
	if release {
		c.consumed = 0
	}
	held := 0
	if s.budget != nil {
		held = pending + c.inputCost(consumed)
		if held >= budgetMinCharge && !s.charge(c, pending+c.inputCost(consumed+r.Len()), "responses") {
			c.dropHeld()
			return false
		}
	}
	a := c.async.Load()
	if a != nil {
		a.wmu.Lock()
	}
	c.beginFlush(held)
	err := c.flushOut(s.limits.write)
	c.endFlush()
	if a != nil {
		a.wmu.Unlock()
	}
	if err == nil {
		// Only now: a reply may point into the request bytes until
		// sent. After a failed flush neither is released: the poller may
		// still be reading them, and closing frees them.
		left := r.Len()
		if release {
			r.Release()
		} else {
			left += consumed
		}
		c.releaseHeld()
		if c.acct.mirror.Load() != 0 {
			return s.charge(c, c.inputCost(left), "unread requests")
		}
		return true
	}
	if h := s.hooks.flushFailed; h != nil {
		h(c.id)
	}
	c.dropHeld()
	if isWriteTimeout(err) {
		s.log.Warn("closing connection: peer does not read its responses", "peer", c.peer,
			"unflushed_bytes", pending, "write_timeout", s.limits.write, "setting", "serverWriteTimeoutSeconds")
	} else {
		s.log.Debug("closing connection: write failed", "peer", c.peer, "err", err)
	}
	c.Close()
	return false
}

// flushOut sends what the output buffer holds: through netpoll, or through
// crypto/tls for a TLS connection.
func (c *Conn) flushOut(timeout time.Duration) error {
	if c.tls != nil {
		return c.tls.flushRecords(timeout)
	}
	return c.out.Flush()
}

// isWriteTimeout recognises netpoll's and the standard library's write
// timeouts.
func isWriteTimeout(err error) bool {
	if errors.Is(err, netpoll.ErrWriteTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// stampReply makes resp the reply to the request with opaque and
// serialize type st: response flag, the opaque, the listener's version,
// the serialize type the reply is written in.
func (s *Server) stampReply(resp *codec.Command, opaque int32, st byte) {
	resp.Flag = codec.FlagResponse
	resp.Opaque = opaque
	resp.SerializeType = st
	if s.jsonOnly {
		resp.SerializeType = codec.SerializeJSON
	}
	resp.Version = s.version
	resp.Language = codec.LanguageJava
}

// handle answers one request. The reply echoes the opaque, carries the
// response flag and uses the request's serialize type (or JSON); a oneway
// request is processed but gets nothing back. A heavy request (Route.Weigh)
// waits for its turn first. It reports false when the connection closed
// meanwhile: the request is not answered and nothing more is read.
func (s *Server) handle(c *Conn, r netpoll.Reader) bool {
	req, resp := &c.req, &c.resp
	if req.IsResponse() {
		// A listener originates no requests that expect replies over its
		// own connections, so there is nothing to match this against (Java
		// warns and drops too).
		s.log.Debug("dropping unexpected response frame", "peer", c.peer, "code", req.Code, "opaque", req.Opaque)
		return true
	}
	rt := s.table.lookup(req.Code)
	var (
		start  time.Time
		weight uint64
	)
	if s.observe != nil {
		weight = c.sampleWeight(rt)
		if weight > 0 {
			start = time.Now()
		}
	}
	var turn time.Time // when a heavy request got its turn
	if rt != nil && rt.weigh != nil {
		if w := rt.weigh(req); w > 0 {
			if !s.awaitTurn(c, r, w) {
				return false
			}
			turn = time.Now()
		}
	}
	resp.Reset()
	s.stampReply(resp, req.Opaque, req.SerializeType)
	s.dispatch(c, rt, req, resp)
	if !turn.IsZero() {
		s.heavy.release(time.Since(turn))
	}
	if p := c.deferred; p != nil {
		c.deferred = nil
		if p.c != nil {
			// Answered by Pending.Reply, which observes it, perhaps
			// already.
			return true
		}
	}
	if s.observe != nil {
		var took time.Duration
		if weight > 0 {
			took = time.Since(start)
		}
		s.observe(req.Code, resp.Code, took, weight)
	}
	if req.IsOneway() {
		return true
	}
	a := c.async.Load()
	if a != nil {
		a.wmu.Lock()
	}
	err := c.write(resp)
	if a != nil {
		a.wmu.Unlock()
	}
	if err != nil {
		var ee *codec.EncodeError
		if errors.As(err, &ee) {
			// Answered with a SYSTEM_ERROR in its place: worth a line.
			s.log.Warn("response too large to frame", "code", req.Code, "peer", c.peer, "err", err)
		} else {
			s.log.Debug("write response", "peer", c.peer, "err", err)
		}
	}
	return true
}

// awaitTurn waits for a heavy request's turn in the heavy queue. The
// replies computed so far go out first: a peer that reads them is not kept
// waiting for them behind the queue, and one that does not read is found
// out here, blocked in the send with its input watched, before anything
// more is built for it. It reports false when the connection closed
// first: the request is not answered.
func (s *Server) awaitTurn(c *Conn, r netpoll.Reader, weight int) bool {
	if (c.pending > 0 || len(c.held) > 0) && !s.send(c, r, false) {
		return false
	}
	return c.open() && s.heavy.acquire(c, weight)
}

// sampleWeight says whether this request of route rt is timed and how many
// requests its sample stands for (0: not timed).
func (c *Conn) sampleWeight(rt *route) uint64 {
	if rt == nil || rt.sample < 0 {
		return 1
	}
	st := &c.samples[rt.sample]
	st.untimed++
	if st.timed && st.untimed != rt.timeEvery {
		return 0
	}
	w := uint64(st.untimed)
	st.untimed, st.timed = 0, true
	return w
}

// dispatch runs the handler of rt (the Unknown one when rt is nil); a
// panic in a handler becomes a SYSTEM_ERROR reply and the listener keeps
// serving.
func (s *Server) dispatch(c *Conn, rt *route, req, resp *codec.Command) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "code", req.Code, "peer", c.peer, "panic", p, "stack", string(debug.Stack()))
			c.cancelDeferred()
			resp.Reset()
			s.stampReply(resp, req.Opaque, req.SerializeType)
			resp.Code = codec.SystemError
			resp.Remark = fmt.Sprintf("internal error handling request code %d: %v", req.Code, p)
		}
	}()
	h := s.unknown
	if rt != nil {
		h = rt.handler
	}
	err := h(c, req, resp)
	if err == nil {
		if c.deferred != nil {
			return // answered later, by Pending.Reply
		}
		re := s.fitReply(c, req.Code, resp)
		if re == nil {
			return
		}
		err = re
	}
	// An error answers now, deferred or not.
	c.cancelDeferred()
	var re *Error
	if errors.As(err, &re) {
		resp.Code, resp.Remark = re.Code, re.Remark
	} else {
		resp.Code, resp.Remark = codec.SystemError, err.Error()
	}
	resp.Body = nil
	if s.refused != nil {
		s.refused(c, req, resp, err)
		return
	}
	s.log.Debug("request refused", "code", req.Code, "peer", c.peer, "response", resp.Code, "remark", resp.Remark)
}

// maxKeptHeader bounds the reply-header buffer a connection keeps for
// reuse. Headers are normally a few hundred bytes; an outsized one (a long
// remark, many ext fields) would otherwise stay allocated for as long as
// the connection lives.
const maxKeptHeader = 64 << 10

// write queues resp on the connection's output buffer; the caller flushes.
func (c *Conn) write(resp *codec.Command) error {
	if len(resp.Body) <= netpoll.BinaryInplaceThreshold && replyHeaderBound(resp) <= inPlaceHeader {
		return c.writeInPlace(resp)
	}
	return c.writeCopied(resp)
}

// writeCopied is write for any reply: the header encoded into c.hdr and
// copied, the body written apart (netpoll keeps a large one by reference).
func (c *Conn) writeCopied(resp *codec.Command) error {
	hdr, encErr := encodeReply(c.hdr[:0], resp)
	c.hdr = hdr
	if cap(hdr) > maxKeptHeader {
		// hdr is copied into the output buffer below and not needed after.
		c.hdr = nil
	}
	w := c.out
	p, err := w.Malloc(len(hdr))
	if err != nil {
		return err
	}
	copy(p, hdr)
	c.pending += len(hdr) + len(resp.Body)
	if len(resp.Body) > 0 {
		// Bodies are cached encodings or pooled buffers held until the
		// flush: either way they stay unchanged while netpoll holds them.
		if _, err := w.WriteBinary(resp.Body); err != nil {
			return err
		}
	}
	return encErr
}

// inPlaceHeader bounds the replies writeInPlace takes: far below the
// 24-bit header length and the frame limits, so encoding one cannot fail.
const inPlaceHeader = 64 << 10

// writeInPlace is write for a reply with a small header and a body netpoll
// would copy anyway (up to netpoll.BinaryInplaceThreshold): the frame's
// exact length is reserved in the output buffer with one Malloc, the
// header encoded straight into it and the body copied after it, where
// write encodes into c.hdr, copies that, and has WriteBinary reserve and
// copy the body apart. A reply that differs from the connection's last
// only in its opaque (every route answer but the first) has its header
// copied from c.tmpl around the opaque's digits.
func (c *Conn) writeInPlace(resp *codec.Command) error {
	w := c.out
	if n, ok := c.tmpl.PrefixLen(resp); ok {
		p, err := w.Malloc(n + len(resp.Body))
		if err != nil {
			return err
		}
		c.tmpl.PutPrefix(p[:n], resp, len(resp.Body))
		copy(p[n:], resp.Body)
		c.pending += len(p)
		return nil
	}
	n := codec.FramePrefixLen(resp)
	p, err := w.Malloc(n + len(resp.Body))
	if err != nil {
		return err
	}
	out, err := codec.EncodeFramePrefix(p[:0:n], resp, len(resp.Body))
	if err != nil || len(out) != n {
		// Not reachable with a bounded header (FramePrefixLen is exact,
		// tested against the encoder); if it were, the reserved bytes are
		// given back and the reply takes the general path.
		if ackErr := w.MallocAck(w.MallocLen() - len(p)); ackErr != nil {
			return ackErr
		}
		return c.writeCopied(resp)
	}
	copy(p[n:], resp.Body)
	c.pending += len(p)
	return nil
}
