// Tests of the controller node's settings as 1010 lists them and 1009
// changes them: Java's listing, the checks 318 runs, all or nothing, and
// persistence before anything takes effect.

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
)

// node is the settings of a one-node standalone controller on port 28878
// read from text, persisting under a temporary directory.
func node(t *testing.T, text string) (*Controller, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "controller", "controller.properties")
	c := DefaultController()
	applied(t, c, "controllerDLegerGroup=group1\ncontrollerDLegerPeers=n0-127.0.0.1:28878\ncontrollerDLegerSelfId=n0\n"+
		"configStorePath="+path+"\n"+text)
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	return k, path
}

func listing(k *Controller) map[string]string {
	m := map[string]string{}
	for _, p := range k.Properties() {
		m[p.Key] = p.Value
	}
	return m
}

// The listing is a Java 5.3.3 single-node DLedger controller's 46 keys,
// sorted, with this node's values.
func TestControllerListing(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	k, path := node(t, "rocketmqHome=/opt/rocketmq\n")
	var err error
	text := string(k.AppendText(nil))
	var keys []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		key, _, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("line %q", l)
		}
		keys = append(keys, key)
	}
	if len(keys) != 46 {
		t.Errorf("%d keys, Java lists 46: %v", len(keys), keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Errorf("keys out of order: %s before %s", keys[i-1], keys[i])
		}
	}
	m := listing(k)
	for key, v := range map[string]string{
		"bindAddress": "0.0.0.0", "configBlackList": "configBlackList;configStorePath", "configStorePath": path,
		"controllerDLegerGroup": "group1", "controllerDLegerPeers": "n0-127.0.0.1:28878", "controllerDLegerSelfId": "n0",
		"controllerRequestThreadPoolQueueCapacity": "50000", "controllerStorePath": "/home/rmq/DLedgerController",
		"controllerThreadPoolNums": "16", "controllerType": "DLedger", "electMasterMaxRetryCount": "3",
		"enableElectUncleanMaster": "false", "isProcessReadEvent": "false", "listenPort": "28878",
		"mappedFileSize": "1073741824", "metricsExporterType": "DISABLE", "metricsGrpcExporterHeader": "",
		"notifyBrokerRoleChanged": "true", "rocketmqHome": "/opt/rocketmq", "scanInactiveMasterInterval": "5000",
		"scanNotActiveBrokerInterval": "5000", "serverChannelMaxIdleTimeSeconds": "120", "serverWorkerThreads": "8",
	} {
		if m[key] != v {
			t.Errorf("%s=%q, want %q", key, m[key], v)
		}
	}
	if !strings.HasPrefix(m["jraftConfig"], "org.apache.rocketmq.common.JraftConfig@") {
		t.Errorf("jraftConfig=%q", m["jraftConfig"])
	}
	for _, key := range []string{"processReadEvent", "kvConfigPath", "jRaftGroupId", "controllerMaxBrokerSets", "logLevel"} {
		if _, ok := m[key]; ok {
			t.Errorf("1010 lists %s, which Java's does not", key)
		}
	}
	// Keys of the start-up file are listed as written; the node's own
	// settings win over them.
	k, _ = node(t, "serverWorkerThreads=16\nprocessReadEvent=TRUE\ncontrollerMaxBrokerSets=10\nfoo=bar\nelectMasterMaxRetryCount= 4\n")
	m = listing(k)
	for key, v := range map[string]string{"serverWorkerThreads": "16", "processReadEvent": "TRUE", "isProcessReadEvent": "true",
		"controllerMaxBrokerSets": "10", "foo": "bar", "electMasterMaxRetryCount": "4"} {
		if m[key] != v {
			t.Errorf("%s=%q, want %q", key, m[key], v)
		}
	}
	// jRaft style lists none of the DLedger keys Java leaves null.
	c := DefaultController()
	applied(t, c, "controllerType=jRaft\njRaftInitConf=127.0.0.1:28880\njRaftServerId=127.0.0.1:28880\njRaftControllerRPCAddr=127.0.0.1:28878\n")
	if k, err = c.Controller(false); err != nil {
		t.Fatal(err)
	}
	if m := listing(k); m["controllerType"] != "jRaft" || m["listenPort"] != "28878" || m["controllerStorePath"] != "/home/rmq/jRaftController" {
		t.Errorf("jRaft listing %v", m)
	} else if _, ok := m["controllerDLegerPeers"]; ok {
		t.Errorf("jRaft listing has DLedger keys: %v", m)
	}
}

