// std.go holds the standard-library echo: a goroutine per connection with a
// bufio reader and writer, flushed whenever no further request is buffered.

package echo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// StartStd starts the standard-library echo.
func StartStd(addr string, body []byte) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("echo: listen %s: %w", addr, err)
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serveStd(c, body)
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	return &Server{addr: ln.Addr(), close: func(ctx context.Context) error {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("echo: shutdown: %w", ctx.Err())
		}
	}}, nil
}

// serveStd answers c's requests until it fails or closes.
func serveStd(c net.Conn, body []byte) {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	var big, out []byte
	for {
		p, err := br.Peek(4)
		if err != nil {
			return
		}
		l, err := frameLen(p)
		if err != nil {
			return
		}
		var frame []byte
		if 4+l <= br.Size() {
			if frame, err = br.Peek(4 + l); err != nil {
				return
			}
		} else {
			if cap(big) < 4+l {
				big = make([]byte, 4+l)
			}
			frame = big[:4+l]
			if _, err := io.ReadFull(br, frame); err != nil {
				return
			}
		}
		op, err := opaqueDigits(frame[4:])
		if err != nil {
			return
		}
		n := replyLen(len(op), len(body))
		if cap(out) < n {
			out = make([]byte, n)
		}
		putReply(out[:n], op, body)
		if 4+l <= br.Size() {
			br.Discard(4 + l)
		}
		if _, err := bw.Write(out[:n]); err != nil {
			return
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return
			}
		}
	}
}
