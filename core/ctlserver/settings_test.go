// The node's settings over the wire: 1010's body, 1009's answers, the
// run-time settings taking effect, persistence before they do, and a node
// built from the configuration keys.

package ctlserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func lines(text []byte) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		k, v, _ := strings.Cut(l, "=")
		out[k] = v
	}
	return out
}

// 1010's body, 1009's answers and the settings' effect; nothing is
// persisted without a configStorePath.
func TestConfigCodes(t *testing.T) {
	s := single(t, nil)
	w := remotingtest.Dial(t, s.Addr().String())
	r := w.Call(request(codec.GetControllerConfig, 1))
	if r.Code != 0 || r.HasExt || r.Remark != "" || lines(r.Body)["notifyBrokerRoleChanged"] != "true" {
		t.Fatalf("1010: %d %q %s", r.Code, r.Remark, r.Body)
	}
	f := func(body string, code int32, remark string) {
		t.Helper()
		req := request(codec.UpdateControllerConfig, 2)
		if body != "" {
			req.Body = []byte(body)
		}
		r := w.Call(req)
		if r.Code != code || !strings.HasPrefix(r.Remark, remark) || r.HasExt {
			t.Errorf("1009 %q: %d %q ext %v", body, r.Code, r.Remark, r.HasExt)
		}
	}
	f("", 0, "")
	f("# only a comment\n", 0, "")
	f("a=\\u00\n", codec.SystemError, "string2Properties error")
	f("configStorePath=/var/rc/evil-controller.properties\n", codec.NoPermission, "Can not update config in black list.")
	f("controllerDLegerPeers=n0-10.0.0.1:9878\n", codec.NoPermission, "controllerDLegerPeers can only be set in the config file")
	f("electMasterMaxRetryCount=0\n", codec.SystemError, "config update: electMasterMaxRetryCount: bad value: want a positive number")
	if rt := s.runtime(); rt.ElectMasterMaxRetryCount != 3 {
		t.Fatalf("a refused update changed the settings: %+v", rt)
	}
	f("notifyBrokerRoleChanged=false\nelectMasterMaxRetryCount=2\nprocessReadEvent=TRUE\n", 0, "")
	if rt := s.runtime(); rt.NotifyBrokerRoleChanged || rt.ElectMasterMaxRetryCount != 2 || !rt.ProcessReadEvent {
		t.Fatalf("settings after 1009: %+v", rt)
	}
	r = w.Call(request(codec.GetControllerConfig, 3))
	if m := lines(r.Body); m["notifyBrokerRoleChanged"] != "false" || m["electMasterMaxRetryCount"] != "2" ||
		m["isProcessReadEvent"] != "true" || m["processReadEvent"] != "" {
		t.Fatalf("1010 after 1009: %v", m)
	}
}

// With a configStorePath, an accepted update is written there (the
// listing, as Java writes it) before it takes effect.
func TestConfigPersistedOverTheWire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "controller.properties")
	s := single(t, func(c *Config) { c.ConfigStorePath = path })
	w := remotingtest.Dial(t, s.Addr().String())
	update := func(body string) *codec.Command {
		return w.Call(&codec.Command{Code: codec.UpdateControllerConfig, Opaque: 1, Body: []byte(body)})
	}
	if r := update("configStorePath=/var/rc/evil-controller.properties\n"); r.Code != codec.NoPermission ||
		r.Remark != "Can not update config in black list." || r.HasExt {
		t.Fatalf("black list: %d %q ext %v", r.Code, r.Remark, r.HasExt)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a refused update wrote the file: %v", err)
	}
	if r := update("electMasterMaxRetryCount=5\n"); r.Code != codec.Success || r.Remark != "" {
		t.Fatalf("update: %d %q", r.Code, r.Remark)
	}
	addr := s.Addr().String()
	r := w.Call(&codec.Command{Code: codec.GetControllerConfig, Opaque: 2})
	if r.Code != codec.Success || !strings.Contains(string(r.Body), "\nlistenPort="+addr[strings.LastIndexByte(addr, ':')+1:]+"\n") {
		t.Fatalf("1010: %d %s", r.Code, r.Body)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(r.Body), "jraftConfig="+lines(r.Body)["jraftConfig"]+"\n", "", 1); string(data) != want {
		t.Fatalf("persisted\n%s\nwant the listing without jraftConfig\n%s", data, want)
	}
	back, err := properties.Parse(strings.NewReader(string(data)))
	if err != nil || len(back) == 0 {
		t.Fatalf("the file does not read back: %v", err)
	}
}

// A persistence failure is answered without the server's paths, and
// nothing changes; the log says where.
func TestConfigPersistErrorNamesNoPath(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "controller.properties") // under a file: cannot be created
	s := single(t, func(c *Config) { c.ConfigStorePath = path })
	w := remotingtest.Dial(t, s.Addr().String())
	r := w.Call(&codec.Command{Code: codec.UpdateControllerConfig, Opaque: 1, Body: []byte("enableElectUncleanMaster=true\n")})
	if r.Code != codec.SystemError || strings.Contains(r.Remark, "/") || !strings.Contains(r.Remark, "could not be written") ||
		!strings.Contains(r.Remark, "the controller's log") {
		t.Fatalf("code %d remark %q", r.Code, r.Remark)
	}
	if s.runtime().EnableElectUncleanMaster {
		t.Fatal("an update that was not persisted took effect")
	}
}

// A node from the configuration keys: Java's defaults, the keys' values,
// and the embedded node's version.
func TestNodeFromKeys(t *testing.T) {
	c := config.DefaultController()
	ps, err := properties.Parse(strings.NewReader("controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=/srv/ctl\n" +
		"controllerRaftHeartbeatTimeoutMs=100\ncontrollerRaftElectionTimeoutMs=100\ncontrollerRaftLeaderLeaseTimeoutMs=50\n" +
		"serverChannelMaxIdleTimeSeconds=0\nmaxConnections=5\n"))
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
	s, err := New(Config{Controller: *k})
	if err != nil {
		t.Fatal(err)
	}
	if s.version != 0 || s.cfg.StorePath != "/srv/ctl" || s.cfg.IdleTimeout != 0 || s.cfg.MaxConnections != 5 ||
		s.runtime().ElectMasterMaxRetryCount != 3 || s.cfg.NotifyTimeout != DefaultNotifyTimeout {
		t.Fatalf("node %+v version %d", s.cfg, s.version)
	}
	k.Embedded = true
	if s, err = New(Config{Controller: *k}); err != nil {
		t.Fatal(err)
	}
	if s.version != codec.ServerVersion {
		t.Fatalf("embedded version %d", s.version)
	}
}
