// A 3-node controller group in process over loopback TCP, raft sharing
// each node's controller port, with simulated 5.3.x brokers: follower
// answers, broker failover with its 1008, the leader node stopped, a
// further failover under the new leader, no two masters in one epoch, and
// every node restarted from its store.

package ctlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/status"
)

// cluster is a group of nodes on fixed loopback ports and store
// directories, so that a node restarts where it was.
type cluster struct {
	t     *testing.T
	addrs []string
	dirs  []string
	edit  func(*Config)
	mu    sync.Mutex
	nodes []*Server // nil while stopped
	// masters records, across every node and restart, the master each
	// applied state named for a set and masterEpoch.
	masters  map[string]int64
	violated []string
}

func newCluster(t *testing.T, n int, edit func(*Config)) *cluster {
	c := &cluster{t: t, addrs: remotingtest.FreeAddrs(t, n), nodes: make([]*Server, n), edit: edit, masters: map[string]int64{}}
	for range n {
		c.dirs = append(c.dirs, t.TempDir())
	}
	for i := range n {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, v := range c.violated {
			t.Error(v)
		}
	})
	return c
}

func (c *cluster) config(i int) Config {
	cfg := DefaultConfig(dledger(c.t, c.addrs, i), c.dirs[i])
	cfg.BindAddress = "127.0.0.1"
	cfg.Logger = testLogger(c.t).With("node", fmt.Sprintf("n%d", i))
	fastRaft(&cfg)
	if c.edit != nil {
		c.edit(&cfg)
	}
	return cfg
}

func (c *cluster) start(i int) {
	c.t.Helper()
	s, err := New(c.config(i))
	if err != nil {
		c.t.Fatal(err)
	}
	s.fsm.after = func(uint64) { c.record(s) }
	if err := s.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.nodes[i] = s
	c.mu.Unlock()
}

// record checks the node's state after an apply: one master per set and
// masterEpoch, on every node.
func (c *cluster) record(s *Server) {
	var seen [][3]any
	s.fsm.Read(func(st *controller.State) {
		for _, name := range st.Names() {
			if g, _ := st.Group(name); g.HasMaster {
				seen = append(seen, [3]any{name, g.MasterEpoch, g.MasterID})
			}
		}
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range seen {
		k := fmt.Sprintf("%s@%d", e[0], e[1])
		if id, ok := c.masters[k]; ok && id != e[2].(int64) {
			c.violated = append(c.violated, fmt.Sprintf("%s: master %d on %s, %d elsewhere", k, e[2], s.ID(), id))
		}
		c.masters[k] = e[2].(int64)
	}
}

func (c *cluster) stop(i int) {
	c.mu.Lock()
	s := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if s != nil {
		shutdown(c.t, s)
	}
}

func (c *cluster) node(i int) *Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i]
}

// agreed waits until every running node's 1005 names the same leader at
// its broker-facing address, and returns it.
func (c *cluster) agreed() int {
	c.t.Helper()
	l := -1
	remotingtest.WaitFor(c.t, "every node naming the same leader", func() bool {
		l = c.leaderNow()
		return l >= 0
	})
	return l
}

// leaderNow is the node every running node's 1005 names as leader, ready
// to serve, or -1 while they do not agree.
func (c *cluster) leaderNow() int {
	c.t.Helper()
	l := -1
	for i := range c.nodes {
		s := c.node(i)
		if s == nil {
			continue
		}
		r := call(c.t, s, &codec.Command{Code: codec.ControllerGetMetadataInfo, Opaque: 1})
		addr, _ := r.ExtValue("controllerLeaderAddress")
		id, _ := r.ExtValue("controllerLeaderId")
		j := slices.Index(c.addrs, addr)
		if j < 0 || id != fmt.Sprintf("n%d", j) || (l >= 0 && j != l) {
			return -1
		}
		if isLeader, _ := r.ExtValue("isLeader"); (isLeader == "true") != (i == j) {
			return -1
		}
		l = j
	}
	if l < 0 || c.node(l) == nil || !c.node(l).node.ReadyLeader() {
		return -1
	}
	return l
}

