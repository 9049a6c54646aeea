//go:build e2e

// A short rolling restart of three real namesrv processes, built for it,
// once cold and once warm, with brokers that register only at the start:
// every restarted cold server must answer its first route query with
// TOPIC_NOT_EXIST and every warm one with the route.

package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

func TestRollingSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds namesrv and restarts three of it twice")
	}
	exe := namesrvBinary(t)
	o := smokeOptions()
	o.Inproc = false
	o.Rolling = RollingSpec{
		Exe: exe, Servers: 3, Warm: []bool{false, true},
		// No broker registers again during the run: what a restarted
		// server knows is what it restored.
		RegisterEvery: time.Hour, Warmup: 200 * time.Millisecond, Tail: 300 * time.Millisecond,
		ClientsPerServer: 1, QueryEvery: 5 * time.Millisecond,
		phase: func(every time.Duration) time.Duration { return every },
	}
	r, err := Run(context.Background(), ScenarioRolling, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 || r.Interrupted {
		t.Fatalf("errors %v interrupted %v", r.Errors, r.Interrupted)
	}
	if len(r.Restarts) != 2*3 {
		t.Fatalf("%d restart rows, want 6: %+v", len(r.Restarts), r.Restarts)
	}
	for i, row := range r.Restarts {
		wantStart, wantCode := "cold", codec.TopicNotExist
		if i >= 3 {
			wantStart, wantCode = "warm", codec.Success
		}
		if row.Round != i/3+1 || row.Server != i%3+1 || row.Start != wantStart {
			t.Errorf("row %d is round %d server %d %s, want round %d server %d %s", i, row.Round, row.Server, row.Start, i/3+1, i%3+1, wantStart)
		}
		if row.FirstCode != wantCode {
			t.Errorf("round %d (%s) server %d: first answer code %d, want %d", row.Round, row.Start, row.Server, row.FirstCode, wantCode)
		}
		if row.Queries == 0 || row.OK == 0 || row.Down <= 0 || row.FirstAnswer <= 0 || row.FirstAnswer > row.Down {
			t.Errorf("row %+v: want queries and answers, and 0 < first answer <= down", row)
		}
	}
	for _, m := range []string{"cold_topic_not_exist", "warm_topic_not_exist", "warm_refused", "round1_cold_broker_registrations_failed"} {
		if _, ok := r.Metric(m); !ok {
			t.Errorf("no metric %s in %+v", m, r.Metrics)
		}
	}
}
