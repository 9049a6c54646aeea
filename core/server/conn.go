// conn.go holds per-connection state and the read-dispatch-write loop that
// netpoll drives for each connection.
package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/route"
	"github.com/valyala/bytebufferpool"
)

type connKey struct{}

// conn is one client, broker or admin connection, carried by netpoll
// (plaintext) or by crypto/tls on a goroutine of its own (tls.go). netpoll
// runs at most one onRequest per connection at a time and a TLS connection
// has one goroutine, so everything here but lastActive and waiting is
// touched by one goroutine only; closer is set before the conn is published.
type conn struct {
	id         route.ConnID
	nc         netpoll.Connection // nil for TLS
	in         netpoll.Reader     // nc.Reader(), read by the input watchdog; nil for TLS
	out        netpoll.Writer     // nc.Writer(); a LinkBuffer for TLS and in in-process benchmarks
	closer     io.Closer          // ends the connection from any goroutine: nc, or the TLS socket
	peer       string
	lastActive atomic.Int64
	// waiting is set while the connection blocks for bytes of a frame
	// that has not fully arrived; Shutdown closes such connections rather
	// than waiting for them (startWaiting, closeWaiting).
	waiting atomic.Bool

	// tls is the TLS side of a connection served by serveTLS, nil for
	// netpoll connections.
	tls *tlsTransport
	// sniffed: the first byte has been looked at (plaintext or TLS).
	sniffed bool
	// handoff holds the bytes netpoll read before a TLS connection was
	// taken off it; non-nil means the close callback continues the
	// connection over crypto/tls instead of ending it.
	handoff []byte
	// pending counts response bytes written since the last flush.
	pending int
	// routeUntimed counts the route queries since the last timed one, and
	// routeTimed is set once one was: they pick the queries whose latency
	// is sampled and what each sample stands for (routeSample).
	routeUntimed uint32
	routeTimed   bool

	req  codec.Command
	resp codec.Command
	hdr  []byte // encoded response frame prefix, reused up to maxKeptHeader
	// held are pooled buffers that response bodies point into; netpoll may
	// reference a large body without copying it until Flush, so they go back
	// to the pool only after the flush.
	held []*bytebufferpool.ByteBuffer
	pool *bytebufferpool.Pool
}

// buffer hands out a pooled buffer that lives until this batch of responses
// is flushed.
func (c *conn) buffer() *bytebufferpool.ByteBuffer {
	b := c.pool.Get()
	c.held = append(c.held, b)
	return b
}

// close ends the connection; safe from any goroutine, and more than once.
func (c *conn) close() {
	if c.closer != nil {
		c.closer.Close()
	}
}

// dropHeld forgets the held buffers without returning them to the pool:
// after a failed flush the output buffer may still reference them.
func (c *conn) dropHeld() {
	clear(c.held)
	c.held = c.held[:0]
}

