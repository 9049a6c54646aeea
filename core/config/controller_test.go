// Tests of the controller keys: Java's shipped files unchanged, defaults,
// warnings, bad values, the environment, the node settings read from them,
// and -p.

package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/raftnode/membership"
)

// Java's distribution/conf/controller/controller-standalone.conf.
const javaStandaloneConf = `controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:9878
controllerDLegerSelfId = n0
controllerStorePath = /home/admin/DledgerController
enableElectUncleanMaster = false
notifyBrokerRoleChanged = true
`

// Java's cluster-3n-namesrv-plugin/namesrv-n1.conf: a NameServer that runs
// the controller.
const javaEmbeddedConf = `#Namesrv config
listenPort = 9876
enableControllerInNamesrv = true

#controller config
controllerDLegerGroup = group1
controllerDLegerPeers = n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858
controllerDLegerSelfId = n1
controllerStorePath = /home/admin/DledgerController
enableElectUncleanMaster = false
notifyBrokerRoleChanged = true
`

func applied(t *testing.T, c *Config, text string) []string {
	t.Helper()
	w, err := c.Apply(parse(t, text))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestJavaControllerConfUnchanged(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	c := DefaultController()
	if w := applied(t, c, javaStandaloneConf); len(w) != 0 {
		t.Fatalf("warnings for Java's own file: %q", w)
	}
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	m := k.Membership
	if m.Style != membership.DLedger || m.Group != "group1" || m.SelfID != "n0" || len(m.Peers) != 1 ||
		m.Self().ServeAddr != "127.0.0.1:9878" {
		t.Fatalf("membership %+v", m)
	}
	if k.StorePath != "/home/admin/DledgerController" || k.Embedded || !k.NotifyBrokerRoleChanged ||
		k.EnableElectUncleanMaster || k.ElectMasterMaxRetryCount != 3 || k.RequestQueueCapacity != 50000 ||
		k.ScanNotActiveBrokerInterval != 5*time.Second || k.ScanInactiveMasterInterval != 5*time.Second ||
		k.IdleTimeout != 120*time.Second || k.BindAddress != "0.0.0.0" || k.ProcessReadEvent || k.RaftHeartbeatTimeout != 0 ||
		k.FrameMaxLength != 16777216 || k.MaxConnections != 10000 {
		t.Fatalf("controller %+v", k)
	}
	if k.ConfigStorePath != "/home/rmq/controller/controller.properties" || k.ConfigBlackList != "configBlackList;configStorePath" {
		t.Fatalf("config store %q black list %q", k.ConfigStorePath, k.ConfigBlackList)
	}
	props := k.Startup
	if props[membership.KeyDLedgerPeers] != "n0-127.0.0.1:9878" || props["configStorePath"] != k.ConfigStorePath {
		t.Fatalf("start-up properties %v", props)
	}
	if _, ok := props["defaultThreadPoolNums"]; ok {
		t.Fatal("a NameServer-only key in a standalone controller's listing")
	}
}

func TestEmbeddedController(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	c := Default()
	if w := applied(t, c, javaEmbeddedConf); len(w) != 0 {
		t.Fatalf("warnings for Java's own file: %q", w)
	}
	if !c.ControllerEnabled() {
		t.Fatal("enableControllerInNamesrv=true not seen")
	}
	// GET_NAMESRV_CONFIG shows the file's keys, as Java's does.
	text := string(c.AppendText(nil))
	for _, line := range []string{"enableControllerInNamesrv=true\n", "controllerDLegerSelfId=n1\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("319 text lacks %q", line)
		}
	}
	if strings.Contains(text, "electMasterMaxRetryCount") {
		t.Error("319 lists a controller default the file does not set")
	}
	k, err := c.Controller(true)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Embedded || k.Membership.Self().ServeAddr != "127.0.0.1:9868" {
		t.Fatalf("embedded %v serve %s", k.Embedded, k.Membership.Self().ServeAddr)
	}
	// The NameServer keeps its own store; the controller Java's default.
	if k.ConfigStorePath != "/home/rmq/controller/controller.properties" || c.ConfigStorePath == k.ConfigStorePath {
		t.Fatalf("controller store %q, NameServer's %q", k.ConfigStorePath, c.ConfigStorePath)
	}
	if props := k.Startup; props["kvConfigPath"] == "" || props["enableControllerInNamesrv"] != "true" {
		t.Fatalf("embedded 1010 lacks the NameServer's keys: %v", props)
	}
	if !strings.Contains(string(c.AppendTextWithController(nil)), "electMasterMaxRetryCount=3\n") {
		t.Error("namesrv -p lacks the controller's defaults")
	}
}