// followerTerm is node f's raft term while it follows, else 0.
func (c *cluster) followerTerm(f int) uint64 {
	st := c.node(f).node.Stats()
	if st.State != "Follower" {
		return 0
	}
	return st.Term
}

// alterSyncStateSet has master b propose ids until the group holds them.
// On a loaded machine the group may change leaders under the request
// (2007, or an outcome the answer never reached), or the slave's first
// heartbeat may not have reached the leader yet (2006): a broker sends its
// 1001 again, and so does this.
func (c *cluster) alterSyncStateSet(b *brokersim.Broker, ids []int64) {
	c.t.Helper()
	for end := time.Now().Add(remotingtest.Hang); ; time.Sleep(20 * time.Millisecond) {
		_, err := b.AlterSyncStateSet(context.Background(), ids)
		if err == nil {
			return
		}
		if gs := c.groups(c.agreed()); len(gs) == 1 && slices.Equal(gs[0].SyncStateSet, ids) {
			return
		}
		if time.Now().After(end) {
			c.t.Fatalf("1001 proposing %v: %v", ids, err)
		}
	}
}

// groups is every running node's view of the sets without liveness,
// which differs by node.
func (c *cluster) groups(i int) []status.ControllerGroup {
	gs := c.node(i).Groups()
	for gi := range gs {
		for mi := range gs[gi].Members {
			m := &gs[gi].Members[mi]
			*m = status.ControllerMember{ID: m.ID, Addr: m.Addr, Master: m.Master}
		}
	}
	return gs
}

// converged waits until every running node holds the same sets and
// returns them.
func (c *cluster) converged(cond func([]status.ControllerGroup) bool) []status.ControllerGroup {
	c.t.Helper()
	var out []status.ControllerGroup
	remotingtest.WaitFor(c.t, "every node holding the same sets", func() bool {
		out = nil
		for i := range c.nodes {
			if c.node(i) == nil {
				continue
			}
			g := c.groups(i)
			if out != nil && !equalGroups(out, g) {
				return false
			}
			out = g
		}
		return cond == nil || cond(out)
	})
	return out
}

func equalGroups(a, b []status.ControllerGroup) bool {
	return slices.EqualFunc(a, b, func(x, y status.ControllerGroup) bool {
		return x.Cluster == y.Cluster && x.BrokerName == y.BrokerName && x.HasMaster == y.HasMaster &&
			x.MasterID == y.MasterID && x.MasterAddr == y.MasterAddr && x.MasterEpoch == y.MasterEpoch &&
			slices.Equal(x.SyncStateSet, y.SyncStateSet) && x.SyncStateSetEpoch == y.SyncStateSetEpoch &&
			x.NextID == y.NextID && slices.Equal(x.Members, y.Members)
	})
}

func (c *cluster) broker(name string) *brokersim.Broker {
	return brokersim.New(brokersim.Config{
		Cluster: "DefaultCluster", BrokerName: name, ControllerAddrs: c.addrs,
		HeartbeatInterval: 150 * time.Millisecond, ReplicaInfoInterval: 300 * time.Millisecond,
		MetadataInterval: 300 * time.Millisecond, RetryInterval: 200 * time.Millisecond,
		Log: testLogger(c.t).With("broker", name),
	})
}

func startBroker(t *testing.T, b *brokersim.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Kill)
}

// waitNotice waits for b's 1008 naming master id at masterEpoch epoch.
func waitNotice(t *testing.T, b *brokersim.Broker, id int64, epoch int32) brokersim.Notice {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := b.WaitNotice(ctx, func(n brokersim.Notice) bool {
		return n.HasMasterBrokerID && n.MasterBrokerID == id && n.MasterEpoch == epoch
	})
	if err != nil {
		t.Fatalf("%v; received %+v", err, b.Notices())
	}
	return n
}

