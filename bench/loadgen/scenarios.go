// The scenarios: route (and limit), storm, expiry, register-big, rss.

package loadgen

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
)

// runRoute runs every conns x depth combination: the limit first when asked
// (or only the limit), then the server, and reports the ratio.
func runRoute(ctx context.Context, o Options, r *Report, limitOnly bool) error {
	c, err := setup(ctx, o, r)
	if err != nil {
		return err
	}
	defer c.Close()
	addRSS(o, r, "after_setup")
	var lim *limitTarget
	if o.Limit || limitOnly {
		var size int
		lim, size, err = startLimit(ctx, o, c.Topics[0])
		if err != nil {
			return err
		}
		defer lim.close()
		r.Add("limit_body_bytes", float64(size), "B")
	}
	for _, conns := range o.Conns {
		for _, depth := range o.Depth {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var limitQPS float64
			if lim != nil {
				res, err := runLoad(ctx, o, "limit", lim.addr, c.Topics, conns, depth, nil)
				if err != nil {
					return err
				}
				row := LoadRow("limit", res)
				limitQPS = row.QPS
				r.Rows = append(r.Rows, row)
				noteErr(r, "limit", res)
			}
			if limitOnly || ctx.Err() != nil {
				continue
			}
			res, err := runLoad(ctx, o, "route", o.Addr, c.Topics, conns, depth, nil)
			if err != nil {
				return err
			}
			row := LoadRow("route", res)
			if limitQPS > 0 {
				row.VsLimit = row.QPS / limitQPS
			}
			r.Rows = append(r.Rows, row)
			noteErr(r, "route", res)
		}
	}
	return nil
}

func noteErr(r *Report, name string, res *LoadResult) {
	if res.FirstError != nil {
		r.Errors = append(r.Errors, fmt.Sprintf("%s c=%d d=%d: %d errors, first: %v", name, res.Conns, res.Depth, res.Errors, res.FirstError))
	}
}

// waitOrDone waits d, or less if the load ends first; it reports whether
// the load is still running.
func waitOrDone(l *Load, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.Done():
		return false
	}
}

// runStorm runs the route load for the duration: its first half idle, its
// second half with every broker re-registering as fast as it can.
func runStorm(ctx context.Context, o Options, r *Report) error {
	c, err := setup(ctx, o, r)
	if err != nil {
		return err
	}
	defer c.Close()
	conns, depth := o.Conns[0], o.Depth[0]
	var limitQPS float64
	if o.Limit {
		lim, _, err := startLimit(ctx, o, c.Topics[0])
		if err != nil {
			return err
		}
		res, err := runLoad(ctx, o, "limit", lim.addr, c.Topics, conns, depth, nil)
		lim.close()
		if err != nil {
			return err
		}
		row := LoadRow("limit", res)
		limitQPS = row.QPS
		r.Rows = append(r.Rows, row)
	}
	var regs uint64
	var stormErr error
	var stormTime time.Duration
	res, err := runLoad(ctx, o, "storm", o.Addr, c.Topics, conns, depth, func(l *Load) {
		if !waitOrDone(l, o.Duration/2) {
			return
		}
		l.SetPhase(1)
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		t0 := time.Now()
		go func() {
			defer close(done)
			regs, stormErr = c.Storm(sctx)
		}()
		<-l.Done()
		stormTime = time.Since(t0)
		cancel()
		<-done
	})
	if err != nil {
		return err
	}
	noteErr(r, "storm", res)
	if stormErr != nil {
		r.Errors = append(r.Errors, "storm: "+stormErr.Error())
	}
	idle := RowFrom("idle (1st half)", conns, depth, res.Phases[0].Elapsed, res.Phases[0].Requests, res.Phases[0].Hist)
	r.Rows = append(r.Rows, idle)
	if len(res.Phases) < 2 {
		return nil
	}
	storm := RowFrom("storm (2nd half)", conns, depth, res.Phases[1].Elapsed, res.Phases[1].Requests, res.Phases[1].Hist)
	if limitQPS > 0 {
		r.Rows[len(r.Rows)-1].VsLimit = idle.QPS / limitQPS
		storm.VsLimit = storm.QPS / limitQPS
	}
	idle.Errors, storm.Errors = res.Phases[0].Errors, res.Phases[1].Errors
	r.Rows[len(r.Rows)-1].Errors = idle.Errors
	r.Rows = append(r.Rows, storm)
	// The same profile idle and under the storm, in one run: the ratio is
	// what the storm costs a route query, whatever else the machine does.
	if idle.P99us > 0 {
		r.Add("storm_p99_over_idle_p99", storm.P99us/idle.P99us, "x")
	}
	if idle.P999us > 0 {
		r.Add("storm_p999_over_idle_p999", storm.P999us/idle.P999us, "x")
	}
	r.Add("storm_registrations", float64(regs), "")
	if stormTime > 0 {
		perBroker := float64(o.Cluster.Entries()) / float64(o.Cluster.Brokers)
		r.Add("storm_registrations_per_sec", float64(regs)/stormTime.Seconds(), "/s")
		r.Add("storm_topic_entries_rewritten_per_sec", float64(regs)*perBroker/stormTime.Seconds(), "/s")
	}
	return nil
}

