// Tests of the controller's persisted config: Java's 1010 listing, the
// refusals, all-or-nothing updates persisted before they apply, and the
// codes 1009 answers over the wire.

package config

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/ctlserver"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// testStore is the store of a one-node controller on port 28878 whose
// config file is under a temporary directory.
func testStore(t *testing.T, extra string) (*ControllerStore, *Controller, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "controller", "controller.properties")
	c := DefaultController()
	applied(t, c, "controllerDLegerGroup=group1\ncontrollerDLegerPeers=n0-127.0.0.1:28878\ncontrollerDLegerSelfId=n0\n"+
		"configStorePath="+path+"\n"+extra)
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	sc := k.ServerConfig()
	return NewControllerStore(k, &sc), k, path
}

func props(kv ...string) []properties.Property {
	var out []properties.Property
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, properties.Property{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestControllerStoreText(t *testing.T) {
	st, _, _ := testStore(t, "rocketmqHome=/opt/rocketmq\n")
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

func TestControllerStoreUpdate(t *testing.T) {
	st, _, path := testStore(t, "")
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
	f(ctlserver.ErrBlackListed, "electMasterMaxRetryCount", "5", "configStorePath", "/tmp/evil.properties")
	f(ctlserver.ErrBlackListed, "configBlackList", "")
	f(ctlserver.ErrBlackListed, "rocketmqHome", "/tmp")
	// No path, peer or port, and nothing unknown.
	for _, key := range []string{"controllerStorePath", "controllerDLegerPeers", "controllerDLegerSelfId", "listenPort",
		"scanInactiveMasterInterval", "bindAddress", "noSuchKey"} {
		f(ctlserver.ErrNotRuntime, "enableElectUncleanMaster", "true", key, "x")
	}
	if _, err := st.Update(props("controllerDLegerPeers", "n0-evil:1")); err == nil ||
		!strings.Contains(err.Error(), "controllerDLegerPeers can only be set in the config file") {
		t.Fatalf("refusal text: %v", err)
	}
	// A value that does not parse refuses the whole body.
	for _, kv := range [][]string{{"enableElectUncleanMaster", "true", "notifyBrokerRoleChanged", "yes"},
		{"electMasterMaxRetryCount", "0"}, {"electMasterMaxRetryCount", "x"}} {
		before := st.Runtime()
		if _, err := st.Update(props(kv...)); err == nil || errors.Is(err, ctlserver.ErrNotRuntime) {
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
	want := ctlserver.RuntimeSettings{NotifyBrokerRoleChanged: true, EnableElectUncleanMaster: true, ElectMasterMaxRetryCount: 5, ProcessReadEvent: true}
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

func TestControllerStoreCannotPersist(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, _ := testStore(t, "")
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
func TestControllerStoreOverTheWire(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "controller.properties")
	c := DefaultController()
	applied(t, c, "controllerDLegerPeers=n0-"+addr+"\ncontrollerDLegerSelfId=n0\nconfigStorePath="+path+"\n")
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	sc := k.ServerConfig()
	sc.InMemory, sc.BindAddress = true, "127.0.0.1"
	sc.Settings = NewControllerStore(k, &sc)
	sc.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	node, err := ctlserver.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	w := remotingtest.Dial(t, addr)
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
	r := w.Call(&codec.Command{Code: codec.GetControllerConfig, Opaque: 2})
	if r.Code != codec.Success || !strings.Contains(string(r.Body), "\nlistenPort="+addr[strings.LastIndexByte(addr, ':')+1:]+"\n") {
		t.Fatalf("1010: %d %s", r.Code, r.Body)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("not persisted: %v", err)
	}
}
