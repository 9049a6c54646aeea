// conn.go holds per-connection state and the read-dispatch-write loop that
// netpoll drives for each connection.
package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/route"
	"github.com/valyala/bytebufferpool"
)

type connKey struct{}

// conn is one client, broker or admin connection. netpoll runs at most one
// onRequest per connection at a time, so everything here but lastActive is
// touched by one goroutine only.
type conn struct {
	id         route.ConnID
	nc         netpoll.Connection
	out        netpoll.Writer // nc.Writer(); a LinkBuffer in in-process benchmarks
	peer       string
	lastActive atomic.Int64

	req  codec.Command
	resp codec.Command
	hdr  []byte // encoded response frame prefix, reused
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

func (c *conn) releaseHeld() {
	for i, b := range c.held {
		c.pool.Put(b)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

func (s *Server) onPrepare(nc netpoll.Connection) context.Context {
	c := &conn{
		id:   route.ConnID(s.nextConn.Add(1)),
		nc:   nc,
		out:  nc.Writer(),
		peer: nc.RemoteAddr().String(),
		pool: &s.bufPool,
	}
	c.lastActive.Store(s.now.Load())
	// A read of a partial frame waits at most the idle time: a peer that
	// sends half a frame and stops cannot pin a goroutine forever.
	if idle := s.cfg.ServerChannelMaxIdleTimeSeconds; idle > 0 {
		nc.SetReadTimeout(secondsDuration(idle))
	}
	s.connsMu.Lock()
	s.conns[c.id] = c
	s.connsMu.Unlock()
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
	for _, ev := range s.routes.ConnClosed(c.id) {
		s.logEviction(ev)
	}
}

func (s *Server) onRequest(ctx context.Context, nc netpoll.Connection) error {
	c, ok := ctx.Value(connKey{}).(*conn)
	if !ok {
		nc.Close()
		return nil
	}
	s.inflight.Add(1)
	defer s.inflight.Done()
	r := nc.Reader()
	c.lastActive.Store(s.now.Load())
	for {
		if err := codec.ReadCommand(r, s.maxFrame(), &c.req); err != nil {
			var de *codec.DecodeError
			if errors.As(err, &de) {
				s.log.Warn("closing connection: bad frame", "peer", c.peer, "reason", de.Reason, "err", err)
			} else if nc.IsActive() {
				s.log.Debug("closing connection: read failed", "peer", c.peer, "err", err)
			}
			c.releaseHeld()
			r.Release()
			nc.Close()
			return nil
		}
		s.handle(c)
		if r.Len() == 0 {
			break
		}
	}
	err := nc.Writer().Flush()
	c.releaseHeld()
	r.Release()
	if err != nil {
		s.log.Debug("closing connection: write failed", "peer", c.peer, "err", err)
		nc.Close()
	}
	c.lastActive.Store(s.now.Load())
	return nil
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
	s.dispatch(c, req, resp)
	if req.IsOneway() {
		return
	}
	if err := c.write(resp); err != nil {
		s.log.Debug("write response", "peer", c.peer, "err", err)
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
		s.log.Debug("request refused", "code", req.Code, "peer", c.peer, "response", resp.Code, "remark", resp.Remark)
	}
}

// write queues resp on the connection's output buffer; the caller flushes.
func (c *conn) write(resp *codec.Command) error {
	c.hdr = codec.AppendFramePrefix(c.hdr[:0], resp, len(resp.Body))
	w := c.out
	p, err := w.Malloc(len(c.hdr))
	if err != nil {
		return err
	}
	copy(p, c.hdr)
	if len(resp.Body) > 0 {
		// Bodies are cached route encodings or pooled buffers held until
		// the flush: either way they stay unchanged while netpoll holds them.
		if _, err := w.WriteBinary(resp.Body); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) maxFrame() int {
	if s.cfg.FrameMaxLength > 0 {
		return s.cfg.FrameMaxLength
	}
	return codec.DefaultMaxFrame
}
