// deferred.go holds deferred replies: the Pending a handler keeps, its
// completion from any goroutine, and the writer that shares a connection's
// output with the connection's own loop.

package remoting

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
)

var (
	// ErrReplied: the request was answered already (Reply called twice,
	// or the handler returned an error after Defer).
	ErrReplied = errors.New("remoting: request already answered")
	// ErrClosed: the connection closed, or the listener is shutting down,
	// before the reply could be queued; it is not sent.
	ErrClosed = errors.New("remoting: connection closed before the reply")
)

// Pending is the answer to one request whose handler called Conn.Defer.
// Complete it with Reply or ReplyError, once, from any goroutine.
type Pending struct {
	c             *Conn // nil for a oneway request: nothing is sent
	code          int32 // the request's, for Observe
	opaque        int32
	serializeType byte
	start         time.Time
	done          atomic.Bool
}

// Defer keeps the answer to the request being handled pending: the handler
// returns nil without it and the listener goes on serving the connection's
// next requests; the Pending is completed later, from any goroutine, and
// its reply goes out then, possibly after replies to later requests.
//
// The handler must copy out of req whatever the completion needs: req is
// reused for the next frame and the read buffer released after dispatch.
// If the handler returns an error after Defer, that error answers now and
// the Pending is void (Reply returns ErrReplied). For a oneway request
// Defer returns a Pending whose Reply sends nothing.
//
// Only the handler may call Defer, during its call; a second call in the
// same handler returns the same Pending.
func (c *Conn) Defer() *Pending {
	if c.deferred != nil {
		return c.deferred
	}
	req := &c.req
	p := &Pending{code: req.Code, opaque: req.Opaque, serializeType: req.SerializeType}
	if c.srv.observe != nil {
		p.start = time.Now()
	}
	c.deferred = p
	if req.IsOneway() {
		return p
	}
	p.c = c
	if c.async.Load() == nil {
		c.async.Store(&asyncOut{})
	}
	return p
}

// cancelDeferred voids the Pending of the request being handled: its
// handler failed, and the failure is the answer.
func (c *Conn) cancelDeferred() {
	if p := c.deferred; p != nil {
		p.done.Store(true)
		c.deferred = nil
	}
}

// Reply sends resp as the answer. Flag, Opaque, Version, Language and
// SerializeType are stamped on resp from the request and the listener's
// options; Code, Remark, extFields and Body are the caller's. resp is
// encoded before Reply returns, so the caller may reuse it and its body.
// A reply too large to frame goes out as SYSTEM_ERROR, as a handler's
// would.
//
// nil means the reply is queued for the connection; like any write it is
// lost if the connection breaks first. ErrReplied and ErrClosed mean it
// was not queued.
func (p *Pending) Reply(resp *codec.Command) error {
	if p.c == nil {
		return nil
	}
	if !p.done.CompareAndSwap(false, true) {
		return ErrReplied
	}
	s := p.c.srv
	s.stampReply(resp, p.opaque, p.serializeType)
	if re := s.fitReply(p.c, p.code, resp); re != nil {
		resp.Code, resp.Remark, resp.Body = re.Code, re.Remark, nil
	}
	frame, err := encodeReply(nil, resp)
	if err != nil {
		s.log.Warn("response too large to frame", "code", p.code, "peer", p.c.peer, "err", err)
	}
	frame = append(frame, resp.Body...)
	if s.observe != nil {
		s.observe(p.code, resp.Code, time.Since(p.start), 1)
	}
	return p.c.enqueue(frame)
}

// ReplyError answers with err the way a handler's error answers: an *Error
// keeps its code and remark, any other error is SYSTEM_ERROR with its
// text.
func (p *Pending) ReplyError(err error) error {
	resp := &codec.Command{Code: codec.SystemError, Remark: err.Error()}
	var re *Error
	if errors.As(err, &re) {
		resp.Code, resp.Remark = re.Code, re.Remark
	}
	return p.Reply(resp)
}

// asyncOut is the output side of a connection that has deferred replies.
// Whoever writes to the connection's output buffer holds wmu: the
// connection's loop while it writes and flushes its own replies, and one
// drainer goroutine while it writes completed replies. queue, draining
// and closed are under qmu, which is never held across I/O, so completing
// a reply never waits on the network.
type asyncOut struct {
	wmu sync.Mutex

	qmu      sync.Mutex
	queue    [][]byte // encoded reply frames not yet written
	draining bool     // a drainer goroutine is running
	closed   bool     // set under wmu and qmu: nothing is written any more
}

// enqueue queues an encoded reply and makes sure a drainer runs.
func (c *Conn) enqueue(frame []byte) error {
	a := c.async.Load()
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if a.closed {
		return ErrClosed
	}
	a.queue = append(a.queue, frame)
	if a.draining {
		return nil
	}
	// The drainer counts as a call in flight: Shutdown waits for it,
	// and once Shutdown has stopped waiting nothing is written.
	if !c.srv.inflight.enter() {
		a.queue = nil
		return ErrClosed
	}
	a.draining = true
	go c.drain(a)
	return nil
}

// drain writes queued replies until the queue is empty. It holds wmu
// across the writes and flushes, so it never interleaves with the loop's,
// and closes the connection (after letting go of wmu: the close callback
// takes it) when a flush fails.
func (c *Conn) drain(a *asyncOut) {
	defer c.srv.inflight.leave()
	var failed error
	a.wmu.Lock()
	for {
		a.qmu.Lock()
		frames := a.queue
		a.queue = nil
		if len(frames) == 0 || failed != nil || a.closed {
			a.draining = false
			a.qmu.Unlock()
			break
		}
		a.qmu.Unlock()
		for _, f := range frames {
			if _, err := c.out.WriteBinary(f); err != nil {
				failed = err
				break
			}
		}
		if failed == nil {
			failed = c.flushOut(c.srv.limits.write)
		}
	}
	a.wmu.Unlock()
	if failed != nil {
		c.srv.log.Debug("closing connection: deferred reply not sent", "peer", c.peer, "err", failed)
		c.Close()
	}
}

// shut stops deferred writes for good; the connection's buffers may be
// freed after it returns. It waits for a drainer's write in progress,
// which a closed connection ends quickly.
func (c *Conn) shut() {
	a := c.async.Load()
	if a == nil {
		return
	}
	a.wmu.Lock()
	a.qmu.Lock()
	a.closed = true
	a.queue = nil
	a.qmu.Unlock()
	a.wmu.Unlock()
}
