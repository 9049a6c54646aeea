// Tests of the persisted ConfigStore and of FromConfig: Java's 1010
// listing, the refusals, all-or-nothing updates persisted before they
// apply, the codes 1009 answers over the wire, and a node's Config from
// the Java keys.

package ctlserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// fromKeys reads a standalone node's Java keys as the controller mode does.
func fromKeys(t *testing.T, text string) *config.Controller {
	t.Helper()
	c := config.DefaultController()
	ps, err := properties.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ps); err != nil {
		t.Fatal(err)
	}
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testStore is the store of a one-node controller on port 28878 whose
// config file is under a temporary directory.
func testStore(t *testing.T, extra string) (*FileConfig, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "controller", "controller.properties")
	k := fromKeys(t, "controllerDLegerGroup=group1\ncontrollerDLegerPeers=n0-127.0.0.1:28878\ncontrollerDLegerSelfId=n0\n"+
		"configStorePath="+path+"\n"+extra)
	sc := FromConfig(k)
	return NewFileConfig(&sc, k.StartupProperties(), k.ConfigStorePath, k.ConfigBlackList), path
}

func props(kv ...string) []properties.Property {
	var out []properties.Property
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, properties.Property{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestFileConfigText(t *testing.T) {
	st, _ := testStore(t, "rocketmqHome=/opt/rocketmq\n")
	text := string(st.Text())
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] >= lines[i] {
			t.Fatalf("not sorted: %q before %q", lines[i-1], lines[i])
		}
	}
	// The keys of a Java 5.3.3 single-node DLedger controller (§6.2).
	for _, line := range []string{"bindAddress=0.0.0.0", "configBlackList=configBlackList;configStorePath",
		"controllerDLegerGroup=group1", "controllerDLegerPeers=n0-127.0.0.1:28878", "controllerDLegerSelfId=n0",
		"controllerRequestThreadPoolQueueCapacity=50000", "controllerThreadPoolNums=16", "controllerType=DLedger",
		"electMasterMaxRetryCount=3", "enableElectUncleanMaster=false", "isProcessReadEvent=false", "listenPort=28878",
		"mappedFileSize=1073741824", "metricsExporterType=DISABLE", "notifyBrokerRoleChanged=true",
		"scanInactiveMasterInterval=5000", "scanNotActiveBrokerInterval=5000", "serverChannelMaxIdleTimeSeconds=120",
		"rocketmqHome=/opt/rocketmq", "metricsGrpcExporterHeader=", "serverWorkerThreads=8"} {
		found := false
		for _, l := range lines {
			found = found || l == line
		}
		if !found {
			t.Errorf("1010 lacks %q", line)
		}
	}
	if strings.Contains(text, "\nprocessReadEvent=") || strings.Contains(text, "kvConfigPath") {
		t.Errorf("1010 lists a key Java's does not:\n%s", text)
	}
}

func TestFileConfigUpdate(t *testing.T) {
	st, path := testStore(t, "")
	f := func(want error, kv ...string) {
		t.Helper()
		before := string(st.Text())
		rt, err := st.Update(props(kv...))
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Fatalf("%v: err %v, want %v", kv, err, want)
		}
		if want == nil {
			return
		}
		if string(st.Text()) != before || rt != st.Runtime() {
			t.Fatalf("%v: a refused update changed something", kv)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%v: a refused update wrote the file", kv)
		}
	}
	// The black list comes first, whatever else the body holds.
	f(ErrBlackListed, "electMasterMaxRetryCount", "5", "configStorePath", "/tmp/evil.properties")
	f(ErrBlackListed, "configBlackList", "")
	f(ErrBlackListed, "rocketmqHome", "/tmp")
	// No path, peer or port, and nothing unknown.
	for _, key := range []string{"controllerStorePath", "controllerDLegerPeers", "controllerDLegerSelfId", "listenPort",
		"scanInactiveMasterInterval", "bindAddress", "noSuchKey"} {
		f(ErrNotRuntime, "enableElectUncleanMaster", "true", key, "x")
	}
	if _, err := st.Update(props("controllerDLegerPeers", "n0-evil:1")); err == nil ||
		!strings.Contains(err.Error(), "controllerDLegerPeers can only be set in the config file") {
		t.Fatalf("refusal text: %v", err)
	}
	// A value that does not parse refuses the whole body.
	for _, kv := range [][]string{{"enableElectUncleanMaster", "true", "notifyBrokerRoleChanged", "yes"},
		{"electMasterMaxRetryCount", "0"}, {"electMasterMaxRetryCount", "x"}} {
		before := st.Runtime()
		if _, err := st.Update(props(kv...)); err == nil || errors.Is(err, ErrNotRuntime) {
			t.Fatalf("%v: err %v", kv, err)
		}
		if st.Runtime() != before {
			t.Fatalf("%v: applied in part", kv)
		}
	}

	rt, err := st.Update(props("enableElectUncleanMaster", "true", "processReadEvent", "TRUE", "electMasterMaxRetryCount", " 5 "))
	if err != nil {
		t.Fatal(err)
	}
	want := RuntimeSettings{NotifyBrokerRoleChanged: true, EnableElectUncleanMaster: true, ElectMasterMaxRetryCount: 5, ProcessReadEvent: true}
	if rt != want || st.Runtime() != want {
		t.Fatalf("runtime %+v, want %+v", rt, want)
	}
	text := string(st.Text())
	for _, line := range []string{"enableElectUncleanMaster=true\n", "isProcessReadEvent=true\n", "electMasterMaxRetryCount=5\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("1010 after the update lacks %q", line)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file is the listing, as properties that read back the same.
	back, err := properties.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, p := range back {
		m[p.Key] = p.Value
	}
	if m["electMasterMaxRetryCount"] != "5" || m["controllerDLegerPeers"] != "n0-127.0.0.1:28878" || m["jraftConfig"] != "" {
		t.Fatalf("persisted %v", m)
	}
	// A second update keeps the previous file as .bak.
	if _, err := st.Update(props("notifyBrokerRoleChanged", "false")); err != nil {
		t.Fatal(err)
	}
	if bak, err := os.ReadFile(path + ".bak"); err != nil || string(bak) != string(data) {
		t.Fatalf(".bak %q %v", bak, err)
	}
}

