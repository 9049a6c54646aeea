// Tests of the route-query load's phase accounting.

package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func startLimitServer(t *testing.T) *LimitServer {
	t.Helper()
	lim, err := StartLimitServer("127.0.0.1:0", []byte(`{"brokerDatas":[],"queueDatas":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close(context.Background()) })
	return lim
}

// expiryOnce calls SetPhase(2) when its convergence poll ends, which for a
// broker loss that has not converged is up to Duration/3 after the load
// itself stopped. A phase's Elapsed must not count time after the run
// ended, or the "converging" row's QPS is understated by that much.
func TestPhaseElapsedStopsAtRunEnd(t *testing.T) {
	lim := startLimitServer(t)
	l, err := StartLoad(context.Background(), LoadConfig{
		Addr: lim.Addr(), Conns: 1, Depth: 1, Duration: time.Hour, Topics: []string{"TopicA"},
	})
	if err != nil {
		t.Fatal(err)
	}
	remotingtest.WaitFor(t, "answers in phase 0", func() bool { return l.Completed() > 0 })
	l.SetPhase(1) // brokers dropped
	// One connection, one request at a time: the second answer from now
	// on was sent after the phase began.
	n := l.Completed()
	remotingtest.WaitFor(t, "answers in phase 1", func() bool { return l.Completed() >= n+2 })
	l.Stop()
	<-l.Done() // the load ends while the poll still waits
	// The poll gives up a while after the end: time that must not count.
	time.Sleep(100 * time.Millisecond)
	l.SetPhase(2)
	res := l.Wait()

	if len(res.Phases) != 3 {
		t.Fatalf("%d phases, want 3", len(res.Phases))
	}
	var sum time.Duration
	for _, p := range res.Phases {
		sum += p.Elapsed
	}
	if sum != res.Elapsed {
		t.Errorf("phases last %v, %v and %v, together %v; the run lasted %v",
			res.Phases[0].Elapsed, res.Phases[1].Elapsed, res.Phases[2].Elapsed, sum, res.Elapsed)
	}
	if p := res.Phases[2]; p.Elapsed != 0 || p.Requests != 0 {
		t.Errorf("the phase begun after the run ended lasted %v with %d requests", p.Elapsed, p.Requests)
	}
	if res.Phases[1].Requests == 0 {
		t.Fatal("no request answered in phase 1")
	}
	p1 := RowFrom("converging", 1, 1, res.Phases[1].Elapsed, res.Phases[1].Requests, res.Phases[1].Hist)
	trueQPS := float64(res.Phases[1].Requests) / (res.Elapsed - res.Phases[0].Elapsed).Seconds()
	if p1.QPS < 0.999*trueQPS {
		t.Errorf("converging row QPS %.0f, true rate over the phase %.0f", p1.QPS, trueQPS)
	}
}

// A run stopped early lasted until it stopped, not until Wait was called.
func TestStoppedRunEndsAtStop(t *testing.T) {
	lim := startLimitServer(t)
	t0 := time.Now()
	l, err := StartLoad(context.Background(), LoadConfig{
		Addr: lim.Addr(), Conns: 1, Depth: 1, Duration: time.Hour, Topics: []string{"TopicA"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for l.Completed() == 0 {
		select {
		case <-l.Done():
			t.Fatal("the run ended before answering anything")
		case <-time.After(time.Millisecond):
		}
	}
	l.Stop()
	<-l.Done()
	ranFor := time.Since(t0)
	time.Sleep(100 * time.Millisecond) // Wait comes later
	res := l.Wait()
	if res.Elapsed > ranFor {
		t.Errorf("run elapsed %v, but it had ended %v after it was started", res.Elapsed, ranFor)
	}
	if res.Phases[0].Elapsed != res.Elapsed {
		t.Errorf("the only phase lasted %v of the run's %v", res.Phases[0].Elapsed, res.Elapsed)
	}
}
