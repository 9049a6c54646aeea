// Configuration checks, Start failing cleanly, Shutdown's rules, and how
// raft's write errors are answered.

package ctlserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func TestConfigValidate(t *testing.T) {
	good := dledger(t, []string{"127.0.0.1:9878"}, 0)
	f := func(edit func(*Config), want string) {
		t.Helper()
		cfg := DefaultConfig(good, "store")
		edit(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v, want an error about %q", err, want)
		}
	}
	f(func(c *Config) { c.Membership = nil }, "no membership")
	f(func(c *Config) { c.StorePath = "" }, "store directory")
	f(func(c *Config) { c.ScanInactiveMasterInterval = -1 }, "scanInactiveMasterInterval=0: want a positive number")
	f(func(c *Config) { c.ElectMasterMaxRetryCount = 0 }, "electMasterMaxRetryCount=0")
	f(func(c *Config) { c.RequestQueueCapacity = 0 }, "controllerRequestThreadPoolQueueCapacity=0")
	f(func(c *Config) { c.RaftHeartbeatTimeout = time.Millisecond }, "controllerRaftHeartbeatTimeoutMs=1")
	f(func(c *Config) {
		m := *good
		m.Peers = []membership.Peer{{ID: "n0", RaftAddr: "127.0.0.1:1", ServeAddr: "127.0.0.1:2"}}
		c.Membership = &m
	}, "one port")
	f(func(c *Config) {
		m := *good
		m.SelfID = "n9"
		c.Membership = &m
	}, "not among the peers")

	// A Config not built from the defaults is refused, the setting named,
	// rather than run with zero attempts or an unbuffered queue.
	if _, err := New(Config{Controller: config.Controller{Membership: good}, InMemory: true}); err == nil ||
		!strings.Contains(err.Error(), "scanNotActiveBrokerInterval=0") {
		t.Errorf("zero settings: %v", err)
	}
	// DefaultConfig has Java's defaults, from config's table.
	s, err := New(DefaultConfig(good, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.cfg; c.ScanNotActiveBrokerInterval != 5*time.Second || c.ScanInactiveMasterInterval != 5*time.Second ||
		c.ElectMasterMaxRetryCount != 3 || c.RequestQueueCapacity != 50000 || c.IdleTimeout != 120*time.Second ||
		!c.NotifyBrokerRoleChanged || c.EnableElectUncleanMaster || c.ProcessReadEvent || c.BindAddress != "0.0.0.0" ||
		c.MaxBrokerSets != config.DefaultControllerMaxBrokerSets || c.ConfigStorePath != "" || c.NotifyTimeout != DefaultNotifyTimeout {
		t.Errorf("defaults %+v", c)
	}
	if err := s.Shutdown(context.Background()); err == nil {
		t.Error("Shutdown of a node never started succeeded")
	}
}

// A port in use fails Start and leaves nothing running; the store can be
// opened again at once.
func TestStartFailsCleanly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cfg := DefaultConfig(dledger(t, []string{ln.Addr().String()}, 0), dir)
	cfg.BindAddress = "127.0.0.1"
	cfg.Logger = testLogger(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start on a port in use succeeded")
	}
	ln.Close()
	s2 := startNode(t, cfg)
	remotingtest.WaitFor(t, "a ready leader", func() bool { return s2.node.ReadyLeader() })
	shutdown(t, s2)
	if err := s2.Shutdown(context.Background()); err == nil {
		t.Error("a second Shutdown succeeded")
	}
}

func TestErrorReply(t *testing.T) {
	s := &Server{log: testLogger(t)}
	f := func(err error, code int32, remark string) {
		t.Helper()
		r := s.errorReply(err)
		if r.Code != code || !strings.Contains(r.Remark, remark) || r.HasExt || r.Body != nil {
			t.Errorf("%v: %+v, want %d %q", err, r, code, remark)
		}
	}
	f(&raftnode.NotLeaderError{}, codec.ControllerNotLeader, "The controller is not in leader state")
	f(errNotReady, codec.ControllerNotLeader, "The controller is not in leader state")
	f(fmt.Errorf("%w: x", raftnode.ErrLeadershipLost), codec.SystemError, "lost its leadership")
	f(fmt.Errorf("%w after 5s", raftnode.ErrTimeout), codec.SystemError, "not committed in time")
	f(raftnode.ErrShutdown, codec.SystemError, "shutting down")
	f(errors.New("raft entry 7: corrupt"), codec.SystemError, "corrupt")
}
