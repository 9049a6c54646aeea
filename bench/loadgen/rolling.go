// rolling.go holds the rolling scenario: a rolling restart of three
// NameServer processes (SIGTERM, start again, wait for its first answer,
// then the next) while simulated brokers register with all of them on their
// own interval and clients query routes, each on one server. It runs once
// per warm-restart setting and counts what the clients saw, per server and
// per kind: TOPIC_NOT_EXIST, timeouts, refused connections, closed ones.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
)

// RollingSpec is the rolling scenario's shape.
type RollingSpec struct {
	// Exe is the namesrv binary started Servers times.
	Exe     string
	Servers int
	// Warm is routeSnapshotEnable for each round, in order.
	Warm []bool
	// RegisterEvery is the brokers' registration interval (a broker's
	// registerNameServerPeriod, 30 s by default); each broker registers
	// at a random phase within it, as brokers started at different times
	// do, and only then: a restarted server hears from a broker again at
	// the broker's next registration, not sooner.
	RegisterEvery time.Duration
	// Warmup runs before the first restart; Tail after the last server
	// answers (0: RegisterEvery and a second, so every broker has
	// registered again with every server before the round ends).
	Warmup, Tail time.Duration
	// ClientsPerServer clients start on each server, each asking for one
	// route every QueryEvery, one request at a time, giving up after
	// ClientTimeout (the Java client's 3 s).
	ClientsPerServer int
	QueryEvery       time.Duration
	ClientTimeout    time.Duration
	// Failover moves a client whose connection failed to the next server
	// of the list, as the Java client's remoting layer does when its
	// channel is closed; without it a client dials its own server again.
	// An answer, whatever its code, never moves a client.
	Failover bool

	// phase draws a broker's first periodic registration after the one
	// at start; nil: uniform within RegisterEvery.
	phase func(every time.Duration) time.Duration
}

func (s RollingSpec) withDefaults() RollingSpec {
	if s.Servers <= 0 {
		s.Servers = 3
	}
	if len(s.Warm) == 0 {
		s.Warm = []bool{false, true, false, true}
	}
	if s.RegisterEvery <= 0 {
		s.RegisterEvery = 30 * time.Second
	}
	if s.Warmup <= 0 {
		s.Warmup = 10 * time.Second
	}
	if s.Tail <= 0 {
		s.Tail = s.RegisterEvery + time.Second
	}
	if s.ClientsPerServer <= 0 {
		s.ClientsPerServer = 4
	}
	if s.QueryEvery <= 0 {
		s.QueryEvery = 10 * time.Millisecond
	}
	if s.ClientTimeout <= 0 {
		s.ClientTimeout = 3 * time.Second
	}
	if s.phase == nil {
		s.phase = func(every time.Duration) time.Duration { return 1 + rand.N(every) }
	}
	return s
}

// warmLabel is a round's routeSnapshotEnable as the report says it.
func warmLabel(on bool) string {
	if on {
		return "warm"
	}
	return "cold"
}

// Outcome kinds of one client attempt.
const (
	outOK         = iota // SUCCESS with every broker of the topic
	outIncomplete        // SUCCESS listing fewer brokers than carry the topic
	outNotExist          // TOPIC_NOT_EXIST
	outOtherCode         // another code (SYSTEM_ERROR from needWaitForService, ...)
	outTimeout           // no answer within ClientTimeout, or a dial that timed out
	outRefused           // the dial was refused: nothing listens
	outClosed            // the connection failed (reset, EOF) under a request
	numOutcomes
)

// classifyErr sorts a failed dial or request into timeout, refused or
// closed.
func classifyErr(err error) int {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return outRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return outTimeout
	}
	return outClosed
}

