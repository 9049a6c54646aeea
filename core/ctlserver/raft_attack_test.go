// raft_attack_test.go is the controller's part of the chaos suite: the
// raft attacks found against a 3-node group, replayed against one whose
// raft shares each node's controller port (DLedger style) and whose
// members share a cluster secret. Forged entries (a stranger's
// AppendEntries carrying a controller event), forced elections
// (TimeoutNow), huge terms (2^64-1, which wrapped the group into a
// permanent stall) and held raft connections (which exhausted the file
// descriptors). Each must leave the sets, the leader and the port as they
// were.
//
// Attackers dial from other 127.x addresses (strangers) or from the
// members' own 127.0.0.1, without the secret or with it (an insider: the
// guard's term and TimeoutNow rules still hold). Size: skipped under
// -short; the flood is 2,000 connections, 20,000 with ROCKETNS_SOAK=1.

package ctlserver

import (
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/raftnode/rafttest"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/status"
)

func TestRaftAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("attack suite skipped under -short")
	}
	secret := []byte("controller-test-secret-0123456789")
	const (
		perIP    = 100
		maxConns = 400
	)
	c := newCluster(t, 3, func(cfg *Config) {
		cfg.RaftSecret = secret
		cfg.MaxConnections = maxConns
		cfg.MaxConnectionsPerIP = perIP
		cfg.IdleTimeout = 2 * time.Second
	})
	c.agreed()
	b := c.broker("broker-a")
	startBroker(t, b)
	sets := c.converged(func(gs []status.ControllerGroup) bool { return len(gs) == 1 && gs[0].HasMaster })
	master := sets[0]

	// unchanged waits until every node holds the set as it was.
	unchanged := func() {
		t.Helper()
		c.converged(func(gs []status.ControllerGroup) bool {
			return len(gs) == 1 && gs[0].MasterAddr == master.MasterAddr && gs[0].MasterID == master.MasterID
		})
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s was answered", what)
		}
	}
	stranger := rafttest.Dialer{Source: "127.0.0.2", ID: "n0"}
	noSecret := rafttest.Dialer{ID: "n0"}
	wrongSecret := rafttest.Dialer{ID: "n0", Secret: []byte("not-the-controller-secret-987654")}
	insider := rafttest.Dialer{ID: "n0", Secret: secret}

	// Forged entries.
	{
		// The attack: one AppendEntries per node, one term up,
		// continuing its log with an UpdateBrokerAddress to 6.6.6.6 and
		// committing it.
		data := controller.EncodeBatch(nil, []controller.Event{{Type: controller.EventUpdateBrokerAddress,
			Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: master.MasterID, Addr: "6.6.6.6:10911"}})
		for _, d := range []rafttest.Dialer{stranger, noSecret, wrongSecret} {
			tr := d.Transport(t)
			for i := range c.addrs {
				st := c.node(i).Node().Stats()
				term := st.Term + 1
				req := &raft.AppendEntriesRequest{RPCHeader: rafttest.Header("n0", c.addrs[0]), Term: term,
					PrevLogEntry: st.LastLogIndex, PrevLogTerm: st.Term, LeaderCommitIndex: st.LastLogIndex + 1,
					Entries: []*raft.Log{{Index: st.LastLogIndex + 1, Term: term, Type: raft.LogCommand, Data: data}}}
				var resp raft.AppendEntriesResponse
				refused(fmt.Sprintf("forged AppendEntries from %+v to n%d", d, i), tr.AppendEntries("", raft.ServerAddress(c.addrs[i]), req, &resp))
			}
		}
		unchanged()
	}

	// Forced elections.
	{
		for _, d := range []rafttest.Dialer{stranger, noSecret, insider} {
			tr := d.Transport(t)
			l := c.agreed()
			for i := range c.addrs {
				if i == l {
					continue
				}
				// An insider claiming another follower: not the leader.
				other := 3 - i - l
				var resp raft.TimeoutNowResponse
				err := tr.TimeoutNow("", raft.ServerAddress(c.addrs[i]),
					&raft.TimeoutNowRequest{RPCHeader: rafttest.Header(fmt.Sprintf("n%d", other), c.addrs[other])}, &resp)
				refused(fmt.Sprintf("TimeoutNow from %+v to n%d", d, i), err)
			}
		}
		unchanged()
	}

	// Huge terms.
	{
		tr := insider.Transport(t)
		for i := range c.addrs {
			target := raft.ServerAddress(c.addrs[i])
			var ae raft.AppendEntriesResponse
			refused("AppendEntries with term 2^64-1", tr.AppendEntries("", target, &raft.AppendEntriesRequest{RPCHeader: rafttest.Header("n0", c.addrs[0]), Term: math.MaxUint64}, &ae))
			var rv raft.RequestVoteResponse
			refused("RequestVote with term 2^64-1", tr.RequestVote("", target, &raft.RequestVoteRequest{RPCHeader: rafttest.Header("n0", c.addrs[0]), Term: math.MaxUint64, LeadershipTransfer: true}, &rv))
		}
		for i := range c.addrs {
			if term := c.node(i).Node().Stats().Term; term >= 1<<62 {
				t.Fatalf("n%d took term %d", i, term)
			}
			if c.node(i).Node().Stats().RefusedRPCs == 0 {
				t.Errorf("n%d refused no RPC", i)
			}
		}
		// The group still decides: a second broker joins the set. Which
		// one is master is not asserted: on a loaded machine the first
		// one's heartbeats may lapse and the group elects again, which is
		// the group deciding too.
		b2 := c.broker("broker-a")
		startBroker(t, b2)
		c.converged(func(gs []status.ControllerGroup) bool {
			return len(gs) == 1 && len(gs[0].Members) == 2 && gs[0].HasMaster
		})
	}

	// Held raft connections.
	{
		attempts := 2000
		if os.Getenv("ROCKETNS_SOAK") != "" {
			attempts = 20000
		}
		// From 127.0.0.9, against n0's port: half silent from the first
		// byte, half sending the raft preamble and then nothing. The
		// attacker keeps every connection until the node closes it.
		var open, closed atomic.Int64
		var maxConnsSeen int
		n0 := c.node(0)
		probe := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.5")}}
		for i := range attempts {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.9")}, Timeout: 5 * time.Second}
			nc, err := d.Dial("tcp", c.addrs[0])
			if err != nil {
				t.Fatalf("dial %d: %v", i, err)
			}
			if i%2 == 1 {
				nc.Write([]byte(raftnode.Preamble))
			}
			open.Add(1)
			go func() {
				io.Copy(io.Discard, nc)
				nc.Close()
				open.Add(-1)
				closed.Add(1)
			}()
			if st := n0.remote.Stats(); st.Conns > maxConnsSeen {
				maxConnsSeen = st.Conns
			}
			if i%200 == 0 {
				// The controller port answers throughout.
				pc, err := probe.Dial("tcp", c.addrs[0])
				if err != nil {
					t.Fatalf("probe during the flood: %v", err)
				}
				r := remotingtest.Over(t, pc).Call(&codec.Command{Code: codec.ControllerGetMetadataInfo, Opaque: int32(i)})
				if r.Code != codec.Success {
					t.Fatalf("1005 during the flood: %d %s", r.Code, r.Remark)
				}
				pc.Close()
			}
		}
		if maxConnsSeen > maxConns {
			t.Errorf("n0 served %d connections, over maxConnections %d", maxConnsSeen, maxConns)
		}
		st := n0.remote.Stats()
		if st.RefusedPerIP == 0 {
			t.Error("the flood never reached maxConnectionsPerIP")
		}
		if n0.stream.Stats().Refused == 0 {
			t.Error("no raft connection of the stranger was refused")
		}
		// Every attacking connection ends: strangers' raft connections at
		// once, silent ones at the idle timeout.
		remotingtest.WaitFor(t, "the node to close every attacking connection", func() bool { return open.Load() == 0 })
		c.agreed()
		unchanged()
		t.Logf("%d connections: %d served at most at once, %d refused at accept (%d for the per-address cap), %d raft connections refused",
			attempts, maxConnsSeen, st.RefusedConns, st.RefusedPerIP, n0.stream.Stats().Refused)
	}

	// The refusals show in every node's metrics.
	for i := range c.addrs {
		text := scrape(t, c.node(i))
		for _, name := range []string{"raft_refused_connections_total", "raft_refused_rpcs_total"} {
			if !regexp.MustCompile(`(?m)^rocketns_controller_` + name + ` [1-9][0-9]*$`).MatchString(text) {
				t.Errorf("n%d: %s missing or zero", i, name)
			}
		}
	}
}

// The node's start-up says when raft is not authenticated.
func TestUnauthenticatedRaftWarned(t *testing.T) {
	for _, secret := range [][]byte{nil, []byte("controller-test-secret-0123456789")} {
		logs := &remotingtest.Logs{}
		single(t, func(c *Config) { c.Logger = logs.Logger(); c.RaftSecret = secret })
		warned := strings.Contains(logs.String(), "raft connections are not authenticated")
		if warned != (secret == nil) {
			t.Errorf("secret %q: warned %v\n%s", secret, warned, logs.String())
		}
	}
	if _, err := raftnode.NewStream(raftnode.StreamOptions{Advertise: "127.0.0.1:1", Secret: []byte("short")}); err == nil {
		t.Fatal("a short secret was taken")
	}
}
