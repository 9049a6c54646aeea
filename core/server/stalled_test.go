// stalled_test.go checks that connections closed for sending a frame too
// slowly, each a debug line, are counted at info.

package server

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// A peer that sends a frame a byte at a time, slower than the idle time
// allows for the whole frame but fast enough never to look idle, is closed
// when the read times out, with a debug line; the count is at info.
func TestStalledConnectionsCountedAtInfo(t *testing.T) {
	cfg := testConfig(t)
	cfg.ServerChannelMaxIdleTimeSeconds = 1
	s, logs := startServer(t, cfg)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var prefix [4]byte
	binary.BigEndian.PutUint32(prefix[:], 1000)
	if _, err := nc.Write(prefix[:]); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = nc.Read(make([]byte, 1))
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(remotingtest.Hang)
wait:
	for {
		select {
		case <-closed:
			break wait
		case <-tick.C:
			_, _ = nc.Write([]byte{'x'})
		case <-deadline:
			t.Fatal("the stalled connection was not closed")
		}
	}
	s.logStalled()
	// The read of the frame times out (a debug line, counted), unless the
	// once-a-second idle check, which races it, closes the connection
	// first (an info line of its own).
	got := logs.String()
	if !strings.Contains(got, `level=INFO msg="`+stalledCloses+`" count=1`) &&
		!strings.Contains(got, `level=INFO msg="closing idle connection"`) {
		t.Fatalf("the stalled connection's close is not at info:\n%s", got)
	}
	// Counted once: the next minute says nothing.
	before := len(logs.String())
	s.logStalled()
	if strings.Contains(logs.String()[before:], stalledCloses) {
		t.Fatalf("counted again:\n%s", logs.String()[before:])
	}
}

// The listener's debug line for a read that timed out waiting for the rest
// of a frame is counted; other closes are not.
func TestIsStalledClose(t *testing.T) {
	rec := func(level slog.Level, msg string, args ...any) slog.Record {
		r := slog.NewRecord(time.Now(), level, msg, 0)
		r.Add(args...)
		return r
	}
	timeout := netpoll.Exception(netpoll.ErrReadTimeout, "127.0.0.1:1")
	f := func(r slog.Record, want bool) {
		t.Helper()
		if got := isStalledClose(r); got != want {
			t.Fatalf("%s: %v, want %v", r.Message, got, want)
		}
	}
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p", "err", timeout), true)
	f(rec(slog.LevelDebug, "closing connection: incomplete TLS hello", "peer", "p", "err", fmt.Errorf("read: %w", os.ErrDeadlineExceeded)), true)
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p", "err", netpoll.Exception(netpoll.ErrEOF, "")), false)
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p"), false)
	f(rec(slog.LevelInfo, "closing connection: read failed", "err", timeout), false)
	f(rec(slog.LevelDebug, "request refused", "err", timeout), false)
}