// serverCounts is what the clients saw from one server in one round.
type serverCounts struct {
	n [numOutcomes]atomic.Uint64
	// lastNotExist is the latest TOPIC_NOT_EXIST (unix ns), to tell how
	// long after its restart the server still lacked routes.
	lastNotExist atomic.Int64
	mu           sync.Mutex
	hist         *Histogram // answered requests' latency
	// stopping is set from SIGTERM until the old process exited: answers
	// then come from a server shutting down, which should still have
	// every route.
	stopping                     atomic.Bool
	stopNotExist, stopIncomplete atomic.Uint64
}

func (c *serverCounts) record(out int, latency time.Duration, now time.Time) {
	c.n[out].Add(1)
	if out == outNotExist {
		c.lastNotExist.Store(now.UnixNano())
	}
	if c.stopping.Load() {
		switch out {
		case outNotExist:
			c.stopNotExist.Add(1)
		case outIncomplete:
			c.stopIncomplete.Add(1)
		}
	}
	if out <= outOtherCode {
		c.mu.Lock()
		c.hist.Record(latency.Nanoseconds())
		c.mu.Unlock()
	}
}

// RestartRow is one server's round of a rolling restart: what its clients
// saw during the whole round and what its restart took.
type RestartRow struct {
	Round   int    `json:"round"`
	Start   string `json:"start"` // warm or cold
	Server  int    `json:"server"`
	Queries uint64 `json:"queries"`
	OK      uint64 `json:"ok"`
	// Incomplete answers list fewer brokers than carry the topic.
	Incomplete uint64 `json:"incomplete"`
	NotExist   uint64 `json:"topic_not_exist"`
	// StopNotExist and StopIncomplete are the part of NotExist and
	// Incomplete the old process answered between SIGTERM and its exit.
	StopNotExist   uint64 `json:"stop_topic_not_exist"`
	StopIncomplete uint64 `json:"stop_incomplete"`
	OtherCode      uint64 `json:"other_code"`
	Timeout        uint64 `json:"timeout"`
	Refused        uint64 `json:"refused"`
	Closed         uint64 `json:"closed"`
	// NotExistFor is how long after its first answer the restarted server
	// still answered TOPIC_NOT_EXIST to some client; 0 when it never did.
	NotExistFor float64 `json:"not_exist_for_s"`
	// Down is SIGTERM to the first answer; FirstAnswer is the new
	// process's spawn to its first answer, whose code is FirstCode (a
	// route query of the first topic).
	Down        float64 `json:"down_s"`
	FirstAnswer float64 `json:"first_answer_s"`
	FirstCode   int32   `json:"first_code"`
	P99us       float64 `json:"p99_us"`
	MaxUs       float64 `json:"max_us"`
}

// rollServer is one NameServer process, restarted in place: the same port,
// files and settings every time.
type rollServer struct {
	idx    int
	exe    string
	dir    string
	addr   string
	args   []string
	cpus   []int
	cmd    *exec.Cmd
	exited chan error
	logf   *os.File
}

func newRollServer(exe string, idx int, warm bool, cpus []int) (*rollServer, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("nsbench-rolling-%d-", idx+1))
	if err != nil {
		return nil, fmt.Errorf("rolling: server %d: %w", idx+1, err)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rolling: server %d: %w", idx+1, err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "namesrv.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rolling: server %d: %w", idx+1, err)
	}
	s := &rollServer{idx: idx, exe: exe, dir: dir, cpus: cpus, logf: logf,
		addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	s.args = []string{"--bindAddress", "127.0.0.1", "--listenPort", strconv.Itoa(port),
		"--kvConfigPath", filepath.Join(dir, "kvConfig.json"),
		"--set", "configStorePath=" + filepath.Join(dir, "namesrv.properties"),
		"--set", "routeSnapshotEnable=" + strconv.FormatBool(warm),
		"--set", "routeSnapshotPath=" + filepath.Join(dir, "routes.snapshot"),
		"--logLevel", "info"}
	return s, nil
}

