// The heartbeat path's allocation guard: a known broker's oneway 904,
// frame to liveness update, allocates nothing.

package ctlserver

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller/controllertest"
)

// recordedHeartbeat is a broker's recorded oneway 904, length prefix
// included.
func recordedHeartbeat(tb testing.TB) []byte {
	tb.Helper()
	steps, err := controllertest.Script()
	if err != nil {
		tb.Fatal(err)
	}
	for _, st := range steps {
		if h, _ := st.Req.ParseHeader(); h.Code == codec.BrokerHeartbeat && h.Oneway() {
			raw, err := st.Req.Raw()
			if err != nil {
				tb.Fatal(err)
			}
			return raw
		}
	}
	tb.Fatal("no recorded heartbeat")
	return nil
}

func TestHeartbeatAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := single(t, nil)
	p := s.remote.Pipe("127.0.0.1:30911")
	frame := recordedHeartbeat(t)
	step := func() {
		if err := p.Send(frame); err != nil {
			t.Fatal(err)
		}
		if !p.Serve() {
			t.Fatal("the pipe closed")
		}
	}
	step()
	if n := testing.AllocsPerRun(500, step); n != 0 {
		t.Fatalf("a known broker's heartbeat allocates %.1f times", n)
	}
	if p.Drain() != 0 {
		t.Fatal("a oneway heartbeat was answered")
	}
	if s.Stats().BrokersAlive != 1 {
		t.Fatal("the heartbeats did not reach the liveness table")
	}
}
