// netpoll.go holds the netpoll echo: one event loop, the frames of a
// wake-up answered and flushed together.

package echo

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/cloudwego/netpoll"
)

// Server is a running echo server of either kind.
type Server struct {
	addr  net.Addr
	close func(ctx context.Context) error
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.addr.String() }

// Close stops the server and closes its connections.
func (s *Server) Close(ctx context.Context) error { return s.close(ctx) }

// Kinds of server, as Start names them.
const (
	KindNetpoll = "netpoll"
	KindStd     = "std"
)

// Start starts a server of kind on addr (host:port, port 0 for any) that
// answers every request with body. body is not copied and must not change
// while the server runs.
func Start(kind, addr string, body []byte) (*Server, error) {
	switch kind {
	case KindNetpoll:
		return StartNetpoll(addr, body)
	case KindStd:
		return StartStd(addr, body)
	}
	return nil, fmt.Errorf("echo: unknown kind %q (have %s, %s)", kind, KindNetpoll, KindStd)
}

// StartNetpoll starts the netpoll echo. Each request is answered with one
// Malloc of the whole reply (the body copied in, as netpoll copies anything
// under 4 KiB anyway); the replies to the frames of one wake-up go out in
// one Flush, as a pipelining server's must: flushing each frame on its own
// turns 4 requests in flight into 4 round trips of one (measured at less
// than the QPS of 1 in flight).
func StartNetpoll(addr string, body []byte) (*Server, error) {
	ln, err := netpoll.CreateListener("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("echo: listen %s: %w", addr, err)
	}
	loop, err := netpoll.NewEventLoop(func(_ context.Context, c netpoll.Connection) error {
		return serveNetpoll(c, body)
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("echo: event loop: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	return &Server{addr: ln.Addr(), close: func(ctx context.Context) error {
		err := loop.Shutdown(ctx)
		<-served
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("echo: shutdown: %w", err)
		}
		return nil
	}}, nil
}

// serveNetpoll answers the frames buffered on c. A frame not fully arrived
// is waited for in Next, after flushing what was answered: returning with
// input unread makes netpoll call again at once.
func serveNetpoll(c netpoll.Connection, body []byte) error {
	r, w := c.Reader(), c.Writer()
	for r.Len() > 0 {
		p, err := r.Peek(4)
		if err != nil {
			return c.Close()
		}
		l, err := frameLen(p)
		if err != nil {
			return c.Close()
		}
		if r.Len() < 4+l {
			if err := w.Flush(); err != nil {
				return c.Close()
			}
		}
		frame, err := r.Next(4 + l)
		if err != nil {
			return c.Close()
		}
		op, err := opaqueDigits(frame[4:])
		if err != nil {
			return c.Close()
		}
		out, err := w.Malloc(replyLen(len(op), len(body)))
		if err != nil {
			return c.Close()
		}
		putReply(out, op, body)
	}
	if err := w.Flush(); err != nil {
		return c.Close()
	}
	return r.Release()
}