// start spawns the process and returns when it did.
func (s *rollServer) start() (time.Time, error) {
	cmd := exec.Command(s.exe, s.args...)
	cmd.Stdout, cmd.Stderr = s.logf, s.logf
	cmd.Dir = s.dir
	if err := StartPinned(cmd, s.cpus); err != nil {
		return time.Time{}, fmt.Errorf("rolling: server %d: start %s: %w", s.idx+1, s.exe, err)
	}
	spawned := time.Now()
	s.cmd = cmd
	s.exited = make(chan error, 1)
	go func() { s.exited <- cmd.Wait() }()
	return spawned, nil
}

// term sends SIGTERM and waits for the process to end (a kill after 30 s:
// reported, since the shutdown's snapshot is then lost).
func (s *rollServer) term() error {
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd = nil }()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("rolling: server %d did not exit within 30 s of SIGTERM: killed", s.idx+1)
	}
}

// firstAnswer polls with route queries of topic until the server answers
// one, whatever the code.
func (s *rollServer) firstAnswer(ctx context.Context, topic string, version int32) (int32, time.Time, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, err := s.ask(ctx, topic, version)
		if err == nil {
			return code, time.Now(), nil
		}
		select {
		case werr := <-s.exited:
			s.exited <- werr
			return 0, time.Time{}, fmt.Errorf("rolling: server %d exited (%v) before answering: see %s", s.idx+1, werr, s.logf.Name())
		case <-ctx.Done():
			return 0, time.Time{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, time.Time{}, fmt.Errorf("rolling: server %d did not answer within 60 s: %w", s.idx+1, err)
		}
	}
}

func (s *rollServer) ask(ctx context.Context, topic string, version int32) (int32, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, s.addr)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	code, _, _, err := cl.RouteBody(ctx, topic, version)
	return code, err
}

func (s *rollServer) close() error {
	err := s.term()
	s.logf.Close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// rollBroker is one simulated broker master with a connection to every
// server, registering on its own interval.
type rollBroker struct {
	id   client.Broker
	rb   *body.RegisterBroker
	cl   []*client.Client // per server; nil until dialled, or after a failure
	fail []atomic.Uint64  // failed registrations per server
}

// register registers with every server at once, as a broker's
// registerBrokerAll does, dialling again where the connection failed.
func (b *rollBroker) register(ctx context.Context, addrs []string) {
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if b.cl[i] != nil && isDone(b.cl[i]) {
				// The server closed it (a restart): dial again, as a
				// broker's remoting client does for an inactive channel.
				b.cl[i].Close()
				b.cl[i] = nil
			}
			if b.cl[i] == nil {
				cl, err := client.Dial(rctx, addr)
				if err != nil {
					b.fail[i].Add(1)
					return
				}
				b.cl[i] = cl
			}
			if _, _, err := b.cl[i].RegisterBroker(rctx, b.id, b.rb); err != nil {
				b.fail[i].Add(1)
				b.cl[i].Close()
				b.cl[i] = nil
			}
		}()
	}
	wg.Wait()
}

func (b *rollBroker) close() {
	for i, cl := range b.cl {
		if cl != nil {
			cl.Close()
			b.cl[i] = nil
		}
	}
}

// newRollBrokers builds the brokers of spec: broker i carries the topics
// spec.brokersOf assigns it, with one data version for the whole run, as a
// broker whose topics do not change.
func newRollBrokers(spec ClusterSpec, servers int) ([]*rollBroker, map[string]int) {
	now := time.Now().UnixMilli()
	bs := make([]*rollBroker, spec.Brokers)
	for i := range bs {
		bs[i] = &rollBroker{
			id: client.Broker{Cluster: "BenchCluster", Name: BrokerName(i), Addr: fmt.Sprintf("127.0.0.1:%d", 20000+i),
				HAAddr: fmt.Sprintf("127.0.0.1:%d", 30000+i), HeartbeatTimeoutMillis: spec.TimeoutMillis},
			rb:   &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Timestamp: now, Counter: 1}},
			cl:   make([]*client.Client, servers),
			fail: make([]atomic.Uint64, servers),
		}
	}
	carriers := make(map[string]int, spec.Topics)
	for t := range spec.Topics {
		name := TopicName(t)
		owners := spec.brokersOf(t)
		carriers[name] = len(owners)
		for _, bi := range owners {
			bs[bi].rb.Topics = append(bs[bi].rb.Topics, body.TopicConfig{
				TopicName: name, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG",
			})
		}
	}
	return bs, carriers
}

