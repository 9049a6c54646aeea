//go:build e2e

// The move of a controller-mode cluster to rocketns controllers as
// docs/migrating.md describes it, step by step, with real processes and
// simulated brokers. A Java controller cannot run here: the group being
// replaced is a rocketns group whose store the new group does not read,
// which is what a Java group's DLedger or jRaft store is to rocketns.

package main_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// startGroupIn starts a 3-node group on addrs with its stores under dir
// (store-n0...); before runs on each store directory first.
func startGroupIn(t *testing.T, bin string, addrs []string, dir string, before func(store string)) []*proc {
	t.Helper()
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("n%d-%s", i, a))
	}
	nodes := make([]*proc, len(addrs))
	for i := range addrs {
		store := filepath.Join(dir, fmt.Sprintf("store-n%d", i))
		if before != nil {
			before(store)
		}
		conf := filepath.Join(dir, fmt.Sprintf("controller-n%d.conf", i))
		text := fmt.Sprintf("controllerDLegerGroup=group1\ncontrollerDLegerPeers=%s\ncontrollerDLegerSelfId=n%d\n"+
			"controllerStorePath=%s\nconfigStorePath=%s\nbindAddress=127.0.0.1\n%s",
			strings.Join(peers, ";"), i, store, filepath.Join(dir, fmt.Sprintf("n%d.properties", i)), ctlTimings)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		nodes[i] = startProc(t, bin, filepath.Join(dir, fmt.Sprintf("n%d.log", i)), "The Controller Server boot success",
			"controller", "-c", conf)
	}
	return nodes
}

// newSimAt is simBroker's broker on a given address, not started.
func newSimAt(t *testing.T, ctls []string, addr string) *brokersim.Broker {
	b := brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a", ControllerAddrs: ctls,
		ListenAddr: addr, HeartbeatInterval: 200 * time.Millisecond, ReplicaInfoInterval: time.Second,
		MetadataInterval: 500 * time.Millisecond, RetryInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
		Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(b.Kill)
	return b
}

func TestControllerMigrationProcedure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	bin := buildBinary(t)
	addrs := remotingtest.FreeAddrs(t, 3)

	// Before: the old group, and broker-a's master and slave (ids 1 and 2,
	// both in the SyncStateSet), which remember their ids and epochs.
	oldGroup := startGroupIn(t, bin, addrs, t.TempDir(), nil)
	leaderOf(t, addrs)
	master, slave := masterAndSlave(t, simBroker(t, addrs, nil), simBroker(t, addrs, nil))
	masterAddr, slaveAddr := master.Addr(), slave.Addr()

	// Step 1: stop the set, slaves first, then the master.
	slave.Kill()
	master.Kill()
	// Step 2: stop every node of the old group.
	for _, p := range oldGroup {
		p.signal(t, syscall.SIGTERM)
	}
	// Step 3: the new group on the same addresses, each node on an empty
	// controllerStorePath. Pointed at the old group's directory instead, a
	// node says it does not read it and starts empty.
	dir := t.TempDir()
	newGroup := startGroupIn(t, bin, addrs, dir, func(store string) {
		if err := os.MkdirAll(filepath.Join(store, "dledger-n0"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	leaderOf(t, addrs)
	if log := tail(newGroup[0].logPath); !strings.Contains(log, "holds a Java controller store that is not read") {
		t.Errorf("no warning about the foreign store:\n%s", log)
	}

	// A broker that kept its identity file registers the id it remembers
	// (1003, what a Java broker with brokerIdentity sends after finding the
	// leader) and is refused with 2010, on every retry: the new group never
	// gave it that id.
	register := func(addr string) int32 {
		c := dial(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		req := &codec.Command{Code: codec.ControllerRegisterBroker, Version: codec.ServerVersion}
		for _, kv := range [][2]string{{"clusterName", "DefaultCluster"}, {"brokerName", "broker-a"},
			{"brokerId", fmt.Sprint(master.State().ID)}, {"brokerAddress", masterAddr}, {"invokeTime", "1"}} {
			req.SetExt(kv[0], kv[1])
		}
		resp, err := c.Invoke(ctx, req)
		if err != nil {
			return -1
		}
		return resp.Code
	}
	var code int32
	if !waitUntil(time.Now().Add(startTimeout), func() bool {
		code = register(leaderOf(t, addrs))
		return code == codec.ControllerBrokerNeedToBeRegistered || code == codec.Success
	}) || code != codec.ControllerBrokerNeedToBeRegistered {
		t.Fatalf("a broker that kept its id %d got %d from the empty group, want %d", master.State().ID, code, codec.ControllerBrokerNeedToBeRegistered)
	}

	// Step 4: its identity files removed, the old master starts first, on
	// its address, and is elected.
	newMaster := newSimAt(t, addrs, masterAddr)
	startSim(t, newMaster)
	if !waitUntil(time.Now().Add(startTimeout), func() bool { return newMaster.State().Master }) {
		t.Fatalf("the old master was not elected: %+v", newMaster.State())
	}
	// Step 5: then the slaves; the master takes them into its SyncStateSet.
	newSlave := newSimAt(t, addrs, slaveAddr)
	startSim(t, newSlave)
	m, s := masterAndSlave(t, newMaster, newSlave)
	// The ids are the new group's: 1 and 2 here, unless a registration's
	// answer was lost on a loaded machine and the simulated broker (which,
	// unlike Java's, keeps no brokerIdentity-temp) asked for another.
	mid, sid := m.State().ID, s.State().ID
	if m != newMaster || m.Addr() != masterAddr || mid < 1 || sid <= mid {
		t.Fatalf("master %+v, slave %+v", m.State(), s.State())
	}
	v, err := syncState(leaderOf(t, addrs))
	if err != nil {
		t.Fatal(err)
	}
	if !v.hasMaster || v.master != mid || !slices.Equal(v.inSync, []int64{mid, sid}) || v.nextID != fmt.Sprint(sid+1) {
		t.Fatalf("the new group's view of broker-a: %+v", v)
	}
	// Step 6: the set fails over under the new group.
	failover(t, m, s)
}
