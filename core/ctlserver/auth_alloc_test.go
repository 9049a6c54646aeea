// The heartbeat path's allocation guard with the allowlists on: a known
// broker's oneway 904 from the broker network, checked and recorded,
// allocates nothing.

package ctlserver

import (
	"testing"

	"github.com/rocketns/rocketns/core/auth"
)

func TestGuardedHeartbeatAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	p, err := auth.New(auth.Options{AllowFrom: mustCIDRs(t, adminHost+"/32"), BrokerAllowFrom: mustCIDRs(t, brokerHost+"/32")})
	if err != nil {
		t.Fatal(err)
	}
	s := single(t, func(c *Config) { c.Auth = p })
	pipe := s.remote.Pipe(brokerHost + ":30911")
	frame := recordedHeartbeat(t)
	step := func() {
		if err := pipe.Send(frame); err != nil {
			t.Fatal(err)
		}
		if !pipe.Serve() {
			t.Fatal("the pipe closed")
		}
	}
	step()
	if n := testing.AllocsPerRun(500, step); n != 0 {
		t.Fatalf("a known broker's heartbeat through the allowlist allocates %.1f times", n)
	}
	if pipe.Drain() != 0 {
		t.Fatal("a oneway heartbeat was answered")
	}
	if s.Stats().BrokersAlive != 1 || len(s.Refusals()) != 0 {
		t.Fatalf("alive %d, refusals %v", s.Stats().BrokersAlive, s.Refusals())
	}
}
