// Elections committed without their notice: a controller-triggered
// election whose commit timed out but applied, and one another leader
// committed, are announced once this node's state is known to hold them.

package ctlserver

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// pairOn starts a master and a slave of broker-a on s, the slave in the
// SyncStateSet, and returns them.
func pairOn(t *testing.T, s *Server) (master, slave *brokersim.Broker) {
	t.Helper()
	var bs []*brokersim.Broker
	for range 2 {
		b := brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a",
			ControllerAddrs: []string{s.Addr().String()}, RetryInterval: 50 * time.Millisecond, Log: testLogger(t)})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := b.Start(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Kill)
		bs = append(bs, b)
	}
	master, slave = bs[0], bs[1]
	if !master.State().Master {
		master, slave = slave, master
	}
	ids := []int64{master.State().ID, slave.State().ID}
	slices.Sort(ids)
	// A broker's start ends with a oneway heartbeat: the controller may
	// not have read the slave's yet, and would refuse it as not alive.
	remotingtest.WaitFor(t, "both brokers' heartbeats", func() bool { return s.Stats().BrokersAlive == 2 })
	if _, err := master.AlterSyncStateSet(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// The flake once seen in BenchmarkFailover: the election after the
// master's connection closed timed out in raft but committed; the retry's
// decision found the new master in place (2011) and no 1008 was ever
// sent. The retry now announces it after its barrier.
func TestElectionCommittedAfterTimeoutIsAnnounced(t *testing.T) {
	g := newGate()
	// The apply timeout is the package's (fastRaft): the stalled commit
	// reaches it whatever its length, and the writes that set the pair up
	// must not.
	s := single(t, nil, g.hook)
	master, slave := pairOn(t, s)
	epoch := master.State().MasterEpoch + 1
	before := s.Stats()
	g.stalled.Store(true)
	master.Kill()
	<-g.waiting // the election's entry
	remotingtest.WaitFor(t, "the election's commit to time out", func() bool { return s.Stats().UnknownOutcomes > before.UnknownOutcomes })
	g.stalled.Store(false)
	close(g.open)
	n := waitNotice(t, slave, slave.State().ID, epoch)
	if !n.Oneway {
		t.Fatalf("notice %+v not oneway", n)
	}
	// The retry's reconcile sends the notice before its decision (2011)
	// is made and counted.
	remotingtest.WaitFor(t, "the retry's decision", func() bool {
		el := s.Stats().Elections
		return el.StillExist != before.Elections.StillExist || el.Success != before.Elections.Success
	})
	// At least one 2011: on a slow machine the liveness scan may also
	// find the dead master and try again, meeting the new one too.
	st := s.Stats()
	if st.Reannounced != 1 || st.Elections.Success != before.Elections.Success || st.Elections.StillExist <= before.Elections.StillExist {
		t.Fatalf("reannounced %d, elections %+v (before the kill %+v); want 1, a 2011 and no success counted",
			st.Reannounced, st.Elections, before.Elections)
	}
	// Announced once: a later leadership does not repeat it.
	reconciled(t, s)
	if got := s.Stats().Reannounced; got != 1 {
		t.Fatalf("reannounced %d after a second reconcile, want 1", got)
	}
}

// An election another leader committed (here: an entry this node's writer
// never decided) is announced when this node becomes the ready leader,
// with the set's current SyncStateSet; one older than reannounceWindow is
// not.
func TestNewLeaderAnnouncesRecentElections(t *testing.T) {
	clock := &fakeClock{}
	clock.Set(time.Now())
	s := single(t, func(c *Config) { c.Clock = clock.Now })
	_, slave := pairOn(t, s)
	var before controller.Group
	s.fsm.Read(func(st *controller.State) { before, _ = st.Group("broker-a") })
	entry := controller.EncodeBatch(nil, []controller.Event{{Type: controller.EventElectMaster, BrokerName: "broker-a",
		Elected: true, BrokerID: slave.State().ID}})
	if _, err := s.node.Apply(context.Background(), entry); err != nil {
		t.Fatal(err)
	}
	s.onLeadership(false)
	s.onLeadership(true)
	n := waitNotice(t, slave, slave.State().ID, before.MasterEpoch+1)
	if n.SyncStateSetEpoch != before.SyncStateSetEpoch+1 {
		t.Fatalf("notice %+v, want syncStateSetEpoch %d", n, before.SyncStateSetEpoch+1)
	}

	// Too old to matter: the brokers' own polls have told them.
	if _, err := s.node.Apply(context.Background(), controller.EncodeBatch(nil, []controller.Event{{
		Type: controller.EventElectMaster, BrokerName: "broker-a", Elected: true, BrokerID: slave.State().ID}})); err != nil {
		t.Fatal(err)
	}
	clock.Add(reannounceWindow + time.Second)
	reconciled(t, s)
	if got := s.Stats().Reannounced; got != 1 {
		t.Fatalf("reannounced %d, want only the recent election", got)
	}
}

// reconciled runs a reconcile as a new leadership does and waits for it.
func reconciled(t *testing.T, s *Server) {
	t.Helper()
	n := s.counts.reconciles.Load()
	s.onLeadership(false)
	s.onLeadership(true)
	remotingtest.WaitFor(t, "the reconcile", func() bool { return s.counts.reconciles.Load() > n })
}
