// The server's configuration: the ControllerConfig settings that matter on
// the wire, the raft timeouts, the test seams, and the run-time settings
// UPDATE_CONTROLLER_CONFIG may change.

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

// Java's ControllerConfig defaults, and the remoting ones a controller
// port uses.
const (
	DefaultScanNotActiveBrokerInterval = 5 * time.Second
	DefaultScanInactiveMasterInterval  = 5 * time.Second
	DefaultElectMasterMaxRetryCount    = 3
	// DefaultRequestQueueCapacity is controllerRequestThreadPoolQueueCapacity.
	DefaultRequestQueueCapacity = 50000
	// DefaultIdleTimeout is serverChannelMaxIdleTimeSeconds.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultNotifyTimeout bounds the dial and the send of one 1008, as
	// Java's 3000 ms oneway timeout does.
	DefaultNotifyTimeout = 3 * time.Second
	// firstExpiryScan is when Java runs the first expiry scan.
	firstExpiryScan = 2 * time.Second
)

// Config describes one controller node. Build it from DefaultConfig: zero
// durations and counts take the defaults above, but booleans are taken as
// they are, and NotifyBrokerRoleChanged is true by default.
type Config struct {
	// Membership is the controller group and this node's place in it
	// (membership.Parse of the Java keys). DLedger style serves brokers
	// and raft on the self peer's port; jRaft style serves brokers on the
	// node's jRaftControllerRPCAddr port and raft on its jRaftServerId
	// port.
	Membership *membership.Membership
	// StoreDir is controllerStorePath: the raft log and snapshots.
	StoreDir string
	// InMemory keeps the raft state in memory instead (tests only).
	InMemory bool
	// BindAddress is the host the listeners bind (bindAddress); empty
	// binds every interface. The ports come from Membership.
	BindAddress string

	// ScanNotActiveBrokerInterval is how often every node drops the
	// brokers whose heartbeats expired and closes their connections.
	ScanNotActiveBrokerInterval time.Duration
	// ScanInactiveMasterInterval is how often the ready leader looks for
	// sets whose master is dead while a member is alive.
	ScanInactiveMasterInterval time.Duration
	// ElectMasterMaxRetryCount bounds the attempts of one
	// controller-triggered election.
	ElectMasterMaxRetryCount int
	EnableElectUncleanMaster bool
	// NotifyBrokerRoleChanged sends 1008 to the live members after each
	// election that names a new master.
	NotifyBrokerRoleChanged bool
	// ProcessReadEvent commits an empty raft entry before answering each
	// leader read (1004, 1006, 1012), so that a leader that was deposed
	// without knowing it cannot answer from a stale state.
	ProcessReadEvent bool
	// RequestQueueCapacity bounds the leader requests waiting to be
	// decided; beyond it a request is answered 2 SYSTEM_BUSY.
	RequestQueueCapacity int
	// MaxBrokerSets bounds the broker sets: a 1013 that would create one
	// more is refused. MaxBrokersPerSet bounds the ids registered in one
	// set the same way. MaxLiveBrokers bounds the liveness table: a
	// heartbeat from a broker new to it and not registered is refused
	// while it holds that many (registered brokers are always admitted).
	// Zero takes config's defaults.
	MaxBrokerSets, MaxBrokersPerSet, MaxLiveBrokers int

	// IdleTimeout closes a broker-facing connection silent for this long
	// (which counts as the broker's connection closing); negative is
	// never.
	IdleTimeout time.Duration
	// NotifyTimeout bounds the dial and the send of one 1008.
	NotifyTimeout time.Duration
	// ReplyVersion is stamped on every reply and 1008: 0 like a standalone
	// Java controller, codec.ServerVersion (479) when embedded in the
	// NameServer, as Java does.
	ReplyVersion int32
	// MaxFrame and MaxConnections are the listener's limits (see
	// remoting.Options); zero is the remoting default.
	MaxFrame       int
	MaxConnections int
	// MaxConnectionsPerIP caps the connections from one source address
	// (remoting.Options); zero is no cap.
	MaxConnectionsPerIP int
	// Budget bounds the bytes buffered for the broker-facing connections;
	// embedded, it is the NameServer's, so the process keeps one bound.
	// Nil is a budget of its own: remoting.DefaultBudgetBytes, at least
	// four frames of MaxFrame.
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

	// RaftSecret is the cluster secret every member proves at each raft
	// connection (controllerRaftSecretFile); RaftTLS turns on mutual TLS
	// between members (controllerRaftTLSEnable). Without either, raft
	// accepts any connection from a member's address, and Start says so.
	RaftSecret []byte
	RaftTLS    *raftnode.PeerTLS

	// Raft holds the raft timings; zero fields take raftnode's defaults.
	Raft RaftConfig

	// Settings is what 1010 shows and 1009 changes; nil is a MemoryConfig
	// built from this Config.
	Settings ConfigStore

	// Observe is told of every request handled (see remoting.Options).
	Observe func(code, resp int32, took time.Duration, weight uint64)
	// Logger receives the node's lines; nil is slog.Default().
	Logger *slog.Logger
	// Clock is the time liveness is judged by; nil is time.Now. The scans
	// run on real tickers and read it.
	Clock func() time.Time
}