// runRolling runs one rolling restart per entry of o.Rolling.Warm.
func runRolling(ctx context.Context, o Options, r *Report) error {
	spec := o.Rolling.withDefaults()
	if spec.Exe == "" {
		return errors.New("rolling: no namesrv binary (-namesrv)")
	}
	if err := o.Cluster.check(); err != nil {
		return err
	}
	r.Server = fmt.Sprintf("%d x %s", spec.Servers, spec.Exe)
	r.Brokers, r.Topics, r.PerTopic = o.Cluster.Brokers, o.Cluster.Topics, o.Cluster.PerTopic
	r.Add("register_every", spec.RegisterEvery.Seconds(), "s")
	r.Add("clients_per_server", float64(spec.ClientsPerServer), "")
	r.Add("query_every", float64(spec.QueryEvery.Microseconds())/1e3, "ms per client")
	type total struct{ notExist, incomplete, timeout, refused, closed, other, queries uint64 }
	totals := map[string]*total{}
	for round, warm := range spec.Warm {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rows, regFails, err := rollingRound(ctx, o, spec, round+1, warm)
		r.Restarts = append(r.Restarts, rows...)
		if err != nil {
			return err
		}
		label := warmLabel(warm)
		t := totals[label]
		if t == nil {
			t = &total{}
			totals[label] = t
		}
		var rt total
		for _, x := range rows {
			rt.notExist += x.NotExist
			rt.incomplete += x.Incomplete
			rt.timeout += x.Timeout
			rt.refused += x.Refused
			rt.closed += x.Closed
			rt.other += x.OtherCode
			rt.queries += x.Queries
		}
		t.notExist += rt.notExist
		t.incomplete += rt.incomplete
		t.timeout += rt.timeout
		t.refused += rt.refused
		t.closed += rt.closed
		t.other += rt.other
		t.queries += rt.queries
		pre := fmt.Sprintf("round%d_%s_", round+1, label)
		r.Add(pre+"topic_not_exist", float64(rt.notExist), "")
		r.Add(pre+"errors_other_than_not_exist", float64(rt.timeout+rt.refused+rt.closed+rt.other), "")
		r.Add(pre+"broker_registrations_failed", float64(regFails), "")
	}
	for _, label := range []string{"cold", "warm"} {
		t := totals[label]
		if t == nil {
			continue
		}
		r.Add(label+"_queries", float64(t.queries), "")
		r.Add(label+"_topic_not_exist", float64(t.notExist), "")
		r.Add(label+"_incomplete_routes", float64(t.incomplete), "")
		r.Add(label+"_other_codes", float64(t.other), "")
		r.Add(label+"_timeouts", float64(t.timeout), "")
		r.Add(label+"_refused", float64(t.refused), "")
		r.Add(label+"_closed", float64(t.closed), "")
	}
	return nil
}

