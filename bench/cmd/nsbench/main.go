// main.go holds nsbench's flags and runs the scenario they name.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketns/rocketns/bench/loadgen"
	"github.com/rocketns/rocketns/codec"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type flags struct {
	scenario     string
	addr         string
	inproc       bool
	serverPID    int
	scanInterval int64
	brokers      int
	topics       int
	perTopic     int
	brokerTO     int64
	mutate       bool
	conns        string
	depth        string
	duration     time.Duration
	zipf         float64
	version      int
	limit        bool
	limitInproc  bool
	drop         string
	silent       bool
	bigTopics    int
	jsonOut      bool
	quiet        bool
	serveLimit   bool
	listen       string
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("nsbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: nsbench -scenario %s [flags]\n\n", strings.Join(loadgen.ScenarioNames(), "|"))
		fs.PrintDefaults()
	}
	fs.StringVar(&f.scenario, "scenario", loadgen.ScenarioRoute, "what to run: "+strings.Join(loadgen.ScenarioNames(), ", "))
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9876", "NameServer to drive (loopback only)")
	fs.BoolVar(&f.inproc, "inproc", false, "start rocketns in this process instead of using -addr")
	fs.IntVar(&f.serverPID, "server-pid", 0, "PID of the external server, to report its RSS")
	fs.Int64Var(&f.scanInterval, "scan-interval", 0, "with -inproc: scanNotActiveBrokerInterval in ms (0: 5000, or 100 for -silent)")
	fs.IntVar(&f.brokers, "brokers", 4, "B: simulated brokers, one connection each")
	fs.IntVar(&f.topics, "topics", 1000, "T: topics")
	fs.IntVar(&f.perTopic, "per-topic", 2, "W: brokers carrying each topic")
	fs.Int64Var(&f.brokerTO, "broker-timeout", 0, "heartbeatTimeoutMillis the brokers send (0: server default; -silent with -inproc: 1000)")
	fs.BoolVar(&f.mutate, "mutate", false, "storm: flip queue counts on every registration so routes really change")
	fs.StringVar(&f.conns, "conns", "32", "C: route connections, a comma list runs each")
	fs.StringVar(&f.depth, "depth", "1", "D: requests in flight per connection, a comma list runs each")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "length of each load run")
	fs.Float64Var(&f.zipf, "zipf", 0, "topic popularity: 0 uniform, s > 1 Zipf with exponent s")
	fs.IntVar(&f.version, "version", int(codec.ServerVersion), "route request version (>= 401 asks for standard JSON)")
	fs.BoolVar(&f.limit, "limit", true, "run the limit mode before each route run and report the ratio")
	fs.BoolVar(&f.limitInproc, "limit-inproc", false, "run the limit server in this process even against an external server")
	fs.StringVar(&f.drop, "drop", "10,50,100", "expiry: percentages of brokers to take away, one run each")
	fs.BoolVar(&f.silent, "silent", false, "expiry: brokers stop heartbeating instead of closing their connections")
	fs.IntVar(&f.bigTopics, "big-topics", 100_000, "register-big: topics in the one registration")
	fs.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	fs.BoolVar(&f.serveLimit, "serve-limit", false, "internal: serve the limit body read from stdin (the child of a limit run)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "internal: -serve-limit's listen address")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return &f, nil
}

func intList(name, s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("-%s: %q is not a list of positive integers", name, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func (f *flags) options(stderr io.Writer) (loadgen.Options, error) {
	o := loadgen.Options{
		Addr: f.addr, Inproc: f.inproc, ServerPID: f.serverPID, ScanIntervalMillis: f.scanInterval,
		Cluster: loadgen.ClusterSpec{
			Brokers: f.brokers, Topics: f.topics, PerTopic: f.perTopic, TimeoutMillis: f.brokerTO, Mutate: f.mutate,
		},
		Duration: f.duration, Zipf: f.zipf, Version: int32(f.version), Limit: f.limit,
		Silent: f.silent, BigTopics: f.bigTopics,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	var err error
	if o.Conns, err = intList("conns", f.conns); err != nil {
		return o, err
	}
	if o.Depth, err = intList("depth", f.depth); err != nil {
		return o, err
	}
	if f.scenario == loadgen.ScenarioExpiry {
		if o.DropPercents, err = intList("drop", f.drop); err != nil {
			return o, err
		}
		for _, p := range o.DropPercents {
			if p > 100 {
				return o, fmt.Errorf("-drop: %d%% is above 100", p)
			}
		}
	}
	if f.zipf != 0 && f.zipf <= 1 {
		return o, fmt.Errorf("-zipf: exponent must be > 1, have %v", f.zipf)
	}
	if f.duration <= 0 {
		return o, fmt.Errorf("-duration must be positive")
	}
	if f.silent && f.inproc {
		// Silent brokers are only noticed by the liveness scan: short
		// settings let the run see it within seconds.
		if o.ScanIntervalMillis == 0 {
			o.ScanIntervalMillis = 100
		}
		if o.Cluster.TimeoutMillis == 0 {
			o.Cluster.TimeoutMillis = 1000
		}
	}
	if !f.quiet {
		o.Progress = stderr
	}
	if o.Limit && !f.inproc && !f.limitInproc {
		// Against an external server the limit runs in a child process,
		// so both sides of the ratio have the same process layout.
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("limit process: %w", err)
		}
		o.LimitExe, o.LimitArgs = exe, []string{"-serve-limit", "-listen", "127.0.0.1:0"}
	}
	return o, nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "nsbench: %v\n", err)
		return 2
	}
	if f.serveLimit {
		// The parent's Ctrl-C reaches the whole process group; the child
		// must outlive it until the parent closes stdin.
		signal.Ignore(os.Interrupt)
		if err := loadgen.ServeLimitChild(f.listen, stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "nsbench: %v\n", err)
			return 1
		}
		return 0
	}
	o, err := f.options(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "nsbench: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := loadgen.Run(ctx, f.scenario, o)
	code := 0
	if err != nil {
		fmt.Fprintf(stderr, "nsbench: %s: %v\n", f.scenario, err)
		code = 1
	}
	if rep == nil {
		return code
	}
	if f.jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "nsbench: %v\n", err)
		return 1
	}
	if len(rep.Errors) > 0 && code == 0 {
		code = 1
	}
	return code
}