// 1009 runs 318's checks with the controller's keys and black list: every
// key before anything changes, the black list first.
func TestControllerRuntimeUpdate(t *testing.T) {
	k, path := node(t, "configBlackList=configBlackList;configStorePath;enableElectUncleanMaster\n")
	f := func(want error, kv ...string) {
		t.Helper()
		var props []properties.Property
		for i := 0; i+1 < len(kv); i += 2 {
			props = append(props, properties.Property{Key: kv[i], Value: kv[i+1]})
		}
		n, err := k.RuntimeUpdate(props)
		if !errors.Is(err, want) || n != nil {
			t.Fatalf("%v: %v, want %v", kv, err, want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%v: a refused update wrote the file", kv)
		}
	}
	for _, key := range []string{"configBlackList", "configStorePath", "rocketmqHome", "enableElectUncleanMaster"} {
		f(ErrBlackListed, "electMasterMaxRetryCount", "5", key, "x")
	}
	// No path, peer or port, nothing unknown, and no NameServer key.
	for _, key := range []string{"controllerStorePath", "controllerDLegerPeers", "listenPort", "scanInactiveMasterInterval",
		"bindAddress", "noSuchKey", "kvConfigPath", "orderMessageEnable", "mappedFileSize"} {
		f(ErrNotRuntime, "notifyBrokerRoleChanged", "true", key, "x")
	}
	for _, kv := range [][]string{{"notifyBrokerRoleChanged", "false", "processReadEvent", "yes"},
		{"electMasterMaxRetryCount", "0"}, {"electMasterMaxRetryCount", "x"}, {"isProcessReadEvent", ""}} {
		f(ErrBadValue, kv...)
	}
	n, err := k.RuntimeUpdate([]properties.Property{{Key: "notifyBrokerRoleChanged", Value: "FALSE"}, {Key: "processReadEvent", Value: "true"},
		{Key: "electMasterMaxRetryCount", Value: " 5 "}})
	if err != nil {
		t.Fatal(err)
	}
	if n.NotifyBrokerRoleChanged || !n.ProcessReadEvent || n.ElectMasterMaxRetryCount != 5 {
		t.Fatalf("updated %+v", n)
	}
	if !k.NotifyBrokerRoleChanged || k.ProcessReadEvent || k.ElectMasterMaxRetryCount != 3 {
		t.Fatalf("the original changed: %+v", k)
	}
	if m := listing(n); m["notifyBrokerRoleChanged"] != "false" || m["isProcessReadEvent"] != "true" || m["electMasterMaxRetryCount"] != "5" {
		t.Fatalf("listing after the update: %v", m)
	}
	// Java's field name works too.
	if n, err = n.RuntimeUpdate([]properties.Property{{Key: "isProcessReadEvent", Value: "false"}}); err != nil || n.ProcessReadEvent {
		t.Fatalf("isProcessReadEvent: %v %+v", err, n)
	}
}

// The listing is persisted as Java persists it, atomically, the previous
// file kept; a file that no longer parses is left alone.
func TestControllerPersistUpdate(t *testing.T) {
	k, path := node(t, "")
	n, err := k.RuntimeUpdate([]properties.Property{{Key: "electMasterMaxRetryCount", Value: "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PersistUpdate(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []properties.Property
	for _, p := range n.Properties() {
		if p.Key != "jraftConfig" {
			want = append(want, p)
		}
	}
	if string(data) != string(properties.Append(nil, want)) {
		t.Fatalf("persisted\n%s\nwant\n%s", data, properties.Append(nil, want))
	}
	n2, err := n.RuntimeUpdate([]properties.Property{{Key: "notifyBrokerRoleChanged", Value: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n2.PersistUpdate(); err != nil {
		t.Fatal(err)
	}
	if bak, err := os.ReadFile(path + ".bak"); err != nil || string(bak) != string(data) {
		t.Fatalf(".bak %q %v", bak, err)
	}
	if now, _ := os.ReadFile(path); string(now) != strings.Replace(string(data), "notifyBrokerRoleChanged=true\n", "notifyBrokerRoleChanged=false\n", 1) {
		t.Fatalf("second update:\n%s", now)
	}
	if err := os.WriteFile(path, []byte("a=\\u00zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = n.PersistUpdate()
	if !errors.Is(err, ErrNotPersisted) {
		t.Fatalf("a file that does not parse: %v", err)
	}
	if code, remark := Refusal(err); code != codec.SystemError || strings.Contains(remark, "/") || !strings.Contains(remark, "controller's log") {
		t.Fatalf("answered %d %q", code, remark)
	}
	// Without a configStorePath nothing is written.
	n.ConfigStorePath = ""
	if err := n.PersistUpdate(); err != nil {
		t.Fatal(err)
	}
}

// How 318 and 1009 answer each refusal, the same for both.
func TestRefusal(t *testing.T) {
	long := strings.Repeat("k", 1000)
	for _, c := range []struct {
		err    error
		code   int32
		remark string
	}{
		{&UpdateError{Role: RoleController, Key: "configStorePath", Err: ErrBlackListed}, codec.NoPermission, "Can not update config in black list."},
		{&UpdateError{Role: RoleNameServer, Key: "listenPort", Err: ErrNotRuntime}, codec.NoPermission, "listenPort can only be set in the config file, not at run time; keys that can: [deleteTopicWithBrokerRegistration"},
		{&UpdateError{Role: RoleController, Key: long, Err: ErrNotRuntime}, codec.NoPermission, strings.Repeat("k", 255) + "...(1000 bytes) can only be set"},
		{&UpdateError{Role: RoleNameServer, Key: "enableTopicList", Err: ErrBadValue, Detail: "not a boolean"}, codec.SystemError, "config update: enableTopicList: bad value: not a boolean"},
		{&UpdateError{Role: RoleNameServer, Err: ErrNotPersisted, Detail: "/etc/x: read-only"}, codec.SystemError, "persist config: the configuration file could not be written; nothing was changed (the NameServer's log says why)"},
	} {
		code, remark := Refusal(c.err)
		if code != c.code || !strings.HasPrefix(remark, c.remark) {
			t.Errorf("%v: %d %q, want %d %q", c.err, code, remark, c.code, c.remark)
		}
	}
	if _, err := UpdateBody([]byte("a=\\u00zz\n")); err == nil {
		t.Fatal("a body that does not parse")
	} else if code, remark := Refusal(err); code != codec.SystemError || remark != "string2Properties error" {
		t.Fatalf("bad body: %d %q", code, remark)
	}
	if props, err := UpdateBody([]byte("# nothing\n")); err != nil || len(props) != 0 {
		t.Fatalf("comments only: %v %v", props, err)
	}
}
