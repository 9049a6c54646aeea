// compare.go holds the compare scenario: several servers (rocketns binaries,
// the echo ceilings) each started as a child process, on the server CPUs
// when pinned, and driven in turn with the same load, round after round, so
// that drift of a busy machine spreads over all of them alike.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/bench/echo"
)

// Target is one server of a compare run: a rocketns binary (Exe) or an echo
// server (Echo, one of the echo kinds).
type Target struct {
	Name string
	Exe  string
	Echo string
}

// Echo target names: the ratios of a compare run are to EchoNetpoll.
const (
	EchoNetpoll = "echo-netpoll"
	EchoStd     = "echo-std"
)

// ParseTargets reads a comma list of NAME=PATH (a rocketns namesrv binary)
// and the echo servers "echo-netpoll" and "echo-std".
func ParseTargets(s string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var t Target
		switch name, path, ok := strings.Cut(f, "="); {
		case f == EchoNetpoll:
			t = Target{Name: f, Echo: echo.KindNetpoll}
		case f == EchoStd:
			t = Target{Name: f, Echo: echo.KindStd}
		case ok && name != "" && path != "" && !strings.HasPrefix(name, "echo"):
			// Each child runs in a temporary directory of its own, where
			// a relative path would name nothing.
			if strings.ContainsRune(path, filepath.Separator) && !filepath.IsAbs(path) {
				abs, err := filepath.Abs(path)
				if err != nil {
					return nil, fmt.Errorf("target %q: %w", f, err)
				}
				path = abs
			}
			t = Target{Name: name, Exe: path}
		default:
			return nil, fmt.Errorf("target %q: want NAME=PATH of a namesrv binary, %s or %s", f, EchoNetpoll, EchoStd)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("target %q named twice", t.Name)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out, nil
}

// running is a started target.
type running struct {
	Target
	addr    string
	pid     int
	cluster *Cluster
	stop    func() error
}

// runCompare starts every target, then runs each conns x depth combination
// against each target in turn, o.Rounds times, the order rotated every
// round. Each row's VsLimit is its QPS over the netpoll echo's of the same
// round, conns and depth; the metrics give the ranges over the rounds.
func runCompare(ctx context.Context, o Options, r *Report) (err error) {
	if len(o.Targets) == 0 {
		return errors.New("compare: no targets (-targets)")
	}
	rounds := max(o.Rounds, 1)
	var started []*running
	defer func() {
		for _, t := range started {
			if cerr := t.stop(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	var body []byte
	for _, t := range o.Targets {
		if t.Exe == "" {
			continue
		}
		rt, err := startNamesrv(ctx, o, t)
		if err != nil {
			return err
		}
		started = append(started, rt)
		r.Brokers, r.Topics, r.PerTopic = o.Cluster.Brokers, o.Cluster.Topics, o.Cluster.PerTopic
		if rt.cluster, err = StartCluster(ctx, rt.addr, o.Cluster); err != nil {
			return fmt.Errorf("compare: %s: %w", t.Name, err)
		}
		if body == nil {
			if body, err = fetchRoute(ctx, rt.addr, rt.cluster.Topics[0], o.Version); err != nil {
				return fmt.Errorf("compare: %s: %w", t.Name, err)
			}
		}
	}
	if body == nil {
		return errors.New("compare: the echo servers answer with a rocketns route body: name at least one NAME=PATH target")
	}
	r.Add("echo_body_bytes", float64(len(body)), "B")
	topics := make([]string, o.Cluster.Topics)
	for i := range topics {
		topics[i] = TopicName(i)
	}
	for _, t := range o.Targets {
		if t.Echo == "" {
			continue
		}
		if o.LimitExe == "" {
			return errors.New("compare: echo targets run as child processes: LimitExe is not set")
		}
		args := append(slices.Clone(o.LimitArgs), "-echo-kind", t.Echo)
		p, err := StartLimitProcess(o.LimitExe, args, body, o.Pin.Server)
		if err != nil {
			return fmt.Errorf("compare: %s: %w", t.Name, err)
		}
		started = append(started, &running{Target: t, addr: p.Addr(), pid: p.PID(), stop: p.Close})
	}
	// Started in target order for the report.
	byName := map[string]*running{}
	for _, s := range started {
		byName[s.Name] = s
	}
	order := make([]*running, len(o.Targets))
	for i, t := range o.Targets {
		order[i] = byName[t.Name]
		if o.Pin.Enabled() {
			aff, err := Affinity(order[i].pid)
			if err != nil {
				return err
			}
			r.Add(t.Name+"_cpus "+aff, float64(order[i].pid), "pid")
		}
	}
	type key struct {
		target      string
		conns, deep int
	}
	qps := map[key][]float64{}
	ratio := map[key][]float64{}
	cpuNs := map[key][]float64{}
	userShare := map[key][]float64{}
	for round := range rounds {
		for _, conns := range o.Conns {
			for _, depth := range o.Depth {
				rowAt := map[string]int{}
				for i := range order {
					t := order[(i+round)%len(order)]
					if ctx.Err() != nil {
						return ctx.Err()
					}
					label := fmt.Sprintf("%s r%d", t.Name, round+1)
					cpu0, cerr := ReadCPUTime(t.pid)
					res, err := runLoad(ctx, o, label, t.addr, topics, conns, depth, nil)
					if err != nil {
						return err
					}
					cpu1, cerr1 := ReadCPUTime(t.pid)
					row := LoadRow(label, res)
					if cerr == nil && cerr1 == nil && res.Requests > 0 {
						// CPU per request is what the server spent, whatever
						// else shared its core: the figure busy machines
						// distort least.
						k := key{t.Name, conns, depth}
						ns := float64(cpu1.RunNs-cpu0.RunNs) / float64(res.Requests)
						cpuNs[k] = append(cpuNs[k], ns)
						if ticks := (cpu1.UserTicks - cpu0.UserTicks) + (cpu1.SysTicks - cpu0.SysTicks); ticks > 0 {
							userShare[k] = append(userShare[k], float64(cpu1.UserTicks-cpu0.UserTicks)/float64(ticks))
						}
					}
					noteErr(r, label, res)
					rowAt[t.Name] = len(r.Rows)
					r.Rows = append(r.Rows, row)
					qps[key{t.Name, conns, depth}] = append(qps[key{t.Name, conns, depth}], row.QPS)
				}
				if at, ok := rowAt[EchoNetpoll]; ok && r.Rows[at].QPS > 0 {
					for name, i := range rowAt {
						v := r.Rows[i].QPS / r.Rows[at].QPS
						r.Rows[i].VsLimit = v
						ratio[key{name, conns, depth}] = append(ratio[key{name, conns, depth}], v)
					}
				}
			}
		}
	}
	for _, conns := range o.Conns {
		for _, depth := range o.Depth {
			for _, t := range o.Targets {
				k := key{t.Name, conns, depth}
				base := fmt.Sprintf("%s_c%d_d%d", t.Name, conns, depth)
				lo, hi := minMax(qps[k])
				r.Add(base+"_qps_min", lo, "/s")
				r.Add(base+"_qps_max", hi, "/s")
				if v := cpuNs[k]; len(v) > 0 {
					lo, hi := minMax(v)
					r.Add(base+"_server_cpu_per_req_min", lo, "ns")
					r.Add(base+"_server_cpu_per_req_max", hi, "ns")
				}
				if v := userShare[k]; len(v) > 0 {
					lo, hi := minMax(v)
					r.Add(base+"_server_user_share_min", lo, "of cpu")
					r.Add(base+"_server_user_share_max", hi, "of cpu")
				}
				if rs := ratio[k]; len(rs) > 0 && t.Name != EchoNetpoll {
					lo, hi := minMax(rs)
					r.Add(base+"_vs_"+EchoNetpoll+"_min", lo, "x")
					r.Add(base+"_vs_"+EchoNetpoll+"_max", hi, "x")
				}
			}
		}
	}
	return nil
}

func minMax(v []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if len(v) == 0 {
		return 0, 0
	}
	return lo, hi
}

// startNamesrv runs a namesrv binary on a free loopback port with its files
// in a temporary directory, on the server CPUs when pinned, and waits until
// it accepts connections.
func startNamesrv(ctx context.Context, o Options, t Target) (*running, error) {
	dir, err := os.MkdirTemp("", "nsbench-"+t.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("compare: %s: %w", t.Name, err)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("compare: %s: %w", t.Name, err)
	}
	logf, err := os.Create(filepath.Join(dir, "namesrv.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("compare: %s: %w", t.Name, err)
	}
	cmd := exec.Command(t.Exe, "--bindAddress", "127.0.0.1", "--listenPort", strconv.Itoa(port),
		"--kvConfigPath", filepath.Join(dir, "kvConfig.json"), "--set", "configStorePath="+filepath.Join(dir, "namesrv.properties"),
		"--logLevel", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	if err := StartPinned(cmd, o.Pin.Server); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("compare: %s: start %s: %w", t.Name, t.Exe, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rt := &running{Target: t, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), pid: cmd.Process.Pid}
	rt.stop = func() error {
		if rt.cluster != nil {
			rt.cluster.Close()
		}
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		return os.RemoveAll(dir)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", rt.addr, time.Second)
		if err == nil {
			c.Close()
			return rt, nil
		}
		select {
		case werr := <-exited:
			exited <- werr
			log, _ := os.ReadFile(logf.Name())
			rt.stop()
			return nil, fmt.Errorf("compare: %s exited (%v) before listening: %s", t.Name, werr, strings.TrimSpace(string(log)))
		case <-ctx.Done():
			rt.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			rt.stop()
			return nil, fmt.Errorf("compare: %s not listening on %s after 15 s", t.Name, rt.addr)
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