func (c *conn) releaseHeld() {
	for i, b := range c.held {
		c.pool.Put(b)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

func (s *Server) onPrepare(nc netpoll.Connection) context.Context {
	peer := nc.RemoteAddr().String()
	c := &conn{
		id:     route.ConnID(s.nextConn.Add(1)),
		nc:     nc,
		in:     nc.Reader(),
		out:    nc.Writer(),
		closer: nc,
		peer:   peer,
		pool:   &s.bufPool,
	}
	c.lastActive.Store(s.now.Load())
	// A read of a partial frame waits at most the idle time: a peer that
	// sends half a frame and stops cannot pin a goroutine forever.
	if idle := s.cfg.ServerChannelMaxIdleTimeSeconds; idle > 0 {
		nc.SetReadTimeout(secondsDuration(idle))
	}
	// A flush to a peer that does not read fails after the write timeout
	// instead of pinning the goroutine and the unsent responses.
	if d := s.writeTimeout(); d > 0 {
		nc.SetWriteTimeout(d)
	}
	if !s.addConn(c) {
		s.refuseConn(peer)
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

// onClose unregisters every broker whose latest registration came over this
// connection (Java 4.9.8 drops only one of them).
func (s *Server) onClose(c *conn) {
	s.connsMu.Lock()
	delete(s.conns, c.id)
	s.connsMu.Unlock()
	if c.handoff != nil {
		// Taken off netpoll before any request: nothing was registered
		// over it, and the connection lives on over TLS.
		s.continueTLS(c)
		return
	}
	for _, ev := range s.routes.ConnClosed(c.id) {
		s.logEviction(ev)
	}
	if h := s.hooks.connClosed; h != nil {
		h(c.id)
	}
}

func (s *Server) onRequest(ctx context.Context, nc netpoll.Connection) error {
	c, ok := ctx.Value(connKey{}).(*conn)
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
		// Only a TLS hello makes sniff wait for bytes (the whole first
		// record); a plaintext first byte is already here.
		if s.tls != nil && !s.startWaiting(c) {
			return nil
		}
		stays := s.sniff(c, r)
		c.waiting.Store(false)
		if !stays {
			return nil // closed, or handed to crypto/tls
		}
	}
	s.serveBuffered(c, r)
	c.lastActive.Store(s.now.Load())
	return nil
}

// serveBuffered answers the requests buffered in r, waiting for the rest of
// a partial frame, and flushes: at the end, before waiting for the rest of a
// frame, and whenever the unflushed responses exceed
// maxPendingResponseBytes, so a long pipelined batch never holds more than
// that (plus one response) before the peer has taken it. It reports false
// when it closed the connection.
//
// It never returns with part of a frame buffered: netpoll calls onRequest
// again at once for unread input, so returning would spin.
func (s *Server) serveBuffered(c *conn, r netpoll.Reader) bool {
	maxOut, maxIn := s.cfg.MaxPendingResponseBytes, s.cfg.MaxPendingRequestBytes
	for {
		whole := frameBuffered(r)
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
			}
			if !s.startWaiting(c) {
				return false
			}
		}
		err := codec.ReadCommand(r, s.maxFrame(), &c.req)
		if !whole {
			c.waiting.Store(false)
		}
		if err != nil {
			var de *codec.DecodeError
			if errors.As(err, &de) {
				s.metrics.badFrame(de.Reason)
				s.log.Warn("closing connection: bad frame", "peer", c.peer, "reason", de.Reason, "err", err)
			} else {
				s.log.Debug("closing connection: read failed", "peer", c.peer, "err", err)
			}
			// Responses of this batch were never flushed and the output
			// buffer may still point into the held buffers: let them go to
			// the GC rather than back to the pool.
			c.dropHeld()
			r.Release()
			c.close()
			return false
		}
		s.handle(c)
		n := r.Len()
		if maxIn > 0 && n > maxIn {
			// netpoll keeps reading while requests are handled; a peer
			// that pipelines faster than it is served is cut off here.
			s.log.Warn("closing connection: too many unread request bytes", "peer", c.peer,
				"buffered_bytes", n, "limit", maxIn, "setting", "maxPendingRequestBytes")
			c.dropHeld()
			c.close()
			return false
		}
		if n == 0 {
			break
		}
		if maxOut > 0 && c.pending >= maxOut {
			if !s.flush(c, r) {
				return false
			}
		}
	}
	return s.flush(c, r)
}

// frameBuffered reports whether r holds the whole next frame, so that
// reading it does not block. It allocates nothing: the length prefix is
// peeked, not consumed.
func frameBuffered(r netpoll.Reader) bool {
	n := r.Len()
	if n < 4 {
		return false
	}
	p, err := r.Peek(4)
	if err != nil {
		return false
	}
	return 4+uint64(binary.BigEndian.Uint32(p)) <= uint64(n)
}

// startWaiting marks c as about to block for bytes that have not arrived
// and reports whether it may. The flag is set before closing is read, the
// reverse of closeWaiting's order, so a Shutdown that began before the flag
// was visible is seen here and the connection closes itself: it must not
// block, since netpoll's shutdown waits for it and nothing else would
// close it before the idle timeout.
func (s *Server) startWaiting(c *conn) bool {
	c.waiting.Store(true)
	if s.closing.Load() {
		c.waiting.Store(false)
		c.close()
		return false
	}
	return true
}

// flush sends the queued responses and releases what they and the handled
// requests held. A flush that fails (the peer stopped reading for longer
// than the write timeout, or the connection broke) closes the connection.
func (s *Server) flush(c *conn, r netpoll.Reader) bool {
	pending := c.pending
	c.pending = 0
	var err error
	if c.tls != nil {
		err = c.tls.flush(s.writeTimeout())
	} else {
		err = c.out.Flush()
	}
	if err == nil {
		// Only now: a response may point into the request bytes until
		// sent. After a failed flush neither is released: the poller may
		// still be reading them, and closing frees them.
		r.Release()
		c.releaseHeld()
		return true
	}
	if h := s.hooks.flushFailed; h != nil {
		h(c.id)
	}
	c.dropHeld()
	if isWriteTimeout(err) {
		s.log.Warn("closing connection: peer does not read its responses", "peer", c.peer,
			"unflushed_bytes", pending, "write_timeout", s.writeTimeout(), "setting", "serverWriteTimeoutSeconds")
	} else {
		s.log.Debug("closing connection: write failed", "peer", c.peer, "err", err)
	}
	c.close()
	return false
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

// writeTimeout is serverWriteTimeoutSeconds; 0 means none.
func (s *Server) writeTimeout() time.Duration {
	return secondsDuration(s.cfg.ServerWriteTimeoutSeconds)
}

// handle answers one request. The response echoes the opaque, carries the
// response flag and uses the request's serialize type; a oneway request is
// processed but gets nothing back.
func (s *Server) handle(c *conn) {
	req, resp := &c.req, &c.resp
	if req.IsResponse() {
		// The NameServer originates no requests that expect replies, so
		// there is nothing to match this against (Java warns and drops too).
		s.log.Debug("dropping unexpected response frame", "peer", c.peer, "code", req.Code, "opaque", req.Opaque)
		return
	}
	resp.Reset()
	resp.Flag = codec.FlagResponse
	resp.Opaque = req.Opaque
	resp.SerializeType = req.SerializeType
	resp.Version = codec.ServerVersion
	resp.Language = codec.LanguageJava
	timed, weight := true, uint64(1)
	if req.Code == codec.GetRouteInfoByTopic {
		c.routeUntimed++
		timed = !c.routeTimed || c.routeUntimed == routeSample
		if timed {
			weight = uint64(c.routeUntimed)
			c.routeUntimed, c.routeTimed = 0, true
		}
	}
	var start time.Time
	if timed {
		start = time.Now()
	}
	s.dispatch(c, req, resp)
	if timed {
		s.metrics.requestTimed(req.Code, resp.Code, time.Since(start), weight)
	} else {
		s.metrics.request(req.Code, resp.Code)
	}
	if req.IsOneway() {
		return
	}
	if err := c.write(resp); err != nil {
		var ee *codec.EncodeError
		if errors.As(err, &ee) {
			// Answered with a SYSTEM_ERROR in its place: worth a line.
			s.log.Warn("response too large to frame", "code", req.Code, "peer", c.peer, "err", err)
		} else {
			s.log.Debug("write response", "peer", c.peer, "err", err)
		}
	}
}

// dispatch runs the handler for req.Code; a panic in a handler becomes a
// SYSTEM_ERROR response and the server keeps serving.
func (s *Server) dispatch(c *conn, req, resp *codec.Command) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "code", req.Code, "peer", c.peer, "panic", p, "stack", string(debug.Stack()))
			resp.Reset()
			resp.Flag = codec.FlagResponse
			resp.Opaque = req.Opaque
			resp.SerializeType = req.SerializeType
			resp.Version = codec.ServerVersion
			resp.Code = codec.SystemError
			resp.Remark = fmt.Sprintf("internal error handling request code %d: %v", req.Code, p)
		}
	}()
	if !s.authorized(c, req, resp) {
		return
	}
	h := s.handlerFor(req.Code)
	if h == nil {
		resp.Code = codec.RequestCodeNotSupported
		resp.Remark = fmt.Sprintf(" request type %d not supported", req.Code)
		s.log.Debug("request code not supported", "code", req.Code, "peer", c.peer)
		return
	}
	if err := h(s, c, req, resp); err != nil {
		var re *replyError
		if errors.As(err, &re) {
			resp.Code, resp.Remark = re.code, re.remark
		} else {
			resp.Code, resp.Remark = codec.SystemError, err.Error()
		}
		resp.Body = nil
		level := slog.LevelDebug
		if classOf(req.Code) == classAdmin {
			// Rare and made by people: worth a line. Route misses and
			// broker retries are not.
			level = slog.LevelInfo
		}
		s.log.Log(context.Background(), level, "request refused", "code", req.Code, "request", codec.RequestCodeName(req.Code),
			"peer", c.peer, "response", resp.Code, "remark", resp.Remark)
	}
}

// maxKeptHeader bounds the response-header buffer a connection keeps for
// reuse. Headers are normally a few hundred bytes; an outsized one (a long
// remark, many ext fields) would otherwise stay allocated for as long as
// the connection lives.
const maxKeptHeader = 64 << 10

// write queues resp on the connection's output buffer; the caller flushes.
func (c *conn) write(resp *codec.Command) error {
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
		// Bodies are cached route encodings or pooled buffers held until
		// the flush: either way they stay unchanged while netpoll holds them.
		if _, err := w.WriteBinary(resp.Body); err != nil {
			return err
		}
	}
	return encErr
}

func (s *Server) maxFrame() int {
	if s.cfg.FrameMaxLength > 0 {
		return s.cfg.FrameMaxLength
	}
	return codec.DefaultMaxFrame
}
