// Tests of the controller commands against a controller node, a NameServer
// and two simulated brokers in process: mqadmin's printed output, -o json,
// long flags, and errors in mqadmin's words with exit status 1.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/ctlserver"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/server/servertest"
)

// ctlEnv is a one-node controller with a persisted config, a NameServer,
// and broker-a's master and slave registered with both.
type ctlEnv struct {
	ctl, ns       string
	master, slave *brokersim.Broker
	node          *ctlserver.Server
	configStore   string
}

func startCtlEnv(t *testing.T) *ctlEnv {
	t.Helper()
	addr := remotingtest.FreeAddrs(t, 1)[0]
	env := &ctlEnv{ctl: addr, configStore: filepath.Join(t.TempDir(), "controller.properties")}
	c := config.DefaultController()
	c.Extra[membership.KeyDLedgerGroup] = "group1"
	c.Extra[membership.KeyDLedgerPeers], c.Extra[membership.KeyDLedgerSelfID] = "n0-"+addr, "n0"
	c.ConfigStorePath = env.configStore
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	sc := ctlserver.Config{Controller: *k, InMemory: true, Logger: slog.New(slog.DiscardHandler)}
	sc.BindAddress = "127.0.0.1"
	sc.RaftHeartbeatTimeout, sc.RaftElectionTimeout, sc.RaftLeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
	if env.node, err = ctlserver.New(sc); err != nil {
		t.Fatal(err)
	}
	if err := env.node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		env.node.Shutdown(ctx)
	})
	env.ns = servertest.Start(t, nil).Addr()
	var bs []*brokersim.Broker
	for range 2 {
		b := brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a", ControllerAddrs: []string{addr},
			NamesrvAddrs: []string{env.ns}, Topics: []string{"TopicTest"}, RetryInterval: 50 * time.Millisecond,
			Log: testLog()})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := b.Start(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Kill)
		bs = append(bs, b)
	}
	env.master, env.slave = bs[0], bs[1]
	// A broker's start ends with a oneway heartbeat: the controller may
	// not have read the slave's yet, and would refuse it as not alive.
	remotingtest.WaitFor(t, "both brokers alive on the controller", func() bool { return env.node.Stats().BrokersAlive == 2 })
	if _, err := env.master.AlterSyncStateSet(context.Background(), []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	// Both registered with the NameServer under their roles.
	deadline := time.Now().Add(time.Minute)
	for {
		r := runArgs(t, "clusterList", "-n", env.ns, "-o", "json")
		if strings.Count(r.stdout, `"brokerName": "broker-a"`) == 2 && strings.Contains(r.stdout, `"brokerId": 0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("brokers not registered with the NameServer: %s %s", r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return env
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

func runArgs(t *testing.T, args ...string) cmdResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runPatient(args, &stdout, &stderr, func(string) string { return "" })
	return cmdResult{code, stdout.String(), stderr.String()}
}

func (r cmdResult) ok(t *testing.T) cmdResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	return r
}

func TestControllerCommands(t *testing.T) {
	env := startCtlEnv(t)
	a := env.ctl

	// getControllerMetaData, as mqadmin prints it.
	got := runArgs(t, "getControllerMetaData", "-a", a).ok(t).stdout
	if want := fmt.Sprintf("\n#ControllerGroup\tgroup1\n#ControllerLeaderId\tn0\n#ControllerLeaderAddress\t%s\n#Peer:\tn0:%s\n", a, a); got != want {
		t.Errorf("getControllerMetaData:\n%q\nwant\n%q", got, want)
	}
	var meta struct {
		Group, ControllerLeaderID string
		IsLeader                  bool
		Peers                     []string
	}
	decode(t, runArgs(t, "getControllerMetaData", "--controllerAddress", a, "-o", "json").ok(t).stdout, &meta)
	if meta.Group != "group1" || !meta.IsLeader || len(meta.Peers) != 1 {
		t.Errorf("json %+v", meta)
	}

	// getSyncStateSet by name and by cluster (through the NameServer).
	want := fmt.Sprintf("\n#brokerName\tbroker-a\n#MasterBrokerId\t1\n#MasterAddr\t%s\n#MasterEpoch\t1\n#SyncStateSetEpoch\t2\n#SyncStateSetNums\t2\n"+
		"\nInSyncReplica:\tReplicaIdentity{brokerName='broker-a', brokerId=1, brokerAddress='%s', alive=true}\n"+
		"\nInSyncReplica:\tReplicaIdentity{brokerName='broker-a', brokerId=2, brokerAddress='%s', alive=true}\n",
		env.master.Addr(), env.master.Addr(), env.slave.Addr())
	if got := runArgs(t, "getSyncStateSet", "-a", a, "-b", "broker-a").ok(t).stdout; got != want {
		t.Errorf("getSyncStateSet:\n%q\nwant\n%q", got, want)
	}
	if got := runArgs(t, "getSyncStateSet", "-a", a, "-c", "DefaultCluster", "-n", env.ns).ok(t).stdout; got != want {
		t.Errorf("getSyncStateSet -c:\n%q\nwant\n%q", got, want)
	}
	if got := runArgs(t, "getSyncStateSet", "-a", a, "-b", "broker-a,ghost").ok(t).stdout; got != "" {
		t.Errorf("-b is one name, not split: %q", got)
	}

	// getBrokerEpoch: 1007 to each broker; the master reports id 0.
	got = runArgs(t, "getBrokerEpoch", "-n", env.ns, "-b", "broker-a").ok(t).stdout
	for _, id := range []string{"0", "2"} {
		if !strings.Contains(got, "\n#brokerId\t"+id+"\n#Epoch: EpochEntry{epoch=1, startOffset=0, endOffset=0}") {
			t.Errorf("getBrokerEpoch lacks broker %s:\n%s", id, got)
		}
	}

	// getControllerConfig and updateControllerConfig.
	got = runArgs(t, "getControllerConfig", "-a", a).ok(t).stdout
	if !strings.HasPrefix(got, "============"+a+"============\n") ||
		!regexp.MustCompile(`(?m)^electMasterMaxRetryCount {26}=  3$`).MatchString(got) {
		t.Errorf("getControllerConfig:\n%s", got)
	}
	if got := runArgs(t, "updateControllerConfig", "-a", a, "-k", "electMasterMaxRetryCount", "-v", "5").ok(t).stdout; got != "update controller config success!["+a+"]\nelectMasterMaxRetryCount : 5\n" {
		t.Errorf("updateControllerConfig: %q", got)
	}
	if data, err := os.ReadFile(env.configStore); err != nil || !strings.Contains(string(data), "electMasterMaxRetryCount=5\n") {
		t.Errorf("not persisted: %v %s", err, data)
	}
	r := runArgs(t, "updateControllerConfig", "-a", a, "-k", "configStorePath", "-v", "/tmp/evil")
	if r.code != exitFail || !strings.Contains(r.stderr, "CODE: 16  DESC: Can not update config in black list.\n") ||
		!strings.Contains(r.stderr, "SubCommandException: UpdateControllerConfigSubCommand command failed") ||
		!strings.Contains(r.stderr, "For more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ") {
		t.Errorf("black list: %d %s", r.code, r.stderr)
	}

	// electMaster: the slave becomes master; both brokers hear of it.
	got = runArgs(t, "electMaster", "-a", a, "-c", "DefaultCluster", "-bn", "broker-a", "-b", "2").ok(t).stdout
	if want := fmt.Sprintf("\n#ClusterName\tDefaultCluster\n#BrokerName\tbroker-a\n#BrokerMasterAddr\t%s\n#MasterEpoch\t2\n#SyncStateSetEpoch\t3\n", env.slave.Addr()); got != want {
		t.Errorf("electMaster:\n%q\nwant\n%q", got, want)
	}
	r = runArgs(t, "electMaster", "-a", a, "-c", "DefaultCluster", "-bn", "broker-a", "-b", "2", "-o", "json")
	if r.code != exitFail || !strings.Contains(r.stderr, "CODE: 2011  DESC: The old master 2 is still alive") {
		t.Errorf("electMaster of the master: %d %s", r.code, r.stderr)
	}
	var el struct {
		MasterBrokerID int64
		Members        []struct{ BrokerID int64 }
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, b := range []*brokersim.Broker{env.master, env.slave} {
		if _, err := b.WaitNotice(ctx, func(n brokersim.Notice) bool { return n.MasterEpoch == 2 }); err != nil {
			t.Fatal(err)
		}
	}
	// The new master takes the old one back into its SyncStateSet.
	if _, err := env.slave.AlterSyncStateSet(ctx, []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	decode(t, runArgs(t, "electMaster", "-a", a, "-c", "DefaultCluster", "-bn", "broker-a", "-b", "1", "-o", "json").ok(t).stdout, &el)
	if el.MasterBrokerID != 1 || len(el.Members) != 2 {
		t.Errorf("electMaster json %+v", el)
	}

	// cleanBrokerMetadata: a living broker is not cleaned without -l.
	r = runArgs(t, "cleanBrokerMetadata", "-a", a, "-bn", "broker-a", "-b", "2", "-c", "DefaultCluster")
	if r.code != exitFail || !strings.Contains(r.stderr, "CODE: 2009  DESC: ") {
		t.Errorf("clean a living broker: %d %s", r.code, r.stderr)
	}
	if r := runArgs(t, "cleanBrokerMetadata", "-a", a, "-bn", "broker-a", "-b", "2"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "clusterName option can not be empty") {
		t.Errorf("without -c and -l: %d %s", r.code, r.stderr)
	}
	env.slave.Kill()
	got = runArgs(t, "cleanBrokerMetadata", "-a", a, "--brokerName", "broker-a", "--brokerControllerIdsToClean", "2", "-l").ok(t).stdout
	if got != "clear broker broker-a metadata from controller success! \n" {
		t.Errorf("cleanBrokerMetadata: %q", got)
	}
	var ss struct {
		BrokerSets []struct {
			InSyncReplicas, NotInSyncReplicas []struct{ BrokerID int64 }
		}
	}
	decode(t, runArgs(t, "getSyncStateSet", "-a", a, "-b", "broker-a", "-o", "json").ok(t).stdout, &ss)
	if len(ss.BrokerSets) != 1 || len(ss.BrokerSets[0].InSyncReplicas)+len(ss.BrokerSets[0].NotInSyncReplicas) != 1 {
		t.Errorf("after the clean: %+v", ss)
	}
}

func decode(t *testing.T, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
}

// Errors before and after a request: usage (2), an unreachable node and a
// follower's 2007 (1, in mqadmin's words).
func TestControllerCommandErrors(t *testing.T) {
	f := func(code int, want string, args ...string) {
		t.Helper()
		r := runArgs(t, args...)
		if r.code != code || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", args, r.code, r.stderr, code, want)
		}
	}
	f(exitUsage, "missing required flag -a", "getControllerMetaData")
	f(exitUsage, "missing required flag -bn", "electMaster", "-a", "127.0.0.1:1", "-c", "C", "-b", "1")
	f(exitUsage, `bad -a address "nohost"`, "getControllerConfig", "-a", "nohost")
	f(exitUsage, "give -b brokerName or -c clusterName", "getSyncStateSet", "-a", "127.0.0.1:1")
	f(exitUsage, "missing required flag -n", "getBrokerEpoch", "-b", "broker-a")
	f(exitUsage, "bad -i", "getSyncStateSet", "-a", "127.0.0.1:1", "-b", "x", "-i", "0")
	port := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		return ln.Addr().String()
	}()
	f(exitFail, "RemotingConnectException: connect to "+port+" failed (controller: connect: connection refused)", "getControllerMetaData", "-a", port)
	if r := runArgs(t, "help", "electMaster"); r.code != 0 || !strings.Contains(r.stdout, "-bn, --brokerName") {
		t.Errorf("help: %d %s", r.code, r.stdout)
	}
	if r := runArgs(t, "help"); !strings.Contains(r.stdout, "getSyncStateSet") {
		t.Error("the command list lacks the controller commands")
	}
	// A node whose group has no quorum answers leader requests 2007.
	addrs := []string{port, port2(t), port2(t)}
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("n%d-%s", i, a))
	}
	m, err := membership.Parse(membership.FromMap(map[string]string{membership.KeyDLedgerPeers: strings.Join(peers, ";"), membership.KeyDLedgerSelfID: "n0"}))
	if err != nil {
		t.Fatal(err)
	}
	sc := ctlserver.DefaultConfig(m, "")
	sc.InMemory, sc.BindAddress, sc.Logger = true, "127.0.0.1", slog.New(slog.NewTextHandler(io.Discard, nil))
	node, err := ctlserver.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer node.Shutdown(context.Background())
	f(exitFail, "knows no controller leader", "electMaster", "-a", port, "-c", "C", "-bn", "b", "-b", "1")
	if r := runArgs(t, "getControllerMetaData", "-a", port); r.code != 0 || !strings.Contains(r.stdout, "#ControllerLeaderId\tnull") {
		t.Errorf("no leader: %d %q", r.code, r.stdout)
	}
}

func port2(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func testLog() *slog.Logger {
	if os.Getenv("NSADMIN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