// rollingRound starts the servers with routeSnapshotEnable=warm, registers
// the brokers, starts the clients, restarts the servers one after the
// other and reports a row per server.
func rollingRound(ctx context.Context, o Options, spec RollingSpec, round int, warm bool) (rows []RestartRow, regFails uint64, err error) {
	servers := make([]*rollServer, spec.Servers)
	defer func() {
		for _, s := range servers {
			if s == nil {
				continue
			}
			if cerr := s.close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	addrs := make([]string, spec.Servers)
	topic0 := TopicName(0)
	for i := range servers {
		s, err := newRollServer(spec.Exe, i, warm, o.Pin.Server)
		if err != nil {
			return nil, 0, err
		}
		servers[i] = s
		addrs[i] = s.addr
		if _, err := s.start(); err != nil {
			return nil, 0, err
		}
	}
	for _, s := range servers {
		if _, _, err := s.firstAnswer(ctx, topic0, o.Version); err != nil {
			return nil, 0, err
		}
	}

	// The brokers register with every server at start, then every
	// RegisterEvery, each at a phase of its own drawn anew every round:
	// brokers start at unrelated times, so where a restart falls in their
	// cycles is chance, and the rounds sample it.
	brokers, carriers := newRollBrokers(o.Cluster, spec.Servers)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, b := range brokers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			b.register(ctx, addrs)
		}()
	}
	wg.Wait()
	for _, b := range brokers {
		for s := range addrs {
			if b.fail[s].Load() > 0 {
				return nil, 0, fmt.Errorf("rolling: broker %s could not register with server %d at start", b.id.Name, s+1)
			}
		}
	}
	bctx, stopBrokers := context.WithCancel(ctx)
	var bwg sync.WaitGroup
	defer func() {
		stopBrokers()
		bwg.Wait()
		for _, b := range brokers {
			b.close()
		}
	}()
	phases := make([]time.Duration, len(brokers))
	for i := range phases {
		phases[i] = spec.phase(spec.RegisterEvery)
	}
	t0 := time.Now()
	for i, b := range brokers {
		bwg.Add(1)
		go func() {
			defer bwg.Done()
			next := t0.Add(phases[i])
			for {
				t := time.NewTimer(time.Until(next))
				select {
				case <-bctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				b.register(bctx, addrs)
				next = next.Add(spec.RegisterEvery)
			}
		}()
	}

	counts := make([]*serverCounts, spec.Servers)
	for i := range counts {
		counts[i] = &serverCounts{hist: NewHistogram()}
	}
	cctx, stopClients := context.WithCancel(ctx)
	var cwg sync.WaitGroup
	defer func() { stopClients(); cwg.Wait() }()
	topics := make([]string, o.Cluster.Topics)
	for i := range topics {
		topics[i] = TopicName(i)
	}
	for s := range spec.Servers {
		for c := range spec.ClientsPerServer {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				rollClient(cctx, spec, o.Version, addrs, s, (s*spec.ClientsPerServer+c)*7919, topics, carriers, counts)
			}()
		}
	}

	// The load runs on every server before the warm-up is counted.
	for _, c := range counts {
		if err := waitAnswered(ctx, c); err != nil {
			return nil, 0, err
		}
	}
	if !sleepCtx(ctx, spec.Warmup) {
		return nil, 0, ctx.Err()
	}
	rows = make([]RestartRow, spec.Servers)
	answered := make([]time.Time, spec.Servers)
	for i, s := range servers {
		termAt := time.Now()
		counts[i].stopping.Store(true)
		err := s.term()
		counts[i].stopping.Store(false)
		if err != nil {
			return nil, 0, err
		}
		spawned, err := s.start()
		if err != nil {
			return nil, 0, err
		}
		code, at, err := s.firstAnswer(ctx, topic0, o.Version)
		if err != nil {
			return nil, 0, err
		}
		answered[i] = at
		rows[i] = RestartRow{Round: round, Start: warmLabel(warm), Server: i + 1, FirstCode: code,
			Down: at.Sub(termAt).Seconds(), FirstAnswer: at.Sub(spawned).Seconds()}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "nsbench: rolling round %d (%s): server %d answered %.3f s after SIGTERM, %.3f s after spawn, first code %d\n",
				round, warmLabel(warm), i+1, rows[i].Down, rows[i].FirstAnswer, code)
		}
	}
	if !sleepCtx(ctx, spec.Tail) {
		return nil, 0, ctx.Err()
	}
	stopClients()
	cwg.Wait()
	stopBrokers()
	bwg.Wait()
	for i, c := range counts {
		row := &rows[i]
		row.OK = c.n[outOK].Load()
		row.Incomplete = c.n[outIncomplete].Load()
		row.NotExist = c.n[outNotExist].Load()
		row.OtherCode = c.n[outOtherCode].Load()
		row.Timeout = c.n[outTimeout].Load()
		row.Refused = c.n[outRefused].Load()
		row.Closed = c.n[outClosed].Load()
		row.StopNotExist, row.StopIncomplete = c.stopNotExist.Load(), c.stopIncomplete.Load()
		for k := range c.n {
			row.Queries += c.n[k].Load()
		}
		if last := c.lastNotExist.Load(); last > answered[i].UnixNano() {
			row.NotExistFor = time.Duration(last - answered[i].UnixNano()).Seconds()
		}
		row.P99us = float64(c.hist.Quantile(0.99)) / 1e3
		row.MaxUs = float64(c.hist.Max()) / 1e3
	}
	for _, b := range brokers {
		for s := range addrs {
			regFails += b.fail[s].Load()
		}
	}
	return rows, regFails, nil
}

