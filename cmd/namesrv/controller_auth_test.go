// The controller port enforces the authorization keys of its configuration:
// embedded, the NameServer's own policy; standalone, the same keys read
// from its file.

package main

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// callFrom sends req to addr from the loopback address local.
func callFrom(t *testing.T, local, addr string, req *codec.Command) *codec.Command {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return remotingtest.Over(t, nc).Call(req)
}

// guardedConfig is a configuration with a one-node controller on ctl,
// admins on 127.0.0.3 and brokers on 127.0.0.1.
func guardedConfig(t *testing.T, base *config.Config, ctl string, keys ...string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	set := func(k, v string) {
		if err := base.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set("bindAddress", "127.0.0.1")
	set("controllerDLegerPeers", "n0-"+ctl)
	set("controllerDLegerSelfId", "n0")
	set("controllerStorePath", filepath.Join(dir, "store"))
	set("configStorePath", filepath.Join(dir, "controller.properties"))
	set("adminAllowCIDRs", "127.0.0.3/32")
	set("brokerAllowCIDRs", "127.0.0.1/32")
	for i := 0; i+1 < len(keys); i += 2 {
		set(keys[i], keys[i+1])
	}
	return base
}

func checkControllerGuarded(t *testing.T, ctl string) {
	t.Helper()
	remotingtest.WaitFor(t, "a controller leader", func() bool {
		r := callFrom(t, "127.0.0.1", ctl, remotingtest.Request(codec.ControllerGetMetadataInfo, 1))
		v, _ := r.ExtValue("controllerLeaderAddress")
		return v == ctl
	})
	update := func() *codec.Command {
		req := remotingtest.Request(codec.UpdateControllerConfig, 2)
		req.Body = []byte("electMasterMaxRetryCount=4\n")
		return req
	}
	if r := callFrom(t, "127.0.0.2", ctl, update()); r.Code != codec.NoPermission ||
		!strings.Contains(r.Remark, "is not in adminAllowCIDRs") {
		t.Fatalf("1009 from a stranger: %d %q", r.Code, r.Remark)
	}
	if r := callFrom(t, "127.0.0.3", ctl, update()); r.Code != codec.Success {
		t.Fatalf("1009 from the admin network: %d %q", r.Code, r.Remark)
	}
	hb := remotingtest.Request(codec.BrokerHeartbeat, 3, "clusterName", "c", "brokerName", "b", "brokerId", "1", "brokerAddr", "127.0.0.1:1")
	if r := callFrom(t, "127.0.0.2", ctl, hb); r.Code != codec.NoPermission {
		t.Fatalf("904 from a stranger: %d %q", r.Code, r.Remark)
	}
	if r := callFrom(t, "127.0.0.1", ctl, hb); r.Code != codec.Success {
		t.Fatalf("904 from the broker network: %d %q", r.Code, r.Remark)
	}
}

func TestEmbeddedControllerEnforcesTheNameServersPolicy(t *testing.T) {
	addrs := remotingtest.FreeAddrs(t, 2)
	_, nsPort, _ := net.SplitHostPort(addrs[0])
	cfg := guardedConfig(t, config.Default(), addrs[1], "listenPort", nsPort, "enableControllerInNamesrv", "true",
		"kvConfigPath", filepath.Join(t.TempDir(), "kv.json"))
	ns, err := newServer(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ns.Shutdown(ctx)
	})
	checkControllerGuarded(t, addrs[1])
	// One policy for the process: the NameServer's port refuses the same
	// stranger.
	del := remotingtest.Request(codec.DeleteKVConfig, 9, "namespace", "n", "key", "k")
	if r := callFrom(t, "127.0.0.2", addrs[0], del); r.Code != codec.NoPermission {
		t.Fatalf("102 from a stranger on the NameServer port: %d %q", r.Code, r.Remark)
	}
}

func TestStandaloneControllerEnforcesItsPolicy(t *testing.T) {
	addrs := remotingtest.FreeAddrs(t, 1)
	cfg := guardedConfig(t, config.DefaultController(), addrs[0])
	k, err := cfg.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(cfg.AppendControllerText(nil)); !strings.Contains(text, "\nadminAllowCIDRs=127.0.0.3/32\n") ||
		!strings.Contains(text, "\nauthorizationEnable=false\n") {
		t.Fatalf("controller -p lacks the authorization keys:\n%s", text)
	}
	policy, err := controllerAuthPolicy(cfg)
	if err != nil || policy == nil {
		t.Fatalf("policy %v, %v", policy, err)
	}
	node, err := newControllerNode(cfg, k, slog.New(slog.DiscardHandler), nil, nil, policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	checkControllerGuarded(t, addrs[0])
}

func TestControllerPolicyOff(t *testing.T) {
	if p, err := controllerAuthPolicy(config.DefaultController()); p != nil || err != nil {
		t.Fatalf("no key set: policy %v, %v", p, err)
	}
	cfg := config.DefaultController()
	cfg.AuthorizationEnable = true
	if _, err := controllerAuthPolicy(cfg); err == nil || !strings.Contains(err.Error(), "aclFile") {
		t.Fatalf("authorizationEnable without aclFile: %v", err)
	}
}
