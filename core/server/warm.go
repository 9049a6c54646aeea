// warm.go holds the warm restart: the route snapshot loaded before the
// port opens, written in the background when the table changed and at
// shutdown, and what the server says of its start.

package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketns/rocketns/core/metrics"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/routesnap"
)

// SnapshotFile is the route snapshot's name beside the KV file when
// routeSnapshotPath is empty.
const SnapshotFile = "routes.snapshot"

// snapshotMaxAge is the oldest snapshot a server loads: the brokers'
// default timeout. Every broker of an older one would have expired had the
// server kept running, so loading it would only route to brokers that may
// be gone.
const snapshotMaxAge = route.DefaultBrokerTimeout

// WarmStart says how the server started: from its route snapshot, from a
// peer's table, or empty.
type WarmStart struct {
	Warm bool
	// From is the snapshot file (its path, whether or not it was used),
	// or "peer host:port" for a table copied from another NameServer;
	// "" when snapshots are off.
	From    string
	TakenAt time.Time // when the loaded snapshot was taken (by the peer's clock for a copy)
	Brokers int       // live brokers restored
	Topics  int       // topics restored
	// Cold says why the server started empty: snapshots are off, there
	// was no file, or it was stale, corrupt, truncated or of another
	// format version; then why each peer gave no copy.
	Cold string
}

// String is the start as the status page and /readyz say it.
func (w WarmStart) String() string {
	if w.Warm {
		return fmt.Sprintf("warm from %s taken %s: %d brokers and %d topics restored",
			w.From, w.TakenAt.UTC().Format(time.RFC3339), w.Brokers, w.Topics)
	}
	return "cold: " + w.Cold
}

// warm is the server's snapshot state.
type warm struct {
	path     string // "" when snapshots are off
	interval time.Duration
	start    WarmStart // set by New, read-only afterwards
	// logStart writes the start-up line saying how the server started,
	// from Start: a server built and never started (a test's) logs
	// nothing.
	logStart func()

	// mu serialises the writes (the background one and Shutdown's) and
	// guards lastGen, wrote and final.
	mu      sync.Mutex
	lastGen uint64
	wrote   bool
	// final is set by Shutdown's write: no write follows it, so the file
	// holds the table as it was when Shutdown began.
	final bool

	bytes    atomic.Int64 // the last file written
	nanos    atomic.Int64 // its write time, from export to rename
	writes   metrics.Counter
	failures metrics.Counter
}

// snapshotPath is routeSnapshotPath, or routes.snapshot in the KV file's
// directory; "" when routeSnapshotEnable is off.
func snapshotPath(enabled bool, path, kvPath string) string {
	switch {
	case !enabled:
		return ""
	case path != "":
		return path
	}
	return filepath.Join(filepath.Dir(kvPath), SnapshotFile)
}

// loadSnapshot restores the route table from the snapshot file, when
// there is a usable one, into the empty table New just built. Whatever is
// wrong with the file, the server starts (empty) and says why in one log
// line.
func (s *Server) loadSnapshot() {
	cfg := s.cfg
	w := &s.warm
	w.path = snapshotPath(cfg.RouteSnapshotEnable, cfg.RouteSnapshotPath, cfg.KVConfigPath)
	w.interval = time.Duration(cfg.RouteSnapshotIntervalMs) * time.Millisecond
	if w.interval <= 0 {
		w.interval = 5 * time.Second
	}
	if w.path == "" {
		w.start = WarmStart{Cold: "route snapshots are off (routeSnapshotEnable=false)"}
		w.logStart = func() { s.log.Info("starting cold: route snapshots are off", "setting", "routeSnapshotEnable") }
		return
	}
	w.start = WarmStart{From: w.path}
	if err := routesnap.RemoveStale(w.path); err != nil {
		s.log.Warn("could not remove a partial route snapshot a kill left", "path", w.path, "err", err)
	}
	begun := time.Now()
	snap, h, err := routesnap.Load(w.path, s.clock(), snapshotMaxAge)
	if err == nil {
		err = s.routes.Restore(snap)
	}
	if err != nil {
		w.start.Cold = coldReason(err)
		if peers := cfg.SnapshotPeers(); len(peers) > 0 {
			s.coldFromPeers(peers, err)
			return
		}
		if routesnap.IsNotExist(err) {
			w.logStart = func() { s.log.Info("starting cold: no route snapshot yet", "path", w.path) }
		} else {
			// The file is left alone: the first background write replaces
			// it, and until then an operator may look at it.
			w.logStart = func() {
				s.log.Warn("starting cold: route snapshot ignored; routes fill as brokers register (up to 30 s)",
					"path", w.path, "err", err)
			}
		}
		return
	}
	w.start.Warm = true
	w.start.TakenAt = time.UnixMilli(h.TakenAt)
	w.start.Brokers, w.start.Topics = len(snap.Brokers), len(snap.Topics)
	// The restored table is what is on disk: no write until it changes.
	w.lastGen, w.wrote = s.routes.Generation(), true
	attrs := []any{"path", w.path, "taken", w.start.TakenAt.UTC().Format(time.RFC3339Nano),
		"age", time.Duration(s.clock()-h.TakenAt) * time.Millisecond,
		"brokers", w.start.Brokers, "topics", w.start.Topics, "entries", snap.Entries(),
		"load_time", time.Since(begun).Round(time.Microsecond)}
	w.logStart = func() { s.log.Info("starting warm: route table restored from its snapshot", attrs...) }
}