func TestControllerDefaults(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	f := func(text, wantStore string) {
		t.Helper()
		c := DefaultController()
		applied(t, c, text)
		k, err := c.Controller(false)
		if err != nil {
			t.Fatal(err)
		}
		if k.StorePath != wantStore {
			t.Errorf("store %q, want %q", k.StorePath, wantStore)
		}
	}
	f("controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\n", filepath.Join("/home/rmq", "DLedgerController"))
	// jRaft with every key at Java's default.
	f("controllerType=jRaft\n", filepath.Join("/home/rmq", "jRaftController"))
}

func TestControllerKeysChecked(t *testing.T) {
	t.Parallel()
	base := "controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\n"
	// Malformed values stop Apply with the key and line named.
	for _, text := range []string{
		"electMasterMaxRetryCount=three\n",
		"enableElectUncleanMaster=yes\n",
		"scanInactiveMasterInterval=5s\n",
		"isProcessReadEvent=1\n",
	} {
		c := DefaultController()
		_, err := c.Apply(parse(t, text))
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(text, "=", 2)[0]) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: err %v", text, err)
		}
	}
	// Values that parse but cannot work stop Controller.
	for text, want := range map[string]string{
		"electMasterMaxRetryCount=0\n":                                                 "electMasterMaxRetryCount=0",
		"scanInactiveMasterInterval=0\n":                                               "scanInactiveMasterInterval=0",
		"controllerRequestThreadPoolQueueCapacity=-1\n":                                "controllerRequestThreadPoolQueueCapacity=-1",
		"controllerRaftHeartbeatTimeoutMs=2\n":                                         "controllerRaftHeartbeatTimeoutMs=2",
		"controllerRaftHeartbeatTimeoutMs=1000\ncontrollerRaftElectionTimeoutMs=200\n": "below the heartbeat timeout",
		"controllerRaftLeaderLeaseTimeoutMs=900\n":                                     "above the heartbeat timeout",
		"controllerDLegerSelfId=n9\n":                                                  "n9",
	} {
		c := DefaultController()
		applied(t, c, base+text)
		if _, err := c.Controller(false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want one naming %q", text, err, want)
		}
	}
	c := DefaultController()
	applied(t, c, "controllerDLegerSelfId=n0\n")
	if _, err := c.Controller(false); err == nil || !strings.Contains(err.Error(), "controllerDLegerPeers of ControllerConfig is null or empty") {
		t.Errorf("no peers: %v", err)
	}
	// Tighter raft timings that raft accepts.
	c = DefaultController()
	applied(t, c, base+"controllerRaftHeartbeatTimeoutMs=100\ncontrollerRaftElectionTimeoutMs=100\ncontrollerRaftLeaderLeaseTimeoutMs=50\n")
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	if k.RaftHeartbeatTimeout != 100*time.Millisecond || k.RaftLeaderLeaseTimeout != 50*time.Millisecond {
		t.Fatalf("raft %v %v", k.RaftHeartbeatTimeout, k.RaftLeaderLeaseTimeout)
	}
	// A heartbeat timeout set alone takes the lease with it, below the
	// default as above it (0 stays 0: raftnode derives it).
	for _, text := range []string{"controllerRaftHeartbeatTimeoutMs=200\n",
		"controllerRaftHeartbeatTimeoutMs=1500\ncontrollerRaftElectionTimeoutMs=1500\n"} {
		c := DefaultController()
		applied(t, c, base+text)
		k, err := c.Controller(false)
		if err != nil {
			t.Errorf("%q: %v", text, err)
		} else if k.RaftLeaderLeaseTimeout != 0 {
			t.Errorf("%q: lease %v, want 0 (raftnode's default)", text, k.RaftLeaderLeaseTimeout)
		}
	}
}

