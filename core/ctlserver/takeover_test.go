// takeover_test.go checks who may heartbeat for a broker: a stranger's 904
// for a live master, then its connection closed, leaves the master alone;
// the broker's own reconnect, a restart after its heartbeats expired, and
// an account that owns it take it over.

package ctlserver

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting"
)

// pipeCall serves req on the in-process connection p and returns its
// reply, nil for a oneway request.
func pipeCall(t *testing.T, p *remoting.Pipe, req *codec.Command) *codec.Command {
	t.Helper()
	if err := p.Send(codec.AppendFrame(nil, req)); err != nil {
		t.Fatal(err)
	}
	if !p.Serve() {
		t.Fatal("the connection closed")
	}
	out := p.Replies()
	if req.IsOneway() {
		if len(out) != 0 {
			t.Fatal("a oneway request was answered")
		}
		return nil
	}
	r := new(codec.Command)
	if len(out) < 4 {
		t.Fatalf("no reply to %d", req.Code)
	}
	if err := codec.Decode(out[4:], r); err != nil {
		t.Fatal(err)
	}
	return r
}

// spoof is a 904 for broker-a's id with a 1 ms timeout at a made-up address.
func spoof(id string, opaque int32, oneway bool) *codec.Command {
	req := request(codec.BrokerHeartbeat, opaque, "clusterName", "DefaultCluster", "brokerName", "broker-a", "brokerId", id,
		"brokerAddr", "6.6.6.6:10911", "heartbeatTimeoutMills", "1", "epoch", "99", "maxOffset", "99")
	if oneway {
		req.Flag = codec.FlagOneway
	}
	return req
}

func liveInfo(s *Server, id int64) (controller.LiveInfo, bool) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.live.Info(controller.LiveKey{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: id})
}

// The attack report's finding: a stranger's 904 with a 1 ms timeout for
// the master, then its connection closed, left the set without a master
// within 0.2 s. Here the heartbeat is refused whole (oneway or not), the
// close drops nothing, and the inactive-master scan finds the master
// alive.
func TestSpoofedHeartbeatCannotTakeOverAMaster(t *testing.T) {
	clock := &fakeClock{}
	clock.Set(time.UnixMilli(1_700_000_000_000))
	s := single(t, func(c *Config) {
		c.Clock = clock.Now
		c.ScanNotActiveBrokerInterval = time.Hour
		c.ScanInactiveMasterInterval = time.Hour
	})
	b1 := newRawBroker(t, s, "broker-a", 1, "127.0.0.1:30911")
	b1.register()
	b1.heartbeat()
	if r := b1.elect(); r.Code != codec.Success {
		t.Fatalf("1002: %d %q", r.Code, r.Remark)
	}
	before, _ := liveInfo(s, 1)

	stranger := s.remote.Pipe("127.0.0.2:40000")
	r := pipeCall(t, stranger, spoof("1", 1, false))
	if r.Code != codec.NoPermission || !strings.Contains(r.Remark, "broker broker-a id 1 of cluster DefaultCluster heartbeats on another connection, from 127.0.0.1") {
		t.Fatalf("the spoofed 904: %d %q", r.Code, r.Remark)
	}
	pipeCall(t, stranger, spoof("1", 2, true))
	s.connClosed(stranger.Conn().ID())
	clock.Add(5 * time.Millisecond)
	s.inactiveMasterScan()

	after, ok := liveInfo(s, 1)
	if !ok || after != before {
		t.Fatalf("the master's liveness changed: %+v, was %+v", after, before)
	}
	s.electMu.Lock()
	electing := len(s.electing)
	s.electMu.Unlock()
	if electing != 0 {
		t.Fatal("an election was triggered")
	}
	if g := groupOf(t, s, "broker-a"); !g.HasMaster || g.MasterID != 1 || g.MasterAddr != "127.0.0.1:30911" {
		t.Fatalf("the set after the spoof: %+v", g)
	}
	if n := s.Refusals()["heartbeat_takeover"]; n != 2 {
		t.Fatalf("%d takeovers refused, want 2", n)
	}
	// The stranger's own broker keys are its to keep.
	if r := pipeCall(t, s.remote.Pipe("127.0.0.2:40001"), spoof("7", 3, false)); r.Code != codec.Success {
		t.Fatalf("a 904 for a broker no connection holds: %d %q", r.Code, r.Remark)
	}
}

