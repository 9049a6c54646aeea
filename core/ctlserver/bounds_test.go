// bounds_test.go checks that the controller's broker-facing port keeps the
// NameServer's connection bounds: the per-address cap and the buffered-bytes
// budget (README "Limits").

package ctlserver

import (
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestPerAddressCapOnTheBrokerPort(t *testing.T) {
	s := single(t, func(c *Config) { c.MaxConnectionsPerIP = 2 })
	var open []net.Conn
	for i := 0; i < 2; i++ {
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, nc)
	}
	t.Cleanup(func() {
		for _, nc := range open {
			nc.Close()
		}
	})
	remotingtest.WaitFor(t, "two connections counted", func() bool { return s.remote.Stats().Conns >= 2 })
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("a third connection from one address was served")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a third connection from one address was left open")
	}
	if n := s.remote.Stats().RefusedPerIP; n != 1 {
		t.Fatalf("%d per-address refusals counted, want 1", n)
	}
}

func TestBudgetSharedWithTheNameServer(t *testing.T) {
	b := remoting.NewBudget(96 << 20)
	s := single(t, func(c *Config) { c.Budget = b })
	if got := s.remote.Stats().Budget.Limit; got != 96<<20 {
		t.Fatalf("the broker port's budget is %d, want the one passed in (%d)", got, 96<<20)
	}
}

func TestBudgetByDefault(t *testing.T) {
	s := single(t, nil)
	if got := s.remote.Stats().Budget.Limit; got <= 0 {
		t.Fatalf("the broker port has no buffered-bytes budget (limit %d)", got)
	}
}
