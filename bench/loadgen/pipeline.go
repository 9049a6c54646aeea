// The pipeline scenario: connections from one address pipeline
// GET_ALL_TOPIC_LIST and never read the answers, while the route load runs;
// route latency and the server's RSS before, during and after.

package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
)

// PipelineSpec is the attack of the pipeline scenario.
type PipelineSpec struct {
	// Conns connections, each writing Requests GET_ALL_TOPIC_LIST frames
	// at once and reading nothing.
	Conns, Requests int
	// From is the attackers' source address (a loopback address other than
	// the route load's 127.0.0.1, so a per-address cap meets them only).
	From string
	// Settle is how long the server's RSS is followed after the run, with
	// no load at all.
	Settle time.Duration
}

// rssTrack samples a process's RSS every 100 ms into the current phase's
// maximum.
type rssTrack struct {
	o     Options
	phase atomic.Int32
	max   [maxPhases + 1]atomic.Int64
	last  atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

func trackRSS(o Options) *rssTrack {
	t := &rssTrack{o: o, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			if rss, _, ok, err := serverRSS(o); ok && err == nil {
				t.last.Store(rss)
				m := &t.max[t.phase.Load()]
				if rss > m.Load() {
					m.Store(rss)
				}
			}
			select {
			case <-t.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return t
}

func (t *rssTrack) setPhase(p int) { t.phase.Store(int32(p)) }

func (t *rssTrack) end() { close(t.stop); <-t.done }

// runPipeline runs the route load for the duration: a third idle, a third
// under attack, a third after the attackers closed their connections;
// then it follows the server's RSS for Settle without load.
func runPipeline(ctx context.Context, o Options, r *Report) error {
	if o.ServerPID <= 0 && !o.Inproc {
		return fmt.Errorf("pipeline: needs -server-pid (or -inproc) to follow the server's RSS")
	}
	a := o.Pipeline
	if a.Conns <= 0 || a.Requests <= 0 {
		return fmt.Errorf("pipeline: needs attacking connections and requests, have %d and %d", a.Conns, a.Requests)
	}
	c, err := setup(ctx, o, r)
	if err != nil {
		return err
	}
	defer c.Close()
	settle(o)
	rss := trackRSS(o)
	defer rss.end()
	frame := codec.AppendFrame(nil, &codec.Command{Code: codec.GetAllTopicListFromNameServer, Version: o.Version, Opaque: 1})
	batch := bytes.Repeat(frame, a.Requests)
	conns, depth := o.Conns[0], o.Depth[0]
	var attackErr error
	var opened, written atomic.Int64
	res, err := runLoad(ctx, o, "pipeline", o.Addr, c.Topics, conns, depth, func(l *Load) {
		if !waitOrDone(l, o.Duration/3) {
			return
		}
		l.SetPhase(1)
		rss.setPhase(1)
		var list []net.Conn
		var mu sync.Mutex
		var wg sync.WaitGroup
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a.From)}, Timeout: 5 * time.Second}
		for i := 0; i < a.Conns; i++ {
			nc, err := d.DialContext(ctx, "tcp", o.Addr)
			if err != nil {
				attackErr = fmt.Errorf("attacker %d: %w", i, err)
				break
			}
			opened.Add(1)
			nc.(*net.TCPConn).SetReadBuffer(16 << 10)
			mu.Lock()
			list = append(list, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc.SetWriteDeadline(time.Now().Add(o.Duration))
				if _, err := nc.Write(batch); err == nil {
					written.Add(1)
				}
			}()
		}
		waitOrDone(l, o.Duration/3)
		mu.Lock()
		for _, nc := range list {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
		l.SetPhase(2)
		rss.setPhase(2)
	})
	if err != nil {
		return err
	}
	noteErr(r, "pipeline", res)
	if attackErr != nil {
		r.Errors = append(r.Errors, "pipeline: "+attackErr.Error())
	}
	labels := []string{"idle", "attack", "after"}
	for i, ph := range res.Phases {
		row := RowFrom(labels[i], conns, depth, ph.Elapsed, ph.Requests, ph.Hist)
		row.Errors = ph.Errors
		r.Rows = append(r.Rows, row)
	}
	if len(res.Phases) >= 2 && r.Rows[len(r.Rows)-len(res.Phases)].P99us > 0 {
		idle := r.Rows[len(r.Rows)-len(res.Phases)]
		attack := r.Rows[len(r.Rows)-len(res.Phases)+1]
		r.Add("attack_p99_over_idle_p99", attack.P99us/idle.P99us, "x")
	}
	r.Add("attack_connections_opened", float64(opened.Load()), "")
	r.Add("attack_connections_wrote_all", float64(written.Load()), "")
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	r.Add("rss_idle_max", mib(rss.max[0].Load()), "MiB")
	r.Add("rss_attack_max", mib(rss.max[1].Load()), "MiB")
	r.Add("rss_after_max", mib(rss.max[2].Load()), "MiB")
	// With no load at all: how soon the server gives back what the attack
	// made it take.
	rss.setPhase(3)
	t0 := time.Now()
	for _, at := range []time.Duration{10 * time.Second, 30 * time.Second, 60 * time.Second, 120 * time.Second} {
		if at > a.Settle {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(t0.Add(at))):
		}
		r.Add(fmt.Sprintf("rss_%ds_after_load", int(at.Seconds())), mib(rss.last.Load()), "MiB")
	}
	return nil
}
