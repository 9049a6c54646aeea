// client.go holds the connection: dial, pipelined calls matched by opaque,
// oneway sends and close.

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("client closed")

// ResponseError is a response whose code is not SUCCESS.
type ResponseError struct {
	Code   int32
	Remark string
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("response code %d: %s", e.Code, e.Remark)
}

type result struct {
	resp *codec.Command
	err  error
}

// Client is one connection to a NameServer (or any remoting server). Its
// methods may be called from many goroutines at once: requests are written
// under a lock and their replies are matched by opaque, in whatever order
// the server sends them.
type Client struct {
	addr string
	conn net.Conn

	opaque atomic.Int32

	// wsem serialises frame writes; a channel rather than a mutex so that
	// a caller queued behind a stuck write still leaves when its ctx ends.
	wsem chan struct{}
	wbuf []byte // guarded by wsem
	// writeFailKeeps: a write that timed out before sending a byte leaves
	// the stream in frame. Not so over TLS, whose state is lost on any
	// failed write.
	writeFailKeeps bool

	mu      sync.Mutex
	pending map[int32]chan result // guarded by mu
	err     error                 // guarded by mu; set once the connection is unusable

	done chan struct{} // closed when the reader goroutine has returned

	creds atomic.Pointer[Credentials] // acl.go; nil: requests go unsigned
}

// Dial connects to addr and starts the reader goroutine. ctx bounds the
// connect only.
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := newClient(addr, conn)
	c.writeFailKeeps = true
	return c, nil
}

// newClient starts the reader goroutine on an established connection.
func newClient(addr string, conn net.Conn) *Client {
	c := &Client{
		addr:    addr,
		conn:    conn,
		pending: make(map[int32]chan result),
		done:    make(chan struct{}),
		wsem:    make(chan struct{}, 1),
	}
	go c.readLoop()
	return c
}

// Addr is the address the client dialled.
func (c *Client) Addr() string { return c.addr }

// Done is closed once the connection has failed or was closed: a caller
// that keeps a connection (a broker's, a client's) dials again before its
// next request instead of failing it, as the Java remoting client does when
// its channel goes inactive.
func (c *Client) Done() <-chan struct{} { return c.done }

// Invoke sends req and waits for its response. It sets req.Opaque (from a
// per-client counter) and clears req.Flag; the header is JSON unless
// req.SerializeType says otherwise. The returned Command owns its memory.
// When ctx ends first the call is forgotten: a late reply is dropped. A
// request whose ctx ends before it is sent is not sent, and the connection
// stays up for the other callers; one whose ctx ends while its frame is
// half-written takes the connection down, since nothing after half a frame
// could be parsed.
func (c *Client) Invoke(ctx context.Context, req *codec.Command) (*codec.Command, error) {
	req.Opaque = c.opaque.Add(1)
	req.Flag = 0
	ch := make(chan result, 1)

	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[req.Opaque] = ch
	c.mu.Unlock()

	if err := c.write(ctx, req); err != nil {
		c.forget(req.Opaque)
		return nil, err
	}

	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		c.forget(req.Opaque)
		return nil, fmt.Errorf("%s: request code %d opaque %d: %w", c.addr, req.Code, req.Opaque, ctx.Err())
	}
}

// InvokeOneway sends req with the oneway flag: the server applies it and
// sends nothing back.
func (c *Client) InvokeOneway(req *codec.Command) error {
	return c.InvokeOnewayContext(context.Background(), req)
}

// InvokeOnewayContext is InvokeOneway whose send gives up when ctx ends,
// so a peer that stops reading cannot hold a periodic sender forever.
func (c *Client) InvokeOnewayContext(ctx context.Context, req *codec.Command) error {
	req.Opaque = c.opaque.Add(1)
	req.Flag = codec.FlagOneway
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.write(ctx, req)
}

