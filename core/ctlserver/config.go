// The server's configuration: the node's settings as core/config builds
// them from the configuration keys, and what the process provides beside
// them (TLS material, the authorization policy, the shared budget, hooks).

package ctlserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/raftnode/membership"
	"github.com/rocketns/rocketns/core/remoting"
)

const (
	// DefaultNotifyTimeout bounds the dial and the send of one 1008, as
	// Java's 3000 ms oneway timeout does.
	DefaultNotifyTimeout = 3 * time.Second
	// firstExpiryScan is when Java runs the first expiry scan.
	firstExpiryScan = 2 * time.Second
)

// Config describes one controller node. Build it from DefaultConfig, or
// from the configuration keys (config.Config.Controller) with the
// process's material added.
type Config struct {
	// Controller is the node's settings, from the configuration keys
	// (config's table: defaults, ranges, what 1009 may change).
	// Membership is the controller group and this node's place in it:
	// DLedger style serves brokers and raft on the self peer's port; jRaft
	// style serves brokers on the node's jRaftControllerRPCAddr port and
	// raft on its jRaftServerId port. Embedded in the NameServer, the node
	// answers with the NameServer's version (479), as Java does;
	// standalone with 0.
	config.Controller

	// InMemory keeps the raft state in memory instead of under StorePath
	// (tests only).
	InMemory bool
	// NotifyTimeout bounds the dial and the send of one 1008.
	NotifyTimeout time.Duration
	// Budget bounds the bytes buffered for the broker-facing connections;
	// embedded, it is the NameServer's, so the process keeps one bound.
	// Nil is a budget of its own: remoting.DefaultBudgetBytes, at least
	// four frames of FrameMaxLength.
	Budget *remoting.Budget
	// TLS, when set, serves TLS on the broker-facing port beside
	// plaintext. Raft connections, sniffed before it applies, have their
	// own: RaftTLS.
	TLS *remoting.TLS
	// Auth is who may send what on the broker-facing port: the
	// NameServer's policy (config.Config.AuthPolicy; embedded, the very
	// NameServer's), applied by the code table's classes. Nil serves
	// everyone, as Java's controller does.
	Auth *auth.Policy
	// RaftTLS is the material of mutual TLS between members
	// (Controller.RaftTLSEnable). Without it or RaftSecret, raft accepts
	// any connection from a member's address, and Start says so.
	RaftTLS *raftnode.PeerTLS
	// Raft holds raft's tunings beyond the keys' (commit, apply and RPC
	// timeouts, snapshots); zero fields take raftnode's defaults. Its
	// identity, peers, store, transport and the three timings of the keys
	// are the node's.
	Raft raftnode.Config

	// Settings is what 1010 lists and 1009 changes: nil is Controller.
	Settings *config.Controller

	// Observe is told of every request handled (see remoting.Options).
	Observe func(code, resp int32, took time.Duration, weight uint64)
	// Logger receives the node's lines; nil is slog.Default().
	Logger *slog.Logger
	// Clock is the time liveness is judged by; nil is time.Now. The scans
	// run on real tickers and read it.
	Clock func() time.Time
}

// DefaultConfig returns Java's defaults for the group m, stored under dir.
func DefaultConfig(m *membership.Membership, dir string) Config {
	return Config{Controller: config.DefaultNode(m, dir), NotifyTimeout: DefaultNotifyTimeout}
}

// NewMemoryConfig is c's settings listing extra as the start-up keys 1010
// shows beside the node's own, and persisting nothing.
func NewMemoryConfig(c *Config, extra map[string]string) *config.Controller {
	k := c.Controller
	k.Startup, k.ConfigStorePath = extra, ""
	return &k
}

func (c *Config) withDefaults() {
	if c.NotifyTimeout <= 0 {
		c.NotifyTimeout = DefaultNotifyTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

func (c *Config) validate() error {
	m := c.Membership
	if m == nil {
		return errors.New("controller: no membership")
	}
	self, ok := m.Peer(m.SelfID)
	if !ok {
		return fmt.Errorf("controller: self id %q is not among the peers", m.SelfID)
	}
	if _, _, err := net.SplitHostPort(self.ServeAddr); err != nil {
		return fmt.Errorf("controller: broker-facing address %q: %w", self.ServeAddr, err)
	}
	if _, _, err := net.SplitHostPort(self.RaftAddr); err != nil {
		return fmt.Errorf("controller: raft address %q: %w", self.RaftAddr, err)
	}
	if m.Style == membership.DLedger && self.RaftAddr != self.ServeAddr {
		return fmt.Errorf("controller: DLedger style serves brokers and raft on one port, but %s != %s", self.ServeAddr, self.RaftAddr)
	}
	if !c.InMemory && c.StorePath == "" {
		return errors.New("controller: no store directory (controllerStorePath)")
	}
	if err := c.Check(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// listenAddr is where a listener for the peer address addr binds: the
// configured bind host with addr's port.
func (c *Config) listenAddr(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(c.BindAddress, port)
}
