// helpers_test.go holds what this package's tests share: a tiny dispatch
// table, a listener started on loopback, and a log buffer.

package remoting

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// The tiny table's codes.
const (
	codeEcho   int32 = 1 // remark = extFields "v"
	codeWho    int32 = 2 // extFields id and peer of the connection
	codePanic  int32 = 3
	codeBig    int32 = 4 // a body of extFields "n" bytes from a pooled buffer
	codeRefuse int32 = 5 // *Error 17 "refused"
	codeFail   int32 = 6 // a plain error
)

// tinyRoutes is a dispatch table with a handler of each kind.
func tinyRoutes() []Route {
	return []Route{
		{Code: codeEcho, Handler: func(_ *Conn, req, resp *codec.Command) error {
			resp.Remark, _ = req.ExtValue("v")
			return nil
		}},
		{Code: codeWho, Handler: func(c *Conn, _, resp *codec.Command) error {
			resp.SetExt("id", strconv.FormatUint(uint64(c.ID()), 10))
			resp.SetExt("peer", c.Peer())
			return nil
		}},
		{Code: codePanic, Handler: func(*Conn, *codec.Command, *codec.Command) error { panic("boom") }},
		{Code: codeBig, Handler: func(c *Conn, req, resp *codec.Command) error {
			v, _ := req.ExtValue("n")
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			buf := c.Buffer()
			buf.B = buf.B[:0]
			for range n {
				buf.B = append(buf.B, 'b')
			}
			resp.Body = buf.B
			return nil
		}},
		{Code: codeRefuse, Handler: func(*Conn, *codec.Command, *codec.Command) error {
			return Refuse(codec.TopicNotExist, "refused")
		}},
		{Code: codeFail, Handler: func(*Conn, *codec.Command, *codec.Command) error {
			return errors.New("failed")
		}},
	}
}

// testOptions is a loopback listener with the tiny table, logging into
// logs at debug level.
func testOptions(logs *remotingtest.Logs) Options {
	return Options{
		Addr:        "127.0.0.1:0",
		Log:         logs.Logger(),
		Routes:      tinyRoutes(),
		Version:     479,
		IdleTimeout: 120 * time.Second,
	}
}

// newServer builds a listener from o, lets setup set its test hooks, and
// starts it; the caller arranges its shutdown.
func newServer(t *testing.T, o Options, setup func(*Server)) *Server {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// start starts a listener that the test's cleanup shuts down, reporting a
// failed shutdown.
func start(t *testing.T, o Options, setup func(*Server)) *Server {
	t.Helper()
	s := newServer(t, o, setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// startTiny is start with the tiny table and a log buffer.
func startTiny(t *testing.T, edit func(*Options)) (*Server, *remotingtest.Logs) {
	t.Helper()
	logs := &remotingtest.Logs{}
	o := testOptions(logs)
	if edit != nil {
		edit(&o)
	}
	return start(t, o, nil), logs
}

func dial(t *testing.T, s *Server) *remotingtest.Wire { return remotingtest.Dial(t, s.Addr().String()) }

var request = remotingtest.Request

func formatID(id ConnID) string { return strconv.FormatUint(uint64(id), 10) }