// Close closes the connection, fails every pending call and waits for the
// reader goroutine to return.
func (c *Client) Close() error {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = fmt.Errorf("%s: %w", c.addr, ErrClosed)
	}
	c.mu.Unlock()
	// Closed also when the connection had failed already: nothing else
	// closes the socket then.
	err := c.conn.Close()
	if !first {
		err = nil
	}
	<-c.done
	return err
}

func (c *Client) forget(opaque int32) {
	c.mu.Lock()
	delete(c.pending, opaque)
	c.mu.Unlock()
}

func (c *Client) write(ctx context.Context, req *codec.Command) error {
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: request code %d: %w", c.addr, req.Code, ctx.Err())
	}
	defer func() { <-c.wsem }()
	// Checked before anything is sent: a caller that has already given up
	// must not cost the other callers their shared connection.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: request code %d: %w", c.addr, req.Code, err)
	}
	c.sign(req)
	buf, err := codec.EncodeFrame(c.wbuf[:0], req)
	if err != nil {
		return fmt.Errorf("%s: %w", c.addr, err)
	}
	c.wbuf = buf
	// A deadline from ctx keeps a stuck peer (full socket buffers) from
	// blocking the caller forever; the zero time clears an earlier one.
	dl, _ := ctx.Deadline()
	if err := c.conn.SetWriteDeadline(dl); err != nil {
		return fmt.Errorf("%s: set write deadline: %w", c.addr, err)
	}
	n, err := c.writeFrame(ctx)
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = fmt.Errorf("%w (%w)", ctxErr, err)
	}
	err = fmt.Errorf("%s: write request code %d: %w", c.addr, req.Code, err)
	if n == 0 && c.writeFailKeeps && errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	// Part of the frame went out: the stream is out of frame and nothing
	// sent after it could be parsed, so the connection is done.
	c.fail(err)
	c.conn.Close()
	return err
}

// writeFrame writes wbuf. A ctx without a deadline can still end (Ctrl-C,
// a caller giving up): the write is then cut short through the write
// deadline, as Invoke promises to return when ctx ends.
func (c *Client) writeFrame(ctx context.Context) (int, error) {
	if ctx.Done() == nil {
		return c.conn.Write(c.wbuf)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetWriteDeadline(time.Now())
		close(fired)
	})
	n, err := c.conn.Write(c.wbuf)
	if !stop() {
		// Its deadline must land before the next frame's write sets one,
		// not on that write.
		<-fired
	}
	return n, err
}

// fail records err as the connection's error (unless one is already set)
// and hands it to every pending call.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	} else {
		err = c.err
	}
	pending := c.pending
	c.pending = make(map[int32]chan result)
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- result{err: err}
	}
}

func (c *Client) readLoop() {
	defer close(c.done)
	var prefix [4]byte
	for {
		if _, err := io.ReadFull(c.conn, prefix[:]); err != nil {
			c.fail(fmt.Errorf("%s: connection lost: %w", c.addr, err))
			return
		}
		n, err := codec.FrameLength(prefix[:], codec.DefaultMaxFrame)
		if err != nil {
			c.fail(fmt.Errorf("%s: bad frame: %w", c.addr, err))
			c.conn.Close()
			return
		}
		// Each frame gets its own buffer: decoded strings alias it and the
		// caller keeps the Command.
		frame := make([]byte, n)
		if _, err := io.ReadFull(c.conn, frame); err != nil {
			c.fail(fmt.Errorf("%s: connection lost: %w", c.addr, err))
			return
		}
		resp := new(codec.Command)
		if err := codec.Decode(frame, resp); err != nil {
			c.fail(fmt.Errorf("%s: decode response: %w", c.addr, err))
			c.conn.Close()
			return
		}
		if resp.Flag&codec.FlagResponse == 0 {
			// A request from the server (NOTIFY_MIN_BROKER_ID_CHANGE):
			// this client has no handlers for those.
			continue
		}
		c.mu.Lock()
		ch, ok := c.pending[resp.Opaque]
		delete(c.pending, resp.Opaque)
		c.mu.Unlock()
		if ok {
			ch <- result{resp: resp}
		}
	}
}
