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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketns/rocketns/bench/echo"
	"github.com/rocketns/rocketns/bench/loadgen"
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/buildinfo"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type flags struct {
	scenario      string
	addr          string
	inproc        bool
	serverPID     int
	scanInterval  int64
	brokers       int
	topics        int
	perTopic      int
	brokerTO      int64
	mutate        bool
	conns         string
	depth         string
	duration      time.Duration
	zipf          float64
	version       int
	limit         bool
	limitInproc   bool
	drop          string
	silent        bool
	bigTopics     int
	jsonOut       bool
	quiet         bool
	serveLimit    bool
	listen        string
	hold          bool
	showVersion   bool
	pin           string
	targets       string
	rounds        int
	echoKind      string
	attackConns   int
	attackReqs    int
	attackFrom    string
	settle        time.Duration
	namesrv       string
	servers       int
	warm          string
	registerEvery time.Duration
	warmup        time.Duration
	tail          time.Duration
	clients       int
	queryEvery    time.Duration
	clientTO      time.Duration
	failover      bool
}

// parse reads the command line. Help goes to stdout; an error comes back
// for the caller to print in one line, without the whole usage.
func parse(args []string, stdout io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("nsbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: nsbench -scenario %s [flags]\n\n", strings.Join(loadgen.ScenarioNames(), "|"))
		fmt.Fprint(fs.Output(), usageText)
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
	fs.IntVar(&f.version, "route-version", int(codec.ServerVersion), "route request version (>= 401 asks for standard JSON; was -version)")
	fs.BoolVar(&f.showVersion, "version", false, "print nsbench's version and exit")
	fs.BoolVar(&f.limit, "limit", true, "route: run the limit server with the same load before each route run (doubling the time) and report \"vs limit\"; -limit=false skips it")
	fs.BoolVar(&f.limitInproc, "limit-inproc", false, "run the limit server in this process even against an external server")
	fs.StringVar(&f.drop, "drop", "10,50,100", "expiry: percentages of brokers to take away, one run each")
	fs.BoolVar(&f.silent, "silent", false, "expiry: brokers stop heartbeating instead of closing their connections")
	fs.IntVar(&f.bigTopics, "big-topics", 100_000, "register-big: topics in the one registration")
	fs.IntVar(&f.attackConns, "attack-conns", 300, "pipeline: attacking connections, all from -attack-from")
	fs.IntVar(&f.attackReqs, "attack-requests", 3000, "pipeline: GET_ALL_TOPIC_LIST requests each attacking connection writes at once, never reading an answer")
	fs.StringVar(&f.attackFrom, "attack-from", "127.0.0.2", "pipeline: the attackers' loopback source address")
	fs.DurationVar(&f.settle, "settle", 60*time.Second, "pipeline: how long the server's RSS is followed after the run, without load")
	fs.StringVar(&f.namesrv, "namesrv", "bin/namesrv", "rolling: the namesrv binary started -servers times")
	fs.IntVar(&f.servers, "servers", 3, "rolling: NameServers restarted one after the other")
	fs.StringVar(&f.warm, "warm", "off,on,off,on", "rolling: routeSnapshotEnable of each round, a comma list of on and off")
	fs.DurationVar(&f.registerEvery, "register-every", 30*time.Second, "rolling: each broker's registration interval (a broker's registerNameServerPeriod); brokers register only then")
	fs.DurationVar(&f.warmup, "warmup", 10*time.Second, "rolling: load before the first restart")
	fs.DurationVar(&f.tail, "tail", 0, "rolling: load after the last restart (0: -register-every plus a second, so every broker registered again)")
	fs.IntVar(&f.clients, "clients", 4, "rolling: clients started on each server, one route query at a time")
	fs.DurationVar(&f.queryEvery, "query-every", 10*time.Millisecond, "rolling: each client's interval between route queries")
	fs.DurationVar(&f.clientTO, "client-timeout", 3*time.Second, "rolling: a client's timeout per query, dial included (the Java client's 3 s)")
	fs.BoolVar(&f.failover, "failover", false, "rolling: a client whose connection failed moves to the next server, as the Java client does; without it the client dials its own server again")
	fs.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	fs.BoolVar(&f.serveLimit, "serve-limit", false, "internal: serve the limit body read from stdin (the child of a limit run)")
	fs.StringVar(&f.echoKind, "echo-kind", echo.KindNetpoll, "internal: -serve-limit's server, netpoll or std")
	fs.StringVar(&f.pin, "pin", "", "SERVER/GENERATOR CPU lists, like 0/1: the servers nsbench starts (limit, -targets) run on the first, nsbench itself on the second (sched_setaffinity); with -server-pid that server is moved too")
	fs.StringVar(&f.targets, "targets", "", "compare: comma list of NAME=PATH (a namesrv binary to start), "+loadgen.EchoNetpoll+" and "+loadgen.EchoStd)
	fs.IntVar(&f.rounds, "rounds", 3, "compare: rounds; each drives every target once per -conns x -depth, in a rotated order")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "internal: -serve-limit's listen address")
	fs.BoolVar(&f.hold, "hold", false, "after the run, keep the simulated brokers registered (heartbeating) until Ctrl-C, to look at them with nsadmin or the status page; needs -addr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.scenario == loadgen.ScenarioCompare && f.targets == "" {
		return nil, fmt.Errorf("-scenario compare needs -targets")
	}
	if f.rounds <= 0 {
		return nil, fmt.Errorf("-rounds must be positive")
	}
	if f.hold && f.inproc {
		return nil, fmt.Errorf("-hold keeps brokers on a server that outlives nsbench: use -addr, not -inproc")
	}
	return &f, nil
}

