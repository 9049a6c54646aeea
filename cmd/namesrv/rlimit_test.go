// Tests of maxConnections against the file-descriptor limit.

package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/config"
)

func TestConnectionsForFDs(t *testing.T) {
	f := func(maxConns int, nofile uint64, want int, lowered bool) {
		t.Helper()
		got, low := connectionsForFDs(maxConns, nofile)
		if got != want || low != lowered {
			t.Fatalf("connectionsForFDs(%d, %d) = %d, %v; want %d, %v", maxConns, nofile, got, low, want, lowered)
		}
	}
	f(10000, 1<<20, 10000, false)
	f(10000, 10256, 10000, false)
	f(10000, 10255, 9999, true)
	// A container's 1024: a quarter kept for files, the admin listener and
	// the rest.
	f(10000, 1024, 768, true)
	f(10000, 4096, 3840, true)
	f(100, 1024, 100, false)
	f(10000, 8, 6, true)
	f(10000, 1, 1, true)
	// Unknown or unlimited: as configured.
	f(10000, 0, 10000, false)
	f(10000, ^uint64(0), 10000, false)
}

// maxConnections above the limit made new connections hang instead of
// being refused: it is lowered, with a warning.
func TestMaxConnectionsClampedToTheFDLimit(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	cfg := config.Default()
	fitConnectionsToFDs(cfg, log, func() (uint64, error) { return 1024, nil })
	if cfg.MaxConnections != 768 {
		t.Fatalf("maxConnections %d, want 768", cfg.MaxConnections)
	}
	if got := out.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "maxConnections=10000") ||
		!strings.Contains(got, "lowered_to=768") || !strings.Contains(got, "fd_limit=1024") {
		t.Fatalf("log:\n%s", got)
	}
	out.Reset()
	cfg = config.Default()
	fitConnectionsToFDs(cfg, log, func() (uint64, error) { return 1 << 20, nil })
	if cfg.MaxConnections != 10000 || strings.Contains(out.String(), "WARN") {
		t.Fatalf("within the limit: %d\n%s", cfg.MaxConnections, out.String())
	}
}

// The process's own limit: after raising the soft limit it is at least
// what it was, and reading it again gives the same.
func TestRaiseFDLimit(t *testing.T) {
	soft, err := raiseFDLimit()
	if err != nil {
		t.Skipf("no file-descriptor limit here: %v", err)
	}
	again, err := raiseFDLimit()
	if err != nil || again != soft || soft == 0 {
		t.Fatalf("raised to %d, then %d (%v)", soft, again, err)
	}
}
