// The limit server: same framing and the same netpoll stack as the
// NameServer, answering every request with one pre-encoded body without
// looking anything up, so a run's ratio to it isolates lookup and dispatch.

package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/cloudwego/netpoll"
	"github.com/rocketns/rocketns/codec"
)

// LimitServer is a running limit server.
type LimitServer struct {
	body     []byte
	maxFrame int
	ln       netpoll.Listener
	loop     netpoll.EventLoop
	served   chan error
}

type limitConn struct {
	req, resp codec.Command
	hdr       []byte
}

type limitConnKey struct{}

// StartLimitServer listens on addr (host:port, port 0 for any) and answers
// every request with body. body is not copied and must not change while the
// server runs.
func StartLimitServer(addr string, body []byte) (*LimitServer, error) {
	s := &LimitServer{body: body, maxFrame: codec.DefaultMaxFrame, served: make(chan error, 1)}
	ln, err := netpoll.CreateListener("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("limit server: listen %s: %w", addr, err)
	}
	loop, err := netpoll.NewEventLoop(s.onRequest, netpoll.WithOnPrepare(func(netpoll.Connection) context.Context {
		return context.WithValue(context.Background(), limitConnKey{}, &limitConn{})
	}))
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("limit server: event loop: %w", err)
	}
	s.ln, s.loop = ln, loop
	go func() { s.served <- loop.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *LimitServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server and closes its connections.
func (s *LimitServer) Close(ctx context.Context) error {
	err := s.loop.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	<-s.served
	if err != nil {
		return fmt.Errorf("limit server: shutdown: %w", err)
	}
	return nil
}

// onRequest mirrors the NameServer's connection loop (decode every buffered
// frame, queue the answers, flush once) minus dispatch and lookup.
func (s *LimitServer) onRequest(ctx context.Context, nc netpoll.Connection) error {
	c, ok := ctx.Value(limitConnKey{}).(*limitConn)
	if !ok {
		return nc.Close()
	}
	r, w := nc.Reader(), nc.Writer()
	for {
		if err := codec.ReadCommand(r, s.maxFrame, &c.req); err != nil {
			r.Release()
			return nc.Close()
		}
		if !c.req.IsOneway() && !c.req.IsResponse() {
			c.resp.Reset()
			c.resp.Flag = codec.FlagResponse
			c.resp.Opaque = c.req.Opaque
			c.resp.SerializeType = c.req.SerializeType
			c.resp.Version = codec.ServerVersion
			c.resp.Language = codec.LanguageJava
			c.hdr = codec.AppendFramePrefix(c.hdr[:0], &c.resp, len(s.body))
			p, err := w.Malloc(len(c.hdr))
			if err != nil {
				r.Release()
				return nc.Close()
			}
			copy(p, c.hdr)
			if _, err := w.WriteBinary(s.body); err != nil {
				r.Release()
				return nc.Close()
			}
		}
		if r.Len() == 0 {
			break
		}
	}
	err := w.Flush()
	r.Release()
	if err != nil {
		return nc.Close()
	}
	return nil
}

// LimitProcess is a limit server running in a child process, so that against
// an external NameServer the limit has the same process layout (generator
// and server in two processes sharing the cores).
type LimitProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

// StartLimitProcess runs exe with args (which must make it call
// ServeLimitChild), hands it body on stdin and waits for its address.
func StartLimitProcess(exe string, args []string, body []byte) (*LimitProcess, error) {
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("limit process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("limit process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("limit process: start %s: %w", exe, err)
	}
	p := &LimitProcess{cmd: cmd, stdin: stdin}
	hdr := fmt.Sprintf("%d\n", len(body))
	_, err = io.WriteString(stdin, hdr)
	if err == nil {
		_, err = stdin.Write(body)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("limit process: send body: %w", err)
	}
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if rerr != nil || !ok {
		p.Close()
		return nil, fmt.Errorf("limit process: no address from child (got %q): %v", line, rerr)
	}
	p.addr = addr
	return p, nil
}

// Addr is the child's listen address.
func (p *LimitProcess) Addr() string { return p.addr }

// Close ends the child (closing its stdin is its signal) and waits for it.
func (p *LimitProcess) Close() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("limit process: %w", err)
	}
	return nil
}

// ServeLimitChild is the child side of StartLimitProcess: it reads the body
// from in, serves it on listen, writes "listening ADDR" to out and returns
// when in reaches EOF (the parent closed it or exited).
func ServeLimitChild(listen string, in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	var n int
	if _, err := fmt.Fscanf(br, "%d\n", &n); err != nil {
		return fmt.Errorf("limit child: read body length: %w", err)
	}
	if n < 0 || n > codec.DefaultMaxFrame {
		return fmt.Errorf("limit child: body length %d out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return fmt.Errorf("limit child: read body: %w", err)
	}
	s, err := StartLimitServer(listen, body)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "listening %s\n", s.Addr()); err != nil {
		s.Close(context.Background())
		return fmt.Errorf("limit child: %w", err)
	}
	io.Copy(io.Discard, br)
	return s.Close(context.Background())
}
