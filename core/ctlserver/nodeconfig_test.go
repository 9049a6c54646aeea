// The node-local configuration: the 1010 listing, 1009's black list, its
// run-time keys and their effect, over the wire too.

package ctlserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func memoryConfig(t *testing.T, extra map[string]string) (*MemoryConfig, Config) {
	cfg := DefaultConfig(dledger(t, []string{"127.0.0.1:9878"}, 0), "/data/ctl")
	cfg.withDefaults()
	return NewMemoryConfig(&cfg, extra), cfg
}

func lines(text []byte) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		k, v, _ := strings.Cut(l, "=")
		out[k] = v
	}
	return out
}

// The listing is Java's 46 keys, sorted, one key=value\n line each, with
// this node's values.
func TestMemoryConfigText(t *testing.T) {
	mc, _ := memoryConfig(t, map[string]string{"rocketmqHome": "/opt/rmq", "configStorePath": "/etc/ctl.properties"})
	text := mc.Text()
	if !strings.HasSuffix(string(text), "\n") {
		t.Fatal("the listing does not end with a newline")
	}
	var keys []string
	for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		k, _, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("line %q", l)
		}
		keys = append(keys, k)
	}
	if len(keys) != 46 {
		t.Errorf("%d keys, Java lists 46: %v", len(keys), keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Errorf("keys out of order: %s before %s", keys[i-1], keys[i])
		}
	}
	m := lines(text)
	for k, v := range map[string]string{
		"controllerDLegerPeers": "n0-127.0.0.1:9878", "controllerDLegerSelfId": "n0", "controllerDLegerGroup": "group1",
		"listenPort": "9878", "bindAddress": "0.0.0.0", "controllerStorePath": "/data/ctl", "rocketmqHome": "/opt/rmq",
		"configStorePath": "/etc/ctl.properties", "scanNotActiveBrokerInterval": "5000", "isProcessReadEvent": "false",
		"notifyBrokerRoleChanged": "true", "electMasterMaxRetryCount": "3", "controllerType": "DLedger",
		"serverChannelMaxIdleTimeSeconds": "120", "metricsLabel": "",
	} {
		if m[k] != v {
			t.Errorf("%s=%q, want %q", k, m[k], v)
		}
	}
}

func TestMemoryConfigUpdate(t *testing.T) {
	mc, _ := memoryConfig(t, map[string]string{"configBlackList": "configBlackList;configStorePath;scanInactiveMasterInterval"})
	f := func(props []Property, blackListed bool, failed bool) {
		t.Helper()
		before := string(mc.Text())
		_, err := mc.Update(props)
		if blackListed != errors.Is(err, ErrBlackListed) || failed != (err != nil) {
			t.Fatalf("Update(%v): %v", props, err)
		}
		if err != nil && string(mc.Text()) != before {
			t.Fatalf("a refused update changed the listing")
		}
	}
	for _, k := range []string{"configBlackList", "configStorePath", "rocketmqHome", "scanInactiveMasterInterval"} {
		f([]Property{{Key: "electMasterMaxRetryCount", Value: "7"}, {Key: k, Value: "x"}}, true, true)
	}
	if mc.Runtime().ElectMasterMaxRetryCount != 3 {
		t.Fatal("a refused update changed a setting")
	}
	f([]Property{{Key: "notifyBrokerRoleChanged", Value: "false"}, {Key: "electMasterMaxRetryCount", Value: "not a number"}}, false, true)
	if !mc.Runtime().NotifyBrokerRoleChanged {
		t.Fatal("a refused update changed a setting")
	}
	f([]Property{{Key: "notifyBrokerRoleChanged", Value: "FALSE"}, {Key: "enableElectUncleanMaster", Value: "TRUE"}, {Key: "electMasterMaxRetryCount", Value: " 5 "},
		{Key: "processReadEvent", Value: "true"}, {Key: "noSuchKey", Value: "1"}}, false, false)
	rt := mc.Runtime()
	if rt.NotifyBrokerRoleChanged || !rt.EnableElectUncleanMaster || rt.ElectMasterMaxRetryCount != 5 || !rt.ProcessReadEvent {
		t.Fatalf("runtime %+v", rt)
	}
	m := lines(mc.Text())
	if m["electMasterMaxRetryCount"] != " 5 " || m["enableElectUncleanMaster"] != "TRUE" || m["isProcessReadEvent"] != "true" {
		t.Fatalf("listing after the update: %v", m)
	}
	if _, ok := m["noSuchKey"]; ok {
		t.Fatal("an unknown key was added")
	}
	if _, ok := m["processReadEvent"]; ok {
		t.Fatal("the bean name was listed beside the field name")
	}
}

// Over the wire: 1010's body, 1009's answers and the settings' effect.
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
		if r.Code != code || r.Remark != remark || r.HasExt {
			t.Errorf("1009 %q: %d %q ext %v", body, r.Code, r.Remark, r.HasExt)
		}
	}
	f("", 0, "")
	f("# only a comment\n", 0, "")
	f("configStorePath=/var/rc/evil-controller.properties\n", codec.NoPermission, "Can not update config in black list.")
	f("notifyBrokerRoleChanged=false\nelectMasterMaxRetryCount=2\n", 0, "")
	if rt := s.runtime(); rt.NotifyBrokerRoleChanged || rt.ElectMasterMaxRetryCount != 2 {
		t.Fatalf("settings after 1009: %+v", rt)
	}
	r = w.Call(request(codec.GetControllerConfig, 3))
	if m := lines(r.Body); m["notifyBrokerRoleChanged"] != "false" || m["electMasterMaxRetryCount"] != "2" {
		t.Fatalf("1010 after 1009: %v", m)
	}
}

// A ConfigStore's refusal other than the black list is SYSTEM_ERROR with
// its text.
func TestConfigStoreRefusal(t *testing.T) {
	s := single(t, func(c *Config) { c.Settings = refusingStore{} })
	req := request(codec.UpdateControllerConfig, 1)
	req.Body = []byte("a=b\n")
	if r := call(t, s, req); r.Code != codec.SystemError || r.Remark != "read-only" {
		t.Fatalf("1009: %d %q", r.Code, r.Remark)
	}
	if r := call(t, s, request(codec.GetControllerConfig, 2)); string(r.Body) != "a=b\n" {
		t.Fatalf("1010: %q", r.Body)
	}
}

type refusingStore struct{}

func (refusingStore) Text() []byte { return []byte("a=b\n") }
func (refusingStore) Update([]Property) (RuntimeSettings, error) {
	return RuntimeSettings{}, errors.New("read-only")
}
func (refusingStore) Runtime() RuntimeSettings { return RuntimeSettings{NotifyBrokerRoleChanged: true} }