// runExpiry takes each percentage of the brokers away under route load, a
// third of the way into the run, and polls routes until none lists them.
func runExpiry(ctx context.Context, o Options, r *Report) error {
	if o.Silent && o.Cluster.TimeoutMillis <= 0 {
		return fmt.Errorf("expiry: silent brokers need a heartbeat timeout short enough for the run (broker timeout is the server default, 120 s)")
	}
	for _, pct := range o.DropPercents {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := expiryOnce(ctx, o, r, pct); err != nil {
			return fmt.Errorf("expiry %d%%: %w", pct, err)
		}
	}
	return nil
}

func expiryOnce(ctx context.Context, o Options, r *Report, pct int) error {
	c, err := setup(ctx, o, r)
	if err != nil {
		return err
	}
	defer c.Close()
	poll, err := client.Dial(ctx, o.Addr)
	if err != nil {
		return err
	}
	defer poll.Close()
	n := (pct*o.Cluster.Brokers + 99) / 100
	sample := spread(c.AffectedTopics(n), 32)
	mode := "drop"
	if o.Silent {
		mode = "silent"
	}
	name := fmt.Sprintf("%s %d%%", mode, pct)
	conns, depth := o.Conns[0], o.Depth[0]
	var conv time.Duration
	var sinceBeat time.Duration
	converged := false
	var pollErr error
	res, err := runLoad(ctx, o, name, o.Addr, c.Topics, conns, depth, func(l *Load) {
		if !waitOrDone(l, o.Duration/3) {
			return
		}
		l.SetPhase(1)
		t0 := time.Now()
		names, lastBeat := c.Drop(n, o.Silent)
		deadline := t0.Add(o.Duration)
		converged, pollErr = waitConverged(ctx, poll, o.Version, sample, names, deadline)
		conv = time.Since(t0)
		if o.Silent {
			sinceBeat = time.Since(lastBeat)
		}
		l.SetPhase(2)
	})
	if err != nil {
		return err
	}
	noteErr(r, name, res)
	if pollErr != nil {
		r.Errors = append(r.Errors, name+": "+pollErr.Error())
	}
	labels := []string{"before", "converging", "after"}
	for i, ph := range res.Phases {
		row := RowFrom(name+": "+labels[i], conns, depth, ph.Elapsed, ph.Requests, ph.Hist)
		row.Errors, row.NotFound = ph.Errors, ph.NotFound
		r.Rows = append(r.Rows, row)
	}
	key := fmt.Sprintf("%s_%d_pct", mode, pct)
	r.Add(key+"_brokers", float64(n), "")
	if !converged {
		r.Add(key+"_not_converged_after", float64(conv.Microseconds())/1e3, "ms")
		return nil
	}
	r.Add(key+"_converged", float64(conv.Microseconds())/1e3, "ms")
	if o.Silent {
		r.Add(key+"_converged_after_last_heartbeat", float64(sinceBeat.Microseconds())/1e3, "ms")
		r.Add(key+"_expected_at_most", float64(o.Cluster.TimeoutMillis+o.ScanIntervalMillis), "ms (timeout + scan interval)")
	}
	return nil
}

// spread picks at most n items evenly from list.
func spread(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, list[i*len(list)/n])
	}
	return out
}