// usageText explains what the report means before the flag list.
const usageText = `Drives a NameServer on loopback with simulated brokers and clients and
reports throughput and latency.

Phases: the simulated brokers register first (setup); then every -conns x
-depth combination runs for -duration. For the route scenario each
combination runs twice by default: first against the limit server, then
against the NameServer, so "-duration 4s" takes about 8 s per combination
plus setup (-limit=false halves it). The progress lines name the phase
("limit c=32 d=1 ...", "route c=32 d=1 ...").

"vs limit" is the route run's QPS divided by the limit run's. The limit
server is a minimal netpoll echo (bench/echo: frame split, the opaque
copied, a canned reply with the same bytes as the NameServer's answer) and
does no other work: the most this machine's loopback, kernel and this
client can carry. 0.8 means the NameServer reaches 80% of that ceiling.

The compare scenario starts every -targets server as a child process
(namesrv binaries with their files in a temporary directory, and the echo
servers answering with the first binary's route body) and drives each in
turn with the same load, -rounds times, rotating the order every round;
"vs limit" is then the QPS over the netpoll echo's of the same round, and
the metrics give each target's QPS and ratio ranges. With -pin 0/1 the
servers run on CPU 0 and the generator on CPU 1.

The rolling scenario starts -servers namesrv processes (-namesrv), registers
the brokers with all of them (then each broker every -register-every, at a
random phase), starts -clients clients on each and restarts the servers one
after the other: SIGTERM, start again, wait for the first answer. One round
per -warm entry (routeSnapshotEnable). The table counts, per round and
server, what the clients saw: TOPIC_NOT_EXIST, incomplete routes (fewer
brokers than carry the topic), timeouts, refused dials, closed connections,
and the part the stopping process answered between SIGTERM and its exit.

`