func TestControllerWarnings(t *testing.T) {
	t.Parallel()
	c := DefaultController()
	w := applied(t, c, "controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\n"+
		"metricsExporterType=PROM\njRaftElectionTimeoutMs=2000\njRaftSomeTuning=1\ndLedgerHeartbeatInterval=2000\ncontrolerTypo=1\n")
	if len(w) != 5 {
		t.Fatalf("warnings %q", w)
	}
	for i, want := range []string{"metricsExporterType (line 3) is a Java controller setting", "jRaftElectionTimeoutMs (line 4) is a Java controller setting",
		"jRaftSomeTuning (line 5) is not a setting of rocketns's controller", "dLedgerHeartbeatInterval (line 6) is not a setting",
		`unknown key "controlerTypo"`} {
		if !strings.Contains(w[i], want) {
			t.Errorf("warning %d %q, want %q", i, w[i], want)
		}
	}
	// Kept and listed.
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	if p := k.Startup; p["metricsExporterType"] != "PROM" || p["jRaftSomeTuning"] != "1" {
		t.Fatalf("kept keys %v", p)
	}
}

func TestControllerFromEnvironment(t *testing.T) {
	t.Parallel()
	env := []string{"ROCKETNS_CONTROLLER_DLEGER_PEERS=n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858",
		"ROCKETNS_CONTROLLER_DLEGER_SELF_ID=n2", "ROCKETNS_ENABLE_ELECT_UNCLEAN_MASTER=true",
		"ROCKETNS_IS_PROCESS_READ_EVENT=true", "ROCKETNS_ENABLE_CONTROLLER_IN_NAMESRV=true"}
	props, err := FromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	if _, err := c.Apply(props); err != nil {
		t.Fatal(err)
	}
	k, err := c.Controller(true)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ControllerEnabled() || k.Membership.SelfID != "n2" || !k.EnableElectUncleanMaster || !k.ProcessReadEvent {
		t.Fatalf("from the environment: %+v", k)
	}
	if _, err := FromEnv([]string{"ROCKETNS_CONTROLLER_DLEDGER_PEERS=x"}); err == nil {
		t.Error("a misspelt controller variable was accepted")
	}
}

func TestControllerPrint(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	c := DefaultController()
	applied(t, c, javaStandaloneConf+"serverWorkerThreads=16\n")
	text := string(c.AppendControllerText(nil))
	for _, line := range []string{"controllerDLegerPeers=n0-127.0.0.1:9878\n", "electMasterMaxRetryCount=3\n",
		"processReadEvent=false\n", "controllerStorePath=/home/admin/DledgerController\n", "bindAddress=0.0.0.0\n",
		"configStorePath=/home/rmq/controller/controller.properties\n", "jRaftInitConf=localhost:9880,localhost:9881,localhost:9882\n",
		"serverWorkerThreads=16\n", "logLevel=info\n", "metricsExporterType=DISABLE\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("controller -p lacks %q", line)
		}
	}
	for _, key := range []string{"kvConfigPath", "orderMessageEnable", "defaultThreadPoolNums", "isProcessReadEvent"} {
		if strings.Contains(text, "\n"+key+"=") {
			t.Errorf("controller -p lists %s", key)
		}
	}
}