// waitConverged polls the topics in rounds, all of a round's queries in
// flight at once (so the reading costs one round trip, not one per topic),
// until every topic's route lists none of the gone brokers or the topic is
// gone. A topic once seen converged is not asked again.
func waitConverged(ctx context.Context, cl *client.Client, version int32, topics, gone []string, deadline time.Time) (bool, error) {
	goneSet := make(map[string]bool, len(gone))
	for _, g := range gone {
		goneSet[g] = true
	}
	pending := append([]string(nil), topics...)
	type answer struct {
		converged bool
		err       error
	}
	answers := make([]answer, len(pending))
	for len(pending) > 0 {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false, nil
		}
		cctx, cancel := context.WithDeadline(ctx, deadline)
		var wg sync.WaitGroup
		for i, t := range pending {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := routeConverged(cctx, cl, version, t, goneSet)
				answers[i] = answer{ok, err}
			}()
		}
		wg.Wait()
		cancel()
		left := pending[:0]
		for i, t := range pending {
			a := answers[i]
			if a.err != nil {
				if ctx.Err() != nil || time.Now().After(deadline) {
					return false, nil
				}
				return false, a.err
			}
			if !a.converged {
				left = append(left, t)
			}
		}
		pending = left
		if len(pending) > 0 {
			// A millisecond between rounds bounds the reading's error and
			// keeps the poller from competing with the load for the cores.
			time.Sleep(time.Millisecond)
		}
	}
	return true, nil
}

func routeConverged(ctx context.Context, cl *client.Client, version int32, topic string, gone map[string]bool) (bool, error) {
	code, remark, payload, err := cl.RouteBody(ctx, topic, version)
	if err != nil {
		return false, err
	}
	if code == codec.TopicNotExist {
		return true, nil
	}
	if code != codec.Success {
		return false, fmt.Errorf("route of %s: code %d %s", topic, code, remark)
	}
	tr, err := body.DecodeTopicRoute(payload)
	if err != nil {
		return false, fmt.Errorf("route of %s: %w", topic, err)
	}
	return !listsAny(tr, gone), nil
}

func listsAny(tr *body.TopicRoute, names map[string]bool) bool {
	for _, q := range tr.QueueDatas {
		if names[q.BrokerName] {
			return true
		}
	}
	for _, b := range tr.BrokerDatas {
		if names[b.BrokerName] {
			return true
		}
	}
	return false
}