// waitAnswered waits until a client had an answer from the server c counts.
func waitAnswered(ctx context.Context, c *serverCounts) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		n := c.hist.Count()
		c.mu.Unlock()
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("rolling: no client had an answer within 30 s of starting")
		}
		if !sleepCtx(ctx, 10*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// rollClient asks for one route every QueryEvery on server cur (one request
// at a time) and counts each attempt against the server it went to.
func rollClient(ctx context.Context, spec RollingSpec, version int32, addrs []string, cur, seq int, topics []string,
	carriers map[string]int, counts []*serverCounts) {
	var cl *client.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	moveOn := func() {
		if cl != nil {
			cl.Close()
			cl = nil
		}
		if spec.Failover {
			cur = (cur + 1) % len(addrs)
		}
	}
	tick := time.NewTicker(spec.QueryEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		topic := topics[seq%len(topics)]
		seq++
		rctx, cancel := context.WithTimeout(ctx, spec.ClientTimeout)
		t0 := time.Now()
		if cl != nil && isDone(cl) {
			// Closed by the server while idle: the Java client notices
			// the inactive channel and dials before its next request
			// (the next server with Failover), which is no error.
			moveOn()
		}
		if cl == nil {
			c, err := client.Dial(rctx, addrs[cur])
			if err != nil {
				cancel()
				if ctx.Err() != nil {
					return
				}
				counts[cur].record(classifyErr(err), 0, time.Now())
				moveOn()
				continue
			}
			cl = c
		}
		code, _, payload, err := cl.RouteBody(rctx, topic, version)
		cancel()
		now := time.Now()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			kind := classifyErr(err)
			counts[cur].record(kind, 0, now)
			if kind != outTimeout {
				moveOn()
			}
			continue
		}
		counts[cur].record(routeOutcome(code, payload, carriers[topic]), now.Sub(t0), now)
	}
}

// isDone reports whether cl's connection has ended.
func isDone(cl *client.Client) bool {
	select {
	case <-cl.Done():
		return true
	default:
		return false
	}
}

// routeOutcome sorts an answer: a route listing fewer brokers than carry
// the topic is incomplete (a producer would send to some of its queues
// only).
func routeOutcome(code int32, payload []byte, carriers int) int {
	switch code {
	case codec.Success:
	case codec.TopicNotExist:
		return outNotExist
	default:
		return outOtherCode
	}
	tr, err := body.DecodeTopicRoute(payload)
	if err != nil {
		return outOtherCode
	}
	seen := map[string]bool{}
	for _, q := range tr.QueueDatas {
		seen[q.BrokerName] = true
	}
	if len(seen) < carriers {
		return outIncomplete
	}
	return outOK
}

// ParseWarm reads -warm: a comma list of on/off (or warm/cold), one round
// each.
func ParseWarm(s string) ([]bool, error) {
	var out []bool
	for _, f := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "on", "warm", "true":
			out = append(out, true)
		case "off", "cold", "false":
			out = append(out, false)
		default:
			return nil, fmt.Errorf("-warm: %q is not a comma list of on and off", s)
		}
	}
	return out, nil
}