func TestFileConfigCannotPersist(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := testStore(t, "")
	st.path = filepath.Join(blocker, "controller.properties") // under a file: cannot be created
	before := st.Runtime()
	if _, err := st.Update(props("enableElectUncleanMaster", "true")); err == nil || !strings.Contains(err.Error(), "persist config") {
		t.Fatalf("err %v", err)
	}
	if st.Runtime() != before || strings.Contains(string(st.Text()), "enableElectUncleanMaster=true") {
		t.Fatal("an update that was not persisted took effect")
	}
}

// Over the wire: the codes and remarks of 1009, and 1010's body.
func TestFileConfigOverTheWire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "controller.properties")
	s := single(t, func(c *Config) {
		c.Settings = NewFileConfig(c, map[string]string{"rocketmqHome": ""}, path, "configBlackList;configStorePath")
	})
	w := remotingtest.Dial(t, s.Addr().String())
	update := func(body string) *codec.Command {
		return w.Call(&codec.Command{Code: codec.UpdateControllerConfig, Opaque: 1, Body: []byte(body)})
	}
	if r := update("configStorePath=/var/rc/evil-controller.properties\n"); r.Code != codec.NoPermission ||
		r.Remark != "Can not update config in black list." || r.HasExt {
		t.Fatalf("black list: %d %q ext %v", r.Code, r.Remark, r.HasExt)
	}
	if r := update("controllerDLegerPeers=n0-10.0.0.1:9878\n"); r.Code != codec.NoPermission || !strings.Contains(r.Remark, "can only be set in the config file") {
		t.Fatalf("peers: %d %q", r.Code, r.Remark)
	}
	if r := update("electMasterMaxRetryCount=x\n"); r.Code != codec.SystemError {
		t.Fatalf("bad value: %d %q", r.Code, r.Remark)
	}
	if r := update("electMasterMaxRetryCount=3\n"); r.Code != codec.Success || r.Remark != "" {
		t.Fatalf("update: %d %q", r.Code, r.Remark)
	}
	addr := s.Addr().String()
	r := w.Call(&codec.Command{Code: codec.GetControllerConfig, Opaque: 2})
	if r.Code != codec.Success || !strings.Contains(string(r.Body), "\nlistenPort="+addr[strings.LastIndexByte(addr, ':')+1:]+"\n") {
		t.Fatalf("1010: %d %s", r.Code, r.Body)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("not persisted: %v", err)
	}
}

// A node's Config from Java's keys: Java's defaults, and the embedded
// node's version.
func TestFromConfig(t *testing.T) {
	k := fromKeys(t, "controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=/srv/ctl\n"+
		"controllerRaftHeartbeatTimeoutMs=100\ncontrollerRaftElectionTimeoutMs=100\ncontrollerRaftLeaderLeaseTimeoutMs=50\n"+
		"serverChannelMaxIdleTimeSeconds=0\nmaxConnections=5\n")
	sc := FromConfig(k)
	if sc.StoreDir != "/srv/ctl" || sc.ReplyVersion != 0 || !sc.NotifyBrokerRoleChanged || sc.EnableElectUncleanMaster ||
		sc.ElectMasterMaxRetryCount != 3 || sc.RequestQueueCapacity != 50000 || sc.ScanNotActiveBrokerInterval != 5*time.Second ||
		sc.ScanInactiveMasterInterval != 5*time.Second || sc.IdleTimeout != -1 || sc.BindAddress != "0.0.0.0" ||
		sc.ProcessReadEvent || sc.MaxConnections != 5 || sc.Raft.HeartbeatTimeout != 100*time.Millisecond ||
		sc.Raft.LeaderLeaseTimeout != 50*time.Millisecond {
		t.Fatalf("config %+v", sc)
	}
	if _, err := New(sc); err != nil {
		t.Fatal(err)
	}
	k.Embedded = true
	if sc := FromConfig(k); sc.ReplyVersion != codec.ServerVersion {
		t.Fatalf("embedded version %d", sc.ReplyVersion)
	}
}

// A persistence failure is answered without the server's paths; the log
// says where.
func TestFileConfigPersistErrorNamesNoPath(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "controller.properties") // under a file: cannot be created
	s := single(t, func(c *Config) {
		c.Settings = NewFileConfig(c, map[string]string{"rocketmqHome": ""}, path, "configBlackList;configStorePath")
	})
	w := remotingtest.Dial(t, s.Addr().String())
	r := w.Call(&codec.Command{Code: codec.UpdateControllerConfig, Opaque: 1, Body: []byte("electMasterMaxRetryCount=3\n")})
	if r.Code != codec.SystemError || strings.Contains(r.Remark, "/") || !strings.Contains(r.Remark, "could not be written") {
		t.Fatalf("code %d remark %q", r.Code, r.Remark)
	}
}