// runRegisterBig registers one broker with o.BigTopics topics over a raw
// connection (the body encoded beforehand, so only the exchange is timed),
// then again with a new data version and the same topics.
func runRegisterBig(ctx context.Context, o Options, r *Report) error {
	n := o.BigTopics
	if n <= 0 {
		n = 100_000
	}
	r.Brokers, r.Topics, r.PerTopic = 1, n, 1
	settle(o)
	addRSS(o, r, "before")
	b := client.Broker{Cluster: "BenchCluster", Name: "bench-big-broker", Addr: "127.0.0.1:29999", HAAddr: "127.0.0.1:39999"}
	rb := &body.RegisterBroker{FilterServerList: []string{}, Topics: make([]body.TopicConfig, n)}
	for i := range rb.Topics {
		rb.Topics[i] = body.TopicConfig{TopicName: "BigTopic-" + strconv.Itoa(i), ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("register-big: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	for i, label := range []string{"first", "again_unchanged"} {
		rb.DataVersion = body.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: int64(i + 1)}
		t0 := time.Now()
		frame, err := registerFrame(b, rb, int32(i+1))
		if err != nil {
			return err
		}
		enc := time.Since(t0)
		if i == 0 {
			r.Add("frame_bytes", float64(len(frame)), "B")
			r.Add("client_encode", float64(enc.Microseconds())/1e3, "ms")
		}
		elapsed, err := exchange(conn, frame)
		if err != nil {
			if len(frame) > codec.DefaultMaxFrame && !o.Inproc {
				return fmt.Errorf("register-big: %w (the frame is %d bytes: the server's frameMaxLength must be raised above it)", err, len(frame))
			}
			return fmt.Errorf("register-big: %w", err)
		}
		r.Add("register_"+label, float64(elapsed.Microseconds())/1e3, "ms")
	}
	settle(o)
	addRSS(o, r, "after")
	cl, err := client.Dial(ctx, o.Addr)
	if err != nil {
		return fmt.Errorf("register-big: %w", err)
	}
	defer cl.Close()
	if err := cl.UnregisterBroker(ctx, b); err != nil {
		return fmt.Errorf("register-big: %w", err)
	}
	return nil
}

// registerFrame encodes a REGISTER_BROKER request the way client.Client
// does (same header fields), as one frame.
func registerFrame(b client.Broker, rb *body.RegisterBroker, opaque int32) ([]byte, error) {
	payload, err := body.EncodeRegisterBroker(rb, false, client.DefaultBrokerVersion)
	if err != nil {
		return nil, fmt.Errorf("register-big: encode: %w", err)
	}
	crc := int64(crc32.ChecksumIEEE(payload) & 0x7FFFFFFF)
	req := &codec.Command{Code: codec.RegisterBroker, Version: client.DefaultBrokerVersion, Opaque: opaque, Body: payload}
	req.SetExt("brokerId", "0")
	req.SetExt("bodyCrc32", strconv.FormatInt(crc, 10))
	req.SetExt("clusterName", b.Cluster)
	req.SetExt("brokerAddr", b.Addr)
	req.SetExt("haServerAddr", b.HAAddr)
	req.SetExt("compressed", "false")
	req.SetExt("brokerName", b.Name)
	return codec.AppendFrame(nil, req), nil
}

// exchange writes frame and reads one response, timing both.
func exchange(conn net.Conn, frame []byte) (time.Duration, error) {
	t0 := time.Now()
	if _, err := conn.Write(frame); err != nil {
		return 0, fmt.Errorf("write %d bytes: %w", len(frame), err)
	}
	var prefix [4]byte
	if _, err := io.ReadFull(conn, prefix[:]); err != nil {
		return 0, fmt.Errorf("read response: %w", err)
	}
	n, err := codec.FrameLength(prefix[:], codec.DefaultMaxFrame)
	if err != nil {
		return 0, fmt.Errorf("read response: %w", err)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(conn, resp); err != nil {
		return 0, fmt.Errorf("read response: %w", err)
	}
	elapsed := time.Since(t0)
	var cmd codec.Command
	if err := codec.Decode(resp, &cmd); err != nil {
		return 0, fmt.Errorf("decode response: %w", err)
	}
	if cmd.Code != codec.Success {
		return 0, fmt.Errorf("response code %d: %s", cmd.Code, cmd.Remark)
	}
	return elapsed, nil
}

// settle returns this process's garbage to the OS before an in-process RSS
// reading, so the figure is the server's live data, not the generator's
// discarded buffers. An external server is read as it is.
func settle(o Options) {
	if o.Inproc {
		runtime.GC()
		debug.FreeOSMemory()
	}
}

// runRSS registers the cluster and reports the server's RSS before and
// after, per topic-broker entry, and again once every route was asked for
// (which fills the encoded-route cache).
func runRSS(ctx context.Context, o Options, r *Report) error {
	settle(o)
	before, _, ok, err := serverRSS(o)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("rss: needs -inproc or -server-pid")
	}
	r.Add("before_rss", float64(before)/(1<<20), "MiB")
	c, err := setup(ctx, o, r)
	if err != nil {
		return err
	}
	defer c.Close()
	settle(o)
	after, hwm, _, err := serverRSS(o)
	if err != nil {
		return err
	}
	entries := float64(o.Cluster.Entries())
	r.Add("registered_rss", float64(after)/(1<<20), "MiB")
	r.Add("registered_rss_peak", float64(hwm)/(1<<20), "MiB")
	r.Add("registered_bytes_per_entry", float64(after-before)/entries, "B")
	cl, err := client.Dial(ctx, o.Addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	for _, t := range c.Topics {
		code, _, _, err := cl.RouteBody(ctx, t, o.Version)
		if err != nil {
			return err
		}
		if code != codec.Success {
			return fmt.Errorf("rss: route of %s: code %d", t, code)
		}
	}
	settle(o)
	cached, hwm, _, err := serverRSS(o)
	if err != nil {
		return err
	}
	r.Add("routes_cached_rss", float64(cached)/(1<<20), "MiB")
	r.Add("routes_cached_rss_peak", float64(hwm)/(1<<20), "MiB")
	r.Add("routes_cached_bytes_per_entry", float64(cached-before)/entries, "B")
	return nil
}