// RaftConfig are the raft settings of a node (see raftnode.Config).
type RaftConfig struct {
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	RPCTimeout         time.Duration
	// ApplyTimeout bounds one write's commit and apply; a write that
	// takes longer is answered SYSTEM_ERROR (Java waits 5 s too).
	ApplyTimeout      time.Duration
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64
	// ApplyMembershipChanges lets the ready leader make raft's membership
	// equal to the configured peers.
	ApplyMembershipChanges bool
}

// DefaultConfig returns Java's defaults for the group m, stored under dir.
func DefaultConfig(m *membership.Membership, dir string) Config {
	return Config{
		Membership:                  m,
		StoreDir:                    dir,
		ScanNotActiveBrokerInterval: DefaultScanNotActiveBrokerInterval,
		ScanInactiveMasterInterval:  DefaultScanInactiveMasterInterval,
		ElectMasterMaxRetryCount:    DefaultElectMasterMaxRetryCount,
		NotifyBrokerRoleChanged:     true,
		RequestQueueCapacity:        DefaultRequestQueueCapacity,
		IdleTimeout:                 DefaultIdleTimeout,
		NotifyTimeout:               DefaultNotifyTimeout,
	}
}

// RuntimeSettings are the settings read at each use, which a 1009 may
// change on a running node.
type RuntimeSettings struct {
	NotifyBrokerRoleChanged  bool
	EnableElectUncleanMaster bool
	ElectMasterMaxRetryCount int
	ProcessReadEvent         bool
}

// Runtime returns the run-time settings c starts with.
func (c *Config) Runtime() RuntimeSettings {
	return RuntimeSettings{
		NotifyBrokerRoleChanged:  c.NotifyBrokerRoleChanged,
		EnableElectUncleanMaster: c.EnableElectUncleanMaster,
		ElectMasterMaxRetryCount: c.ElectMasterMaxRetryCount,
		ProcessReadEvent:         c.ProcessReadEvent,
	}
}

func (c *Config) withDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ScanNotActiveBrokerInterval, DefaultScanNotActiveBrokerInterval)
	def(&c.ScanInactiveMasterInterval, DefaultScanInactiveMasterInterval)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.NotifyTimeout, DefaultNotifyTimeout)
	if c.ElectMasterMaxRetryCount == 0 {
		c.ElectMasterMaxRetryCount = DefaultElectMasterMaxRetryCount
	}
	if c.RequestQueueCapacity <= 0 {
		c.RequestQueueCapacity = DefaultRequestQueueCapacity
	}
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	defInt(&c.MaxBrokerSets, config.DefaultControllerMaxBrokerSets)
	defInt(&c.MaxBrokersPerSet, config.DefaultControllerMaxBrokersPerSet)
	defInt(&c.MaxLiveBrokers, config.DefaultControllerMaxLiveBrokers)
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
	if !c.InMemory && c.StoreDir == "" {
		return errors.New("controller: no store directory (controllerStorePath)")
	}
	if c.ScanNotActiveBrokerInterval < 0 || c.ScanInactiveMasterInterval < 0 {
		return errors.New("controller: negative scan interval")
	}
	return nil
}

// listenAddr is where a listener for the peer address addr binds: the
// configured bind host with addr's port.
func (c *Config) listenAddr(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(c.BindAddress, port)
}
