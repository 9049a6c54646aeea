// 1005 in both raft styles, with and without a known leader, the DLedger
// peer order, and a jRaft-style group with raft on its own ports.

package ctlserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestJavaHashOrder(t *testing.T) {
	f := func(in, want []string) {
		t.Helper()
		if got := javaHashOrder(in); !slices.Equal(got, want) {
			t.Errorf("javaHashOrder(%v) = %v, want %v", in, got, want)
		}
	}
	f([]string{"n0", "n1", "n2"}, []string{"n0", "n1", "n2"})
	f([]string{"n2", "n0", "n1"}, []string{"n0", "n1", "n2"})
	// "a" hashes to bucket 1, "b" to 2, "q" (113) to 1 again: buckets
	// first, then insertion order.
	f([]string{"b", "q", "a"}, []string{"q", "a", "b"})
	// "Aa" and "BB" share String.hashCode 2112: insertion order.
	f([]string{"BB", "Aa"}, []string{"BB", "Aa"})
	f([]string{"Aa", "BB"}, []string{"Aa", "BB"})
	// Past 12 keys the table has 32 buckets: "n16" (hash 107283, bucket
	// 18 of 32, 2 of 16) now comes after "n9" (3467, bucket 11).
	var ids []string
	for i := range 17 {
		ids = append(ids, fmt.Sprintf("n%d", i))
	}
	got := javaHashOrder(ids)
	if slices.Index(got, "n16") < slices.Index(got, "n9") {
		t.Errorf("17 keys: %v", got)
	}
}

// metadata is the 1005 answer of s as a map, with isLeader.
func metadata(t *testing.T, s *Server) map[string]string {
	t.Helper()
	r := call(t, s, &codec.Command{Code: codec.ControllerGetMetadataInfo, Opaque: 1})
	if r.Code != 0 || r.Remark != "" || !r.HasExt {
		t.Fatalf("1005: %d %q", r.Code, r.Remark)
	}
	m := map[string]string{}
	for _, f := range r.Ext {
		m[f.Key] = f.Value
	}
	return m
}

// A node that knows no leader leaves the leader keys out (DLedger) or
// names "" (jRaft), and answers leader requests 2007.
func TestMetadataWithoutLeader(t *testing.T) {
	addrs := remotingtest.FreeAddrs(t, 3)
	cfg := DefaultConfig(dledger(t, addrs, 0), "")
	cfg.InMemory, cfg.BindAddress = true, "127.0.0.1"
	s := startNode(t, cfg)
	want := map[string]string{"isLeader": "false", "group": "group1",
		"peers": fmt.Sprintf("n0:%s;n1:%s;n2:%s;", addrs[0], addrs[1], addrs[2])}
	if got := metadata(t, s); !maps.Equal(got, want) {
		t.Errorf("1005 without a leader: %v, want %v", got, want)
	}
	if r := call(t, s, request(codec.ControllerGetNextBrokerID, 2, "brokerName", "b")); r.Code != codec.ControllerNotLeader || r.HasExt {
		t.Errorf("1012 without a leader: %d %q", r.Code, r.Remark)
	}

	raft, rpc := remotingtest.FreeAddrs(t, 3), remotingtest.FreeAddrs(t, 3)
	jcfg := DefaultConfig(jraft(t, raft, rpc, 0), "")
	jcfg.InMemory, jcfg.BindAddress = true, "127.0.0.1"
	js := startNode(t, jcfg)
	want = map[string]string{"isLeader": "false", "group": "jRaft-Controller", "controllerLeaderId": "",
		"peers": fmt.Sprintf("%s;%s;%s;", rpc[0], rpc[1], rpc[2])}
	if got := metadata(t, js); !maps.Equal(got, want) {
		t.Errorf("jRaft 1005 without a leader: %v, want %v", got, want)
	}
}

func jraft(t testing.TB, raft, rpc []string, self int) *membership.Membership {
	t.Helper()
	m, err := membership.Parse(membership.FromMap(map[string]string{
		membership.KeyControllerType:  membership.ControllerTypeJRaft,
		membership.KeyJRaftServerID:   raft[self],
		membership.KeyJRaftInitConf:   strings.Join(raft, ","),
		membership.KeyJRaftRPCAddress: strings.Join(rpc, ","),
	}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// jRaft style: brokers on the RPC ports, raft on its own; 1005 names the
// leader's raft id and broker-facing address; a broker gets a master.
// Neither port takes the other protocol.
func TestJRaftGroup(t *testing.T) {
	raft, rpc := remotingtest.FreeAddrs(t, 3), remotingtest.FreeAddrs(t, 3)
	var nodes []*Server
	for i := range 3 {
		cfg := DefaultConfig(jraft(t, raft, rpc, i), t.TempDir())
		cfg.BindAddress = "127.0.0.1"
		fastRaft(&cfg)
		nodes = append(nodes, startNode(t, cfg))
	}
	var l int
	remotingtest.WaitFor(t, "every node naming the same leader", func() bool {
		l = -1
		for i, s := range nodes {
			m := metadata(t, s)
			j := slices.Index(raft, m["controllerLeaderId"])
			if j < 0 || m["controllerLeaderAddress"] != rpc[j] || (l >= 0 && l != j) || (m["isLeader"] == "true") != (i == j) {
				return false
			}
			l = j
		}
		return nodes[l].node.ReadyLeader()
	})
	want := map[string]string{"isLeader": "true", "group": "jRaft-Controller", "controllerLeaderId": raft[l],
		"controllerLeaderAddress": rpc[l], "peers": strings.Join(rpc, ";") + ";"}
	if got := metadata(t, nodes[l]); !maps.Equal(got, want) {
		t.Errorf("jRaft 1005: %v, want %v", got, want)
	}
	if nodes[l].Addr().String() != rpc[l] || nodes[l].RaftAddr().String() != raft[l] {
		t.Errorf("addresses %v and %v, want %s and %s", nodes[l].Addr(), nodes[l].RaftAddr(), rpc[l], raft[l])
	}

	c := &cluster{t: t, addrs: rpc}
	b := c.broker("broker-j")
	startBroker(t, b)
	// Its id is 1 unless its start was retried after an id was applied but
	// the answer lost; the leader it found is the group's unless the group
	// changed leaders since (a loaded machine can hold up heartbeats past
	// the election timeout).
	if st := b.State(); !st.Master || st.ID < 1 || st.MasterID != st.ID || !slices.Contains(rpc, st.Leader) {
		t.Fatalf("broker: %+v", st)
	}

	// The raft preamble on the broker port reads as a frame far above
	// the limit: closed. A remoting frame on the raft port lacks the
	// preamble: closed.
	w := remotingtest.Dial(t, rpc[l])
	w.SendRaw([]byte(raftnode.Preamble))
	if !w.ClosedByPeer() {
		t.Error("the broker port kept a raft connection")
	}
	w = remotingtest.Dial(t, raft[l])
	w.Send(request(codec.ControllerGetMetadataInfo, 1))
	w.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := w.Recv(); err == nil {
		t.Error("the raft port answered a remoting request")
	}
}