// A Java broker restarts as before: after its connection closed (it is no
// longer in the table), after its heartbeats expired (from anywhere), and
// while its old connection is half-dead (from the same host). Its old
// connection closing later drops nothing.
func TestBrokerReconnectTakesItsHeartbeatsBack(t *testing.T) {
	clock := &fakeClock{}
	clock.Set(time.UnixMilli(1_700_000_000_000))
	s := single(t, func(c *Config) {
		c.Clock = clock.Now
		c.ScanNotActiveBrokerInterval = time.Hour
		c.ScanInactiveMasterInterval = time.Hour
	})
	hb := func(id string, opaque int32) *codec.Command {
		return request(codec.BrokerHeartbeat, opaque, "clusterName", "DefaultCluster", "brokerName", "broker-a", "brokerId", id,
			"brokerAddr", "10.0.0.5:30911", "heartbeatTimeoutMills", "10000")
	}
	ok := func(p *remoting.Pipe, id string, opaque int32) {
		t.Helper()
		if r := pipeCall(t, p, hb(id, opaque)); r.Code != codec.Success {
			t.Fatalf("904 from %s: %d %q", p.Conn().Peer(), r.Code, r.Remark)
		}
		if in, _ := liveInfo(s, 1); in.Conn != uint64(p.Conn().ID()) {
			t.Fatalf("broker 1 is held by connection %d, want %d", in.Conn, p.Conn().ID())
		}
	}
	old := s.remote.Pipe("10.0.0.5:50000")
	ok(old, "1", 1)
	// Reconnected from its host, the old connection not yet seen closed.
	again := s.remote.Pipe("10.0.0.5:50001")
	ok(again, "1", 2)
	s.connClosed(old.Conn().ID())
	if _, alive := liveInfo(s, 1); !alive {
		t.Fatal("the old connection's close dropped the reconnected broker")
	}
	// Moved to another host: refused while its heartbeats are in time,
	// taken over once they expired.
	moved := s.remote.Pipe("10.0.0.9:50000")
	if r := pipeCall(t, moved, hb("1", 3)); r.Code != codec.NoPermission {
		t.Fatalf("904 from another host while the broker is alive: %d %q", r.Code, r.Remark)
	}
	clock.Add(10001 * time.Millisecond)
	ok(moved, "1", 4)
	// Restarted after its connection closed: new to the table.
	s.connClosed(moved.Conn().ID())
	ok(s.remote.Pipe("10.0.0.7:50000"), "1", 5)
}

// An account that owns the broker (bound to its brokerName, or an admin)
// may take it over from any host; an unbound broker account may not.
func TestOwningAccountTakesOverAHeartbeat(t *testing.T) {
	o := auth.Options{
		Signatures:      true,
		BrokerAllowFrom: mustCIDRs(t, "10.0.0.0/8"),
		Accounts: []auth.Account{
			{AccessKey: "broker-a-key", SecretKey: "broker-a-secret", Role: auth.RoleBroker, Brokers: []string{"broker-a"}},
			{AccessKey: "any-broker", SecretKey: "any-secret", Role: auth.RoleBroker},
		},
	}
	s := guarded(t, o, nil)
	hb := func(opaque int32) *codec.Command {
		return request(codec.BrokerHeartbeat, opaque, "clusterName", "DefaultCluster", "brokerName", "broker-a", "brokerId", "1",
			"brokerAddr", "10.0.0.5:30911", "heartbeatTimeoutMills", "10000")
	}
	first := s.remote.Pipe("10.0.0.5:50000")
	if r := pipeCall(t, first, hb(1)); r.Code != codec.Success {
		t.Fatalf("unsigned 904 from the broker network: %d %q", r.Code, r.Remark)
	}
	if r := pipeCall(t, s.remote.Pipe("10.1.0.1:1"), signedReq(hb(2), "any-broker", "any-secret")); r.Code != codec.NoPermission {
		t.Fatalf("904 signed by an unbound broker account: %d %q", r.Code, r.Remark)
	}
	owner := s.remote.Pipe("10.1.0.2:1")
	if r := pipeCall(t, owner, signedReq(hb(3), "broker-a-key", "broker-a-secret")); r.Code != codec.Success {
		t.Fatalf("904 signed by the account bound to broker-a: %d %q", r.Code, r.Remark)
	}
	if in, _ := liveInfo(s, 1); in.Conn != uint64(owner.Conn().ID()) {
		t.Fatal("the owning account's heartbeat did not take the broker over")
	}
}