// plan says what the run will do and about how long it takes, so that a
// limit run doubling -duration is never a surprise.
func (f *flags) plan(o loadgen.Options) string {
	runs := len(o.Conns) * len(o.Depth)
	switch f.scenario {
	case loadgen.ScenarioRoute:
		per := "the route run"
		n := runs
		if o.Limit {
			per, n = "a limit run, then the route run", 2*runs
		}
		return fmt.Sprintf("nsbench: route: %d combination(s) of -conns x -depth, each %s, %s apiece: about %s after setup",
			runs, per, f.duration, time.Duration(n)*f.duration)
	case loadgen.ScenarioCompare:
		n := runs * len(o.Targets) * o.Rounds
		return fmt.Sprintf("nsbench: compare: %d target(s) x %d combination(s) x %d round(s), %s apiece: about %s after setup",
			len(o.Targets), runs, o.Rounds, f.duration, time.Duration(n)*f.duration)
	case loadgen.ScenarioRolling:
		rs := o.Rolling
		tail := rs.Tail
		if tail <= 0 {
			tail = rs.RegisterEvery + time.Second
		}
		per := rs.Warmup + tail
		return fmt.Sprintf("nsbench: rolling: %d round(s) (%s), each %d servers restarted one after the other after %s of load and followed by %s: about %s plus the restarts",
			len(rs.Warm), f.warm, rs.Servers, rs.Warmup, tail, time.Duration(len(rs.Warm))*per)
	case loadgen.ScenarioLimit:
		return fmt.Sprintf("nsbench: limit: %d combination(s), %s apiece against the limit server only: about %s after setup",
			runs, f.duration, time.Duration(runs)*f.duration)
	}
	return "nsbench: " + f.scenario
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
		Silent: f.silent, BigTopics: f.bigTopics, Rounds: f.rounds,
		Pipeline: loadgen.PipelineSpec{Conns: f.attackConns, Requests: f.attackReqs, From: f.attackFrom, Settle: f.settle},
		Log:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	var err error
	if o.Conns, err = intList("conns", f.conns); err != nil {
		return o, err
	}
	if o.Depth, err = intList("depth", f.depth); err != nil {
		return o, err
	}
	if o.Pin, err = loadgen.ParsePin(f.pin); err != nil {
		return o, err
	}
	if f.scenario == loadgen.ScenarioCompare {
		if o.Targets, err = loadgen.ParseTargets(f.targets); err != nil {
			return o, err
		}
	}
	if f.scenario == loadgen.ScenarioRolling {
		warm, err := loadgen.ParseWarm(f.warm)
		if err != nil {
			return o, err
		}
		if f.servers <= 0 || f.clients <= 0 || f.registerEvery <= 0 || f.warmup <= 0 || f.tail < 0 || f.queryEvery <= 0 || f.clientTO <= 0 {
			return o, fmt.Errorf("rolling: -servers, -clients, -register-every, -warmup, -query-every and -client-timeout must be positive, -tail not negative")
		}
		o.Rolling = loadgen.RollingSpec{Exe: f.namesrv, Servers: f.servers, Warm: warm, RegisterEvery: f.registerEvery,
			Warmup: f.warmup, Tail: f.tail, ClientsPerServer: f.clients, QueryEvery: f.queryEvery, ClientTimeout: f.clientTO,
			Failover: f.failover}
		if strings.ContainsRune(f.namesrv, os.PathSeparator) {
			// The servers run in directories of their own.
			if o.Rolling.Exe, err = filepath.Abs(f.namesrv); err != nil {
				return o, err
			}
		}
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
	if (o.Limit && !f.inproc && !f.limitInproc) || f.scenario == loadgen.ScenarioCompare {
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runCtx(ctx, args, stdin, stdout, stderr)
}

// runCtx is run until ctx ends (Ctrl-C, in main).
func runCtx(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parse(args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "nsbench: %v\nRun 'nsbench -h' for the flags.\n", err)
		return 2
	}
	if f.showVersion {
		fmt.Fprintln(stdout, buildinfo.String("nsbench"))
		return 0
	}
	if f.serveLimit {
		// The parent's Ctrl-C reaches the whole process group; the child
		// must outlive it until the parent closes stdin.
		signal.Ignore(os.Interrupt)
		if err := loadgen.ServeLimitChild(f.echoKind, f.listen, stdin, stdout); err != nil {
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
	if !f.quiet {
		fmt.Fprintln(stderr, f.plan(o))
	}
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
	if f.hold && ctx.Err() == nil {
		if err := hold(ctx, f.addr, o.Cluster, stderr); err != nil {
			fmt.Fprintf(stderr, "nsbench: -hold: %v\n", err)
			return 1
		}
	}
	return code
}

// hold registers the simulated brokers again and keeps them heartbeating
// until ctx ends (Ctrl-C).
func hold(ctx context.Context, addr string, spec loadgen.ClusterSpec, stderr io.Writer) error {
	c, err := loadgen.StartCluster(ctx, addr, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "nsbench: holding %d simulated brokers (%s ...) with %d topics registered on %s; Ctrl-C ends\n",
		spec.Brokers, loadgen.BrokerName(0), spec.Topics, addr)
	<-ctx.Done()
	return c.Close()
}
