// Tests of the bounds on the log: strings capped, repeated lines
// summarised, and connections closed for stalling counted at info although
// each is logged at debug.

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/netpoll"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/logcap"
	"github.com/rocketns/rocketns/core/server"
)

func TestLoggerCapsStringsAndRepeats(t *testing.T) {
	var out syncBuffer
	log, closeLog, err := newLogger(config.Default(), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	log.Info("kv config put", "namespace", "ns", "key", strings.Repeat("k", 15<<20))
	if n := len(out.String()); n > 4096 {
		t.Fatalf("one record of a 15 MiB key is a %d-byte line", n)
	}
	for i := 0; i < 1000; i++ {
		log.Warn("closing connection: bad frame", "peer", "127.0.0.1:1")
	}
	if n := strings.Count(out.String(), "bad frame"); n > logcap.DefaultBurst {
		t.Fatalf("%d lines of one cause within a second", n)
	}
}

// A peer that sends a frame too slowly is closed once the idle time has
// passed waiting for it, with a debug line; at info their count shows, in
// the summary Flush writes.
func TestStalledConnectionsCountedAtInfo(t *testing.T) {
	cfg := config.Default()
	cfg.BindAddress, cfg.ListenPort = "127.0.0.1", 0
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	cfg.ServerChannelMaxIdleTimeSeconds = 1
	var out syncBuffer
	log, closeLog, err := newLogger(cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	s, err := server.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// A 1000-byte frame sent a byte at a time, slower than the idle time
	// allows for the whole frame but fast enough never to look idle.
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
	deadline := time.After(10 * time.Second)
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
	log.Handler().(*logcap.Handler).Flush()
	// The read of the frame times out (a debug line, counted), unless the
	// once-a-second idle check, which races it, closes the connection
	// first (an info line of its own).
	if got := out.String(); !strings.Contains(got, `level=INFO msg="`+stalledCloses+`" count=1`) &&
		!strings.Contains(got, `level=INFO msg="closing idle connection"`) {
		t.Fatalf("the stalled connection's close is not at info:\n%s", got)
	}
}

// The listener's debug line for a read that timed out waiting for the rest
// of a frame is counted; other closes are not.
func TestCountStalled(t *testing.T) {
	rec := func(level slog.Level, msg string, args ...any) slog.Record {
		r := slog.NewRecord(time.Now(), level, msg, 0)
		r.Add(args...)
		return r
	}
	timeout := netpoll.Exception(netpoll.ErrReadTimeout, "127.0.0.1:1")
	f := func(r slog.Record, want string) {
		t.Helper()
		if got := countStalled(r); got != want {
			t.Fatalf("%s: %q, want %q", r.Message, got, want)
		}
	}
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p", "err", timeout), stalledCloses)
	f(rec(slog.LevelDebug, "closing connection: incomplete TLS hello", "peer", "p", "err", fmt.Errorf("read: %w", os.ErrDeadlineExceeded)), stalledCloses)
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p", "err", netpoll.Exception(netpoll.ErrEOF, "")), "")
	f(rec(slog.LevelDebug, "closing connection: read failed", "peer", "p"), "")
	f(rec(slog.LevelInfo, "closing connection: read failed", "err", timeout), "")
	f(rec(slog.LevelDebug, "request refused", "err", timeout), "")
}