// coldFromPeers copies the table from peers when the local snapshot,
// unusable for err, could not be loaded; failing that, the server starts
// cold and one log line says why, for the file and for each peer.
func (s *Server) coldFromPeers(peers []string, err error) {
	w := &s.warm
	ok, failures := s.copyFromPeers(peers)
	if ok {
		return
	}
	w.start.Cold += "; no peer copy: " + strings.Join(failures, "; ")
	attrs := []any{"path", w.path, "snapshot", err, "peers", strings.Join(failures, "; ")}
	w.logStart = func() {
		s.log.Warn("starting cold: no usable route snapshot and no peer copied its table; routes fill as brokers register (up to 30 s)",
			append(attrs, "setting", "routeSnapshotPeers")...)
	}
}

func coldReason(err error) string {
	switch {
	case routesnap.IsNotExist(err):
		return "no route snapshot"
	case errors.Is(err, routesnap.ErrStale):
		return "route snapshot too old"
	case errors.Is(err, routesnap.ErrVersion):
		return "route snapshot of another format version"
	case errors.Is(err, routesnap.ErrTruncated):
		return "route snapshot truncated"
	}
	return "route snapshot unusable"
}

// WarmStart says how the server started.
func (s *Server) WarmStart() WarmStart { return s.warm.start }

// writeSnapshot writes the table to the snapshot file when it changed
// since the last write. It runs on the background task, never on a
// request: Export holds the writers' lock only to copy the broker tables
// and collect the immutable topic entries.
func (s *Server) writeSnapshot() { s.snapshotNow(false) }

// finalSnapshot is Shutdown's write, before the connections close: it is
// the last one this server makes.
func (s *Server) finalSnapshot() { s.snapshotNow(true) }

func (s *Server) snapshotNow(final bool) {
	w := &s.warm
	if w.path == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.final {
		return
	}
	w.final = final
	if w.wrote && s.routes.Generation() == w.lastGen {
		return
	}
	begun := time.Now()
	snap, gen := s.routes.Export()
	n, err := routesnap.Write(w.path, snap)
	took := time.Since(begun)
	if err != nil {
		w.failures.Inc()
		s.log.Error("route snapshot not written; a restart starts from the previous one or cold",
			"path", w.path, "err", err, "setting", "routeSnapshotPath")
		return
	}
	w.writes.Inc()
	w.bytes.Store(int64(n))
	w.nanos.Store(int64(took))
	w.lastGen, w.wrote = gen, true
	s.log.Debug("route snapshot written", "path", w.path, "bytes", n, "took", took,
		"brokers", len(snap.Brokers), "topics", len(snap.Topics))
}

// startSnapshots logs how the server started and starts the background
// writer.
func (s *Server) startSnapshots() {
	if f := s.warm.logStart; f != nil {
		f()
	}
	if s.warm.path != "" {
		s.every(s.warm.interval, s.writeSnapshot)
	}
}

// warmFamilies are the snapshot's metrics.
var warmFamilies = []metrics.Family{
	{Name: metricsPrefix + "route_snapshot_bytes", Help: "Size of the last route snapshot written.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "route_snapshot_write_seconds", Help: "Time the last route snapshot took to export, encode and write.", Type: prometheus.GaugeValue},
	{Name: metricsPrefix + "route_snapshot_writes_total", Help: "Route snapshots written.", Type: prometheus.CounterValue},
	{Name: metricsPrefix + "route_snapshot_write_failures_total", Help: "Route snapshots that could not be written.", Type: prometheus.CounterValue},
	{Name: metricsPrefix + "started_warm", Help: "1 when the server started from a route snapshot, its own or a peer's.", Type: prometheus.GaugeValue},
}

func (s *Server) warmCollector() prometheus.Collector {
	return metrics.NewScrape(func(e metrics.Emitter) {
		w := &s.warm
		e.Emit(metricsPrefix+"route_snapshot_bytes", float64(w.bytes.Load()))
		e.Emit(metricsPrefix+"route_snapshot_write_seconds", time.Duration(w.nanos.Load()).Seconds())
		e.Emit(metricsPrefix+"route_snapshot_writes_total", float64(w.writes.Load()))
		e.Emit(metricsPrefix+"route_snapshot_write_failures_total", float64(w.failures.Load()))
		warm := 0.0
		if w.start.Warm {
			warm = 1
		}
		e.Emit(metricsPrefix+"started_warm", warm)
	}, warmFamilies...)
}
