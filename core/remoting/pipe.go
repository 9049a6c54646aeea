// pipe.go holds Pipe, a connection served in process over buffers, for
// benchmarks and allocation guards of the request path without sockets.

package remoting

import (
	"sync/atomic"

	"github.com/cloudwego/netpoll"
)

// Pipe is one connection of a Server served in process: frames written
// with Send are served by Serve through the same loop a socket's are
// (frame checks, dispatch, replies, flush), and the replies collect in a
// buffer. It needs no Start, is not counted among the listener's
// connections and does not report to ConnClosed. Not safe for concurrent
// use.
type Pipe struct {
	s       *Server
	c       *Conn
	in, out *netpoll.LinkBuffer
	closes  *closeCounter
}

type closeCounter struct{ n atomic.Int32 }

func (c *closeCounter) Close() error { c.n.Add(1); return nil }

// Pipe makes an in-process connection whose peer reads as peer.
func (s *Server) Pipe(peer string) *Pipe {
	out := netpoll.NewLinkBuffer()
	cl := &closeCounter{}
	c := s.newConn(peer, out, cl)
	c.sniffed = true
	p := &Pipe{s: s, c: c, in: netpoll.NewLinkBuffer(), out: out, closes: cl}
	c.in = p.in
	return p
}

// Send buffers frames (whole or not) as if the peer had sent them.
func (p *Pipe) Send(frames []byte) error {
	if _, err := p.in.WriteBinary(frames); err != nil {
		return err
	}
	return p.in.Flush()
}

// Serve answers what Send buffered, as netpoll's callback does for a
// readable connection, and reports whether the connection is still open.
// A partial frame at the end makes it wait, as a socket would: send whole
// frames.
func (p *Pipe) Serve() bool {
	return p.s.serveBuffered(p.c, p.in) && !p.Closed()
}

// Drain discards the replies flushed so far and returns their size.
func (p *Pipe) Drain() int {
	n := p.out.Len()
	p.out.Skip(n)
	p.out.Release()
	return n
}

// Replies returns the replies flushed so far and consumes them; the slice
// is the caller's.
func (p *Pipe) Replies() []byte {
	n := p.out.Len()
	b, _ := p.out.ReadBinary(n)
	p.out.Release()
	return b
}

// Closed reports whether the listener closed the connection (a bad frame,
// a limit).
func (p *Pipe) Closed() bool { return p.closes.n.Load() > 0 }

// Conn is the pipe's connection, as handlers see it.
func (p *Pipe) Conn() *Conn { return p.c }
