// Tests of the cap, the rate limit per cause with its summaries, and the
// counted records, on a fake clock.

package logcap

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCut(t *testing.T) {
	t.Parallel()
	f := func(s string, max int, want string) {
		t.Helper()
		if got := Cut(s, max); got != want {
			t.Fatalf("Cut(%q, %d) = %q, want %q", s, max, got, want)
		}
	}
	f("abc", 3, "abc")
	f("abcd", 3, "abc...(4 bytes)")
	f("", 3, "")
	// Never in the middle of a rune: é is two bytes.
	f("aéb", 2, "a...(4 bytes)")
	f("ééé", 4, "éé...(6 bytes)")
	if got := String(strings.Repeat("x", 2000)); len(got) > DefaultMaxString+32 {
		t.Fatalf("String kept %d bytes", len(got))
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTest(o Options, level slog.Level) (*slog.Logger, *Handler, *bytes.Buffer, *fakeClock) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	o.Now = clk.now
	var buf bytes.Buffer
	h := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}), o)
	return slog.New(h), h, &buf, clk
}

func lines(buf *bytes.Buffer) []string {
	s := strings.TrimSuffix(buf.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type stringer string

func (s stringer) String() string { return string(s) }

// One 15.7 MB frame made a single 60 MiB line: every string a record can
// carry is capped.
func TestEveryStringIsCapped(t *testing.T) {
	t.Parallel()
	log, _, buf, _ := newTest(Options{MaxString: 100}, slog.LevelInfo)
	huge := strings.Repeat("k", 1<<20)
	log.With("with", huge).WithGroup("g").Info(huge,
		"key", huge,
		huge, "as a key",
		"err", errors.New(huge),
		"list", []string{huge, "short"},
		"bytes", []byte(huge),
		"stringer", stringer(huge),
		slog.Group("inner", "deep", huge),
		"n", 42)
	out := buf.String()
	if len(out) > 3500 {
		t.Fatalf("a %d-byte line:\n%.500s", len(out), out)
	}
	if c := strings.Count(out, "...(1048576 bytes)"); c != 9 {
		t.Fatalf("%d capped strings, want 9:\n%s", c, out)
	}
	if !strings.Contains(out, "g.n=42") || !strings.Contains(out, "short") {
		t.Fatalf("other values lost:\n%s", out)
	}
	buf.Reset()
	many := make([]string, 1000)
	log.Info("many", "list", many)
	if out := buf.String(); !strings.Contains(out, "...(1000 in all)") || len(out) > 500 {
		t.Fatalf("a list of 1000: %s", out)
	}
}

// One connection produced 77k lines a second: each cause gets Burst lines
// per window, and the rest are summarised.
func TestRepeatedLinesAreSuppressedPerCause(t *testing.T) {
	t.Parallel()
	log, h, buf, clk := newTest(Options{Burst: 3, Window: time.Second}, slog.LevelInfo)
	for i := 0; i < 10; i++ {
		log.Info("bad frame", "i", i)
		log.Warn("bad frame", "i", i) // another level is another cause
		log.Info("other")
	}
	got := lines(buf)
	if len(got) != 9 {
		t.Fatalf("%d lines, want 3 per cause:\n%s", len(got), strings.Join(got, "\n"))
	}
	buf.Reset()
	clk.t = clk.t.Add(1500 * time.Millisecond)
	log.Info("bad frame", "i", 10)
	got = lines(buf)
	if len(got) != 2 || !strings.Contains(got[0], `msg="log lines suppressed" cause="bad frame" suppressed=7 over=1.5s limit_per_window=3 window=1s`) ||
		!strings.Contains(got[0], "level=INFO") || !strings.Contains(got[1], "i=10") {
		t.Fatalf("after the window:\n%s", strings.Join(got, "\n"))
	}
	// The causes that stay quiet are summarised by Flush, at their level.
	buf.Reset()
	h.Flush()
	got = lines(buf)
	if len(got) != 2 || !strings.Contains(strings.Join(got, "\n"), `level=WARN msg="log lines suppressed" cause="bad frame" suppressed=7`) ||
		!strings.Contains(strings.Join(got, "\n"), `cause=other suppressed=7`) {
		t.Fatalf("flush:\n%s", strings.Join(got, "\n"))
	}
	buf.Reset()
	h.Flush()
	if buf.Len() != 0 {
		t.Fatalf("a second flush wrote:\n%s", buf)
	}
}

func TestNegativeBurstWritesEverything(t *testing.T) {
	t.Parallel()
	log, _, buf, _ := newTest(Options{Burst: -1}, slog.LevelInfo)
	for i := 0; i < 500; i++ {
		log.Info("x")
	}
	if n := len(lines(buf)); n != 500 {
		t.Fatalf("%d lines", n)
	}
}

// Counted records are counted at every level and written at theirs when
// the inner handler takes it.
func TestCounting(t *testing.T) {
	t.Parallel()
	var n atomic.Uint64
	var buf bytes.Buffer
	match := func(r slog.Record) bool { return r.Message == "closing connection: read failed" }
	log := slog.New(Counting(slog.NewTextHandler(&buf, nil), match, &n)).With("component", "x")
	for i := 0; i < 5; i++ {
		log.Debug("closing connection: read failed", "peer", "x")
	}
	log.Debug("something else")
	log.Info("closing connection: read failed")
	if n.Load() != 6 {
		t.Fatalf("counted %d, want 6", n.Load())
	}
	if got := lines(&buf); len(got) != 1 || !strings.Contains(got[0], "level=INFO") || !strings.Contains(got[0], "component=x") {
		t.Fatalf("written: %q", got)
	}
}