// checkNotice compares a 1008 with the one Java sends (§3.5).
func checkNotice(t *testing.T, n brokersim.Notice, masterAddr string, id int64, epoch, ssEpoch int32) {
	t.Helper()
	want := map[string]string{"masterAddress": masterAddr, "masterBrokerId": fmt.Sprint(id),
		"masterEpoch": fmt.Sprint(epoch), "syncStateSetEpoch": fmt.Sprint(ssEpoch)}
	if !maps.Equal(n.Ext, want) || !n.Oneway || n.Version != 0 {
		t.Errorf("1008 header %v oneway %v version %d, want %v oneway version 0", n.Ext, n.Oneway, n.Version, want)
	}
	if wantBody := fmt.Sprintf(`{"syncStateSet":[%d],"syncStateSetEpoch":%d}`, id, ssEpoch); string(n.Body) != wantBody {
		t.Errorf("1008 body %s, want %s", n.Body, wantBody)
	}
}

func TestThreeNodeGroup(t *testing.T) {
	c := newCluster(t, 3, nil)

	// A follower: 2007 without extFields for every leader request, its own
	// answers to 904, 1009, 1010 and unknown codes. The requests name a
	// set of their own, so that a follower that becomes leader under them
	// (a loaded machine can hold up heartbeats past the election timeout)
	// changes nothing the rest of the test looks at; the answers count
	// only from a round in which the node followed throughout.
	const probe = "follower-probe"
	leaderOnly := []*codec.Command{
		request(codec.ControllerAlterSyncStateSet, 1, "brokerName", probe, "masterBrokerId", "1", "masterEpoch", "1"),
		request(codec.ControllerElectMaster, 2, "clusterName", "DefaultCluster", "brokerName", probe, "brokerId", "1"),
		request(codec.ControllerRegisterBroker, 3, "clusterName", "DefaultCluster", "brokerName", probe, "brokerId", "1", "brokerAddress", "127.0.0.1:1"),
		request(codec.ControllerGetReplicaInfo, 4, "brokerName", probe),
		request(codec.ControllerGetSyncStateData, 6),
		request(codec.CleanBrokerData, 11, "clusterName", "DefaultCluster", "brokerName", probe),
		request(codec.ControllerGetNextBrokerID, 12, "clusterName", "DefaultCluster", "brokerName", probe),
		request(codec.ControllerApplyBrokerID, 13, "clusterName", "DefaultCluster", "brokerName", probe, "appliedBrokerId", "1", "registerCheckCode", "x;1"),
	}
	leaderOnly[0].Body = []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)
	leaderOnly[4].Body = []byte(`["` + probe + `"]`)
	var l int
	var answers []*codec.Command
	remotingtest.WaitFor(t, "a round of requests to a node that followed throughout", func() bool {
		l = c.agreed()
		fi := (l + 1) % 3
		term := c.followerTerm(fi)
		if term == 0 {
			return false
		}
		answers = answers[:0]
		for _, req := range leaderOnly {
			answers = append(answers, call(t, c.node(fi), req))
		}
		return c.followerTerm(fi) == term
	})
	for i, r := range answers {
		if r.Code != codec.ControllerNotLeader || r.Remark != "The controller is not in leader state" || r.HasExt || len(r.Body) != 0 {
			t.Errorf("follower answered %d with %d %q ext %v %v", leaderOnly[i].Code, r.Code, r.Remark, r.HasExt, r.Ext)
		}
	}
	f := c.node((l + 1) % 3)
	hb := request(codec.BrokerHeartbeat, 20, "clusterName", "DefaultCluster", "brokerAddr", "127.0.0.1:9", "brokerName", "hb-probe", "brokerId", "1")
	if r := call(t, f, hb); r.Code != codec.Success || r.Remark != "Heart beat success" || r.HasExt {
		t.Errorf("follower's 904: %d %q ext %v", r.Code, r.Remark, r.HasExt)
	}
	if g := f.Stats().BrokersAlive; g != 1 {
		t.Errorf("the follower's table holds %d live brokers after a heartbeat, want 1", g)
	}
	if r := call(t, f, request(codec.UpdateControllerConfig, 21)); r.Code != codec.Success || r.HasExt {
		t.Errorf("follower's 1009: %d %q", r.Code, r.Remark)
	}
	if r := call(t, f, request(codec.GetControllerConfig, 22)); r.Code != codec.Success || len(r.Body) == 0 {
		t.Errorf("follower's 1010: %d %q", r.Code, r.Remark)
	}
	if r := call(t, f, request(9999, 23)); r.Code != codec.RequestCodeNotSupported || r.Remark != " request type 9999 not supported" {
		t.Errorf("follower's 9999: %d %q", r.Code, r.Remark)
	}

	// Two brokers: the first one's 1002 makes it master, the second
	// learns it from 1003; the master adds the slave to its set. Their ids
	// are 1 and 2 unless a start-up was retried after an id was applied
	// but its answer lost (a leader change, a commit slower than the
	// apply timeout): the retry is given the next id.
	a, b := c.broker("broker-a"), c.broker("broker-a")
	startBroker(t, a)
	startBroker(t, b)
	ida, idb := a.State().ID, b.State().ID
	if st := a.State(); !st.Master || st.ID < 1 || st.MasterEpoch != 1 {
		t.Fatalf("first broker: %+v", st)
	}
	if st := b.State(); st.Master || st.ID <= ida || st.MasterID != ida || st.MasterAddr != a.Addr() {
		t.Fatalf("second broker: %+v", st)
	}
	both := []int64{ida, idb}
	c.alterSyncStateSet(a, both)
	c.converged(func(gs []status.ControllerGroup) bool { return len(gs) == 1 && slices.Equal(gs[0].SyncStateSet, both) })

	// The master's connections close: the leader elects the slave at once
	// and tells it.
	a.Kill()
	n := waitNotice(t, b, idb, 2)
	checkNotice(t, n, b.Addr(), idb, 2, 3)
	remotingtest.WaitFor(t, "broker 2 to be master", func() bool { return b.State().Master })
	c.converged(func(gs []status.ControllerGroup) bool { return gs[0].MasterID == idb && gs[0].MasterEpoch == 2 })

	// The old master comes back as a slave (it has its id: 1005, 1003)
	// and joins the set again.
	startBroker(t, a)
	if st := a.State(); st.Master || st.ID != ida || st.MasterID != idb || st.MasterEpoch != 2 {
		t.Fatalf("restarted broker: %+v", st)
	}
	c.alterSyncStateSet(b, both)
	c.converged(func(gs []status.ControllerGroup) bool {
		return slices.Equal(gs[0].SyncStateSet, both) && gs[0].SyncStateSetEpoch == 4
	})

	// The leader node stops: another leads, the brokers find it through
	// 1005, and a further failover goes through it.
	l = c.agreed()
	c.stop(l)
	if l2 := c.agreed(); l2 == l {
		t.Fatalf("node %d still leads after it stopped", l)
	}
	for _, br := range []*brokersim.Broker{a, b} {
		remotingtest.WaitFor(t, "the brokers to find the new leader", func() bool {
			l2 := c.leaderNow()
			return l2 >= 0 && br.State().Leader == c.addrs[l2]
		})
	}
	b.Kill()
	n = waitNotice(t, a, ida, 3)
	checkNotice(t, n, a.Addr(), ida, 3, 5)
	remotingtest.WaitFor(t, "broker 1 to be master again", func() bool { return a.State().Master })
	startBroker(t, b)

	// The stopped node catches up; then every node restarts from its
	// store with the same sets (the brokers stay up: their heartbeats keep
	// the master alive for the restarted nodes).
	c.start(l)
	before := c.converged(func(gs []status.ControllerGroup) bool { return gs[0].MasterID == ida && gs[0].MasterEpoch == 3 })
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i)
	}
	c.agreed()
	after := c.converged(nil)
	if !equalGroups(before, after) {
		t.Fatalf("after restarting every node:\n%+v\nbefore:\n%+v", after, before)
	}
	got, _ := json.Marshal(after)
	t.Logf("sets after the restart: %s", got)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.masters) < 3 {
		t.Errorf("only %d masters recorded: %v", len(c.masters), c.masters)
	}
}
