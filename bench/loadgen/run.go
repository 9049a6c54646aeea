// run.go holds Options and Run: the target (an address, an in-process
// server or the limit server) and the scenario driven against it.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

// Scenario names.
const (
	ScenarioRoute       = "route"
	ScenarioLimit       = "limit"
	ScenarioStorm       = "storm"
	ScenarioExpiry      = "expiry"
	ScenarioRegisterBig = "register-big"
	ScenarioRSS         = "rss"
	ScenarioCompare     = "compare"
	ScenarioPipeline    = "pipeline"
	ScenarioRolling     = "rolling"
)

// ScenarioNames lists every scenario.
func ScenarioNames() []string {
	return []string{ScenarioRoute, ScenarioLimit, ScenarioStorm, ScenarioExpiry, ScenarioRegisterBig, ScenarioRSS, ScenarioCompare, ScenarioPipeline, ScenarioRolling}
}

// Options is everything a scenario may use.
type Options struct {
	// Addr is the NameServer to drive; ignored with Inproc.
	Addr string
	// Inproc starts rocketns inside this process (127.0.0.1, any port),
	// with ScanIntervalMillis and a frame limit large enough for
	// register-big.
	Inproc             bool
	ScanIntervalMillis int64
	// ServerPID, when set, is the external server whose RSS is reported.
	ServerPID int

	Cluster ClusterSpec

	Conns, Depth []int // every combination is run
	Duration     time.Duration
	Zipf         float64
	Version      int32

	// Limit runs the limit mode before each route run with the same
	// conns, depth and duration. LimitExe/LimitArgs, when set, run the
	// limit server as a child process (see StartLimitProcess); otherwise
	// it runs in this process.
	Limit     bool
	LimitExe  string
	LimitArgs []string

	// Pin, when set, moves this process (the generator) onto
	// Pin.Generator and starts the child servers (limit, compare targets)
	// on Pin.Server; an external server given by ServerPID is moved onto
	// Pin.Server too. It needs servers in other processes: not Inproc.
	Pin Pin
	// Targets and Rounds are the compare scenario's servers and how many
	// times each is driven at every conns x depth.
	Targets []Target
	Rounds  int

	DropPercents []int // expiry
	Silent       bool  // expiry: brokers go silent instead of closing
	BigTopics    int   // register-big
	Pipeline     PipelineSpec
	Rolling      RollingSpec

	// Progress receives a line per second while loads run; nil for none.
	Progress io.Writer
	Log      *slog.Logger
}

// Run runs one scenario. On ctx's end it stops and returns what it measured
// with Interrupted set.
func Run(ctx context.Context, scenario string, o Options) (*Report, error) {
	if o.Version == 0 {
		o.Version = codec.ServerVersion
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Report{Scenario: scenario, Server: o.Addr}
	if o.Pin.Enabled() {
		if o.Inproc {
			return nil, errors.New("pin: an in-process server shares the generator's CPUs: drive an external one (-addr, -targets)")
		}
		if err := PinProcess(0, o.Pin.Generator); err != nil {
			return nil, err
		}
		if o.ServerPID > 0 {
			if err := PinProcess(o.ServerPID, o.Pin.Server); err != nil {
				return nil, err
			}
		}
		r.Add("pinned generator cpus "+cpuList(o.Pin.Generator)+", servers "+cpuList(o.Pin.Server), float64(len(o.Pin.Generator)), "generator cpus")
	}
	if scenario == ScenarioCompare || scenario == ScenarioRolling {
		if o.Inproc && scenario == ScenarioRolling {
			return nil, errors.New("rolling: restarts its servers as processes: -inproc does not apply")
		}
		var err error
		if scenario == ScenarioCompare {
			r.Server = "compare"
			err = runCompare(ctx, o, r)
		} else {
			err = runRolling(ctx, o, r)
		}
		if ctx.Err() != nil {
			r.Interrupted = true
			if err != nil && errors.Is(err, context.Canceled) {
				err = nil
			}
		}
		return r, err
	}
	if o.Inproc {
		srv, dir, err := startInproc(o)
		if err != nil {
			return nil, err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(sctx)
			cancel()
			os.RemoveAll(dir)
		}()
		o.Addr = srv.Addr()
		r.Server = "in-process " + o.Addr
	}
	if err := checkLoopback(o.Addr); err != nil {
		return nil, err
	}
	var err error
	switch scenario {
	case ScenarioRoute:
		err = runRoute(ctx, o, r, false)
	case ScenarioLimit:
		err = runRoute(ctx, o, r, true)
	case ScenarioStorm:
		err = runStorm(ctx, o, r)
	case ScenarioExpiry:
		err = runExpiry(ctx, o, r)
	case ScenarioRegisterBig:
		err = runRegisterBig(ctx, o, r)
	case ScenarioRSS:
		err = runRSS(ctx, o, r)
	case ScenarioPipeline:
		err = runPipeline(ctx, o, r)
	default:
		return nil, fmt.Errorf("unknown scenario %q (have %v)", scenario, ScenarioNames())
	}
	if ctx.Err() != nil {
		r.Interrupted = true
		// A scenario cut short reports what it has, not a failure.
		if err != nil && errors.Is(err, context.Canceled) {
			err = nil
		}
	}
	return r, err
}

// checkLoopback refuses anything but a loopback address: the generator
// saturates what it drives.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q: only loopback addresses (127.0.0.1) may be driven", addr)
	}
	return nil
}

