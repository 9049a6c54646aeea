// wire.go holds Wire, a bare client connection that speaks frames, and the
// request builder tests use with it.

package remotingtest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// Wire is a bare connection speaking frames, so tests control every byte.
type Wire struct {
	T  testing.TB
	NC net.Conn
}

// Dial connects to addr; the connection is closed when the test ends.
func Dial(t testing.TB, addr string) *Wire {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, Hang)
	if err != nil {
		t.Fatal(err)
	}
	return Over(t, nc)
}

// Over speaks frames over nc (a TLS connection, say), closed when the test
// ends.
func Over(t testing.TB, nc net.Conn) *Wire {
	t.Cleanup(func() { nc.Close() })
	return &Wire{T: t, NC: nc}
}

// SendRaw writes b as it is.
func (w *Wire) SendRaw(b []byte) {
	w.T.Helper()
	if _, err := w.NC.Write(b); err != nil {
		w.T.Fatalf("write: %v", err)
	}
}

// Send writes c's frame.
func (w *Wire) Send(c *codec.Command) {
	w.T.Helper()
	w.SendRaw(codec.AppendFrame(nil, c))
}

// Recv reads one frame, waiting at most Hang; the command owns its memory.
func (w *Wire) Recv() (*codec.Command, error) {
	c, _, err := w.RecvSized()
	return c, err
}

// RecvSized is Recv that also returns the frame's size on the wire.
func (w *Wire) RecvSized() (*codec.Command, int, error) {
	frame, err := w.RecvRaw()
	if err != nil {
		return nil, 0, err
	}
	c := new(codec.Command)
	if err := codec.Decode(frame[4:], c); err != nil {
		return nil, 0, err
	}
	return c, len(frame), nil
}

// RecvRaw reads one frame as it came, length prefix included, waiting at
// most Hang.
func (w *Wire) RecvRaw() ([]byte, error) {
	w.NC.SetReadDeadline(time.Now().Add(Hang))
	var prefix [4]byte
	if _, err := io.ReadFull(w.NC, prefix[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(prefix[:]))
	copy(frame, prefix[:])
	if _, err := io.ReadFull(w.NC, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// MustRecv is Recv that fails the test on an error.
func (w *Wire) MustRecv() *codec.Command {
	w.T.Helper()
	c, err := w.Recv()
	if err != nil {
		w.T.Fatalf("recv: %v", err)
	}
	return c
}

// Call sends req and returns the reply, which must carry req's opaque.
func (w *Wire) Call(req *codec.Command) *codec.Command {
	w.T.Helper()
	w.Send(req)
	resp := w.MustRecv()
	if resp.Opaque != req.Opaque {
		w.T.Fatalf("response opaque %d, want %d", resp.Opaque, req.Opaque)
	}
	return resp
}

// ClosedByPeer reports whether the listener closed the connection, waiting
// at most Hang.
func (w *Wire) ClosedByPeer() bool {
	w.NC.SetReadDeadline(time.Now().Add(Hang))
	var b [1]byte
	_, err := w.NC.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || IsReset(err)
}

// IsReset recognises a connection reset by the peer.
func IsReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// Request is a JSON request as a Go client sends it, with extFields from
// key, value pairs.
func Request(code, opaque int32, ext ...string) *codec.Command {
	c := &codec.Command{Code: code, Opaque: opaque, Version: 479, Language: 9}
	c.HasExt = true
	for i := 0; i+1 < len(ext); i += 2 {
		c.SetExt(ext[i], ext[i+1])
	}
	return c
}