// bigFrameMax is the in-process server's frame limit: a 100k-topic
// registration is about 20 MB, above Java's 16 MiB default.
const bigFrameMax = 256 << 20

func startInproc(o Options) (*server.Server, string, error) {
	dir, err := os.MkdirTemp("", "nsbench-")
	if err != nil {
		return nil, "", fmt.Errorf("in-process server: %w", err)
	}
	cfg := config.Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	cfg.FrameMaxLength = bigFrameMax
	if o.ScanIntervalMillis > 0 {
		cfg.ScanNotActiveBrokerInterval = o.ScanIntervalMillis
	}
	srv, err := server.New(cfg, o.Log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("in-process server: %w", err)
	}
	if err := srv.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("in-process server: %w", err)
	}
	return srv, dir, nil
}

// serverRSS reads the driven server's RSS: this process's with Inproc, the
// given PID's otherwise; ok is false when neither is known.
func serverRSS(o Options) (rss, hwm int64, ok bool, err error) {
	switch {
	case o.Inproc:
		rss, hwm, err = ReadRSS(0)
	case o.ServerPID > 0:
		rss, hwm, err = ReadRSS(o.ServerPID)
	default:
		return 0, 0, false, nil
	}
	return rss, hwm, err == nil, err
}

func addRSS(o Options, r *Report, name string) {
	rss, hwm, ok, err := serverRSS(o)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	if !ok {
		return
	}
	r.Add(name+"_rss", float64(rss)/(1<<20), "MiB")
	r.Add(name+"_rss_peak", float64(hwm)/(1<<20), "MiB")
}

// setup registers the cluster and records how long it took.
func setup(ctx context.Context, o Options, r *Report) (*Cluster, error) {
	r.Brokers, r.Topics, r.PerTopic = o.Cluster.Brokers, o.Cluster.Topics, o.Cluster.PerTopic
	t0 := time.Now()
	c, err := StartCluster(ctx, o.Addr, o.Cluster)
	if err != nil {
		return nil, err
	}
	r.Add("setup_register_all", float64(time.Since(t0).Microseconds())/1e3, "ms")
	r.Add("topic_broker_entries", float64(o.Cluster.Entries()), "")
	return c, nil
}

// limitTarget is a running limit server, in or out of process.
type limitTarget struct {
	addr  string
	close func() error
}

// startLimit fetches the real route body of topic (so the limit answers
// with the same number of bytes) and starts the limit server with it.
func startLimit(ctx context.Context, o Options, topic string) (*limitTarget, int, error) {
	body, err := fetchRoute(ctx, o.Addr, topic, o.Version)
	if err != nil {
		return nil, 0, fmt.Errorf("limit: %w", err)
	}
	if o.LimitExe != "" {
		p, err := StartLimitProcess(o.LimitExe, o.LimitArgs, body, o.Pin.Server)
		if err != nil {
			return nil, 0, err
		}
		return &limitTarget{addr: p.Addr(), close: p.Close}, len(body), nil
	}
	s, err := StartLimitServer("127.0.0.1:0", body)
	if err != nil {
		return nil, 0, err
	}
	return &limitTarget{addr: s.Addr(), close: func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.Close(sctx)
	}}, len(body), nil
}

// fetchRoute asks the server at addr for topic's route body.
func fetchRoute(ctx context.Context, addr, topic string, version int32) ([]byte, error) {
	cl, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	code, remark, payload, err := cl.RouteBody(cctx, topic, version)
	if err != nil {
		return nil, err
	}
	if code != codec.Success {
		return nil, fmt.Errorf("route of %s: code %d %s", topic, code, remark)
	}
	return append([]byte(nil), payload...), nil
}

// runLoad runs one load to its end (or ctx's), printing progress, and calls
// during (if any) with the running load.
func runLoad(ctx context.Context, o Options, label, addr string, topics []string, conns, depth int, during func(*Load)) (*LoadResult, error) {
	l, err := StartLoad(ctx, LoadConfig{
		Addr: addr, Conns: conns, Depth: depth, Duration: o.Duration,
		Topics: topics, Zipf: o.Zipf, Version: o.Version, Seed: int64(conns*1000 + depth),
	})
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		progress(o.Progress, label+" c="+strconv.Itoa(conns)+" d="+strconv.Itoa(depth), l, stop)
	}()
	if during != nil {
		during(l)
	}
	res := l.Wait()
	close(stop)
	<-progressDone
	return res, nil
}

// progress prints a line per second: completed requests and the last
// second's rate.
func progress(w io.Writer, label string, l *Load, stop <-chan struct{}) {
	if w == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-stop:
			return
		case <-l.Done():
			return
		case <-t.C:
			n := l.Completed()
			fmt.Fprintf(w, "nsbench: %s t=%.0fs qps=%d total=%d\n", label, l.Elapsed().Seconds(), n-last, n)
			last = n
		}
	}
}
