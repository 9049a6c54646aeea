// The controller node's settings (Controller), built from the keys of the
// table a controller reads, embedded in the NameServer or standalone: the
// checks run on them, the listing GET_CONTROLLER_CONFIG (1010) answers,
// the run-time updates of UPDATE_CONTROLLER_CONFIG (1009), and -p.

package config

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/raftnode/membership"
)

// Controller is a controller node's settings: one field for each key of
// the table the node reads (its node pointer), plus what is derived from
// them. Config.Controller builds it from a configuration; DefaultNode
// from the defaults.
type Controller struct {
	// Embedded is set for a controller inside the NameServer.
	Embedded   bool
	Membership *membership.Membership
	// StorePath is controllerStorePath, the raft log and snapshots.
	StorePath                   string
	ScanNotActiveBrokerInterval time.Duration
	ScanInactiveMasterInterval  time.Duration
	// The run-time settings, read at each use; 1009 changes them.
	ElectMasterMaxRetryCount int
	EnableElectUncleanMaster bool
	NotifyBrokerRoleChanged  bool
	ProcessReadEvent         bool
	RequestQueueCapacity     int
	// ConfigStorePath is where 1009 persists the listing; empty persists
	// nothing. ConfigBlackList names the keys it refuses besides the
	// black-listed ones.
	ConfigStorePath string
	ConfigBlackList string
	// Raft timings, zero for raftnode's defaults.
	RaftHeartbeatTimeout, RaftElectionTimeout, RaftLeaderLeaseTimeout time.Duration
	// The state bounds: broker sets, registered ids per set, and brokers
	// not registered in the liveness table.
	MaxBrokerSets, MaxBrokersPerSet, MaxLiveBrokers int
	// RaftSecretFile is controllerRaftSecretFile; RaftSecret its content,
	// surrounding white space removed (nil when unset).
	RaftSecretFile string
	RaftSecret     []byte
	// RaftTLSEnable is controllerRaftTLSEnable: mutual TLS between members
	// with the tls.server.* certificate, key and trust files.
	RaftTLSEnable bool

	// The keys the node shares with the NameServer: the broker-facing
	// listener's address and limits. IdleTimeout zero is never.
	BindAddress         string
	IdleTimeout         time.Duration
	FrameMaxLength      int
	MaxConnections      int
	MaxConnectionsPerIP int

	// Startup are the keys 1010 lists besides the node's own settings, as
	// Java lists every key of its start-up file: the controller keys and
	// Java-only or unknown keys of the configuration, and the NameServer's
	// own settings when embedded (Java's embedded 1010 shows the
	// NameServer's file keys too). The node's settings win over these.
	Startup map[string]string
}

// maxControllerBound caps each of the state bounds.
const maxControllerBound = 1 << 20

// ControllerEnabled reports enableControllerInNamesrv: the NameServer then
// runs a controller node beside itself.
func (c *Config) ControllerEnabled() bool { return c.EnableControllerInNamesrv }

// Controller reads the controller node's settings from c: the controller
// keys (kept in Extra, their values checked by Apply), and the keys the
// node shares with the NameServer (bindAddress, scanNotActiveBrokerInterval,
// serverChannelMaxIdleTimeSeconds, the limits and TLS). Embedded in the
// NameServer, configStorePath and configBlackList are the NameServer's,
// so the controller keeps Java's ControllerConfig defaults for them
// instead (in Java both would read the file's value and overwrite each
// other's file); standalone, they are c's. Every problem is reported,
// joined.
func (c *Config) Controller(embedded bool) (*Controller, error) {
	k, errs := c.controller(embedded)
	if strings.TrimSpace(k.StorePath) == "" {
		errs = append(errs, fmt.Errorf("config: %s is empty", KeyControllerStorePath))
	}
	if err := k.Check(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, k.readRaftSecurity(c)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return k, nil
}

// controller builds the node's settings from c, whatever they are; the
// errors are the membership's.
func (c *Config) controller(embedded bool) (*Controller, []error) {
	var errs []error
	m, err := membership.Parse(func(key string) (string, bool) {
		v, ok := c.Extra[key]
		return v, ok
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("config: %w", err))
	}
	k := &Controller{Embedded: embedded, Membership: m}
	for i := range keys {
		key := &keys[i]
		if key.node == nil {
			continue
		}
		v, ok := key.get(c)
		if embedded && key.ctlDefault != nil {
			v, ok = key.defaultFor(RoleController), true
		}
		if ok {
			store(key.node(k), v, key.unit())
		}
	}
	k.StorePath = c.controllerStorePath()
	k.Startup = maps.Clone(c.Extra)
	if k.Startup == nil {
		k.Startup = make(map[string]string)
	}
	k.Startup["rocketmqHome"] = c.RocketmqHome
	k.Startup["configStorePath"] = k.ConfigStorePath
	k.Startup["configBlackList"] = k.ConfigBlackList
	if embedded {
		for _, p := range c.Properties() {
			if _, ok := k.Startup[p.Key]; !ok {
				k.Startup[p.Key] = p.Value
			}
		}
	}
	return k, errs
}

// controllerStorePath is controllerStorePath, or Java's default
// ${user.home}/<controllerType>Controller.
func (c *Config) controllerStorePath() string {
	if p := javaTrim(c.Extra[KeyControllerStorePath]); p != "" {
		return p
	}
	if javaTrim(c.Extra[membership.KeyControllerType]) == membership.ControllerTypeJRaft {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, membership.ControllerTypeJRaft+"Controller")
	}
	return lookup(KeyControllerStorePath).defaultFor(RoleController).(string)
}

// DefaultNode is the settings of a standalone node of the group m with
// Java's defaults, its raft state under storePath; it persists nothing
// (ConfigStorePath is empty) and lists no start-up keys but Java's.
func DefaultNode(m *membership.Membership, storePath string) Controller {
	k, _ := DefaultController().controller(false)
	k.Membership, k.StorePath, k.ConfigStorePath = m, storePath, ""
	return *k
}

// Check checks the settings as the node needs them: each in its range
// (the table's), and the raft timings the way raft itself would refuse
// them, with the keys named.
func (k *Controller) Check() error {
	var errs []error
	for i := range keys {
		key := &keys[i]
		if key.node == nil || key.Range == nil {
			continue
		}
		v := asInt64(load(key.node(k), key.unit()))
		if why := key.Range.check(v); why != "" {
			errs = append(errs, fmt.Errorf("config: %s=%d: %s", key.Name, v, why))
		}
	}
	errs = append(errs, k.checkRaft()...)
	return errors.Join(errs...)
}

// raftnode's defaults, which a zero timing stands for (raftnode.Default*;
// copied so that this package does not pull in the raft engine to check a
// number). A zero leader lease is the heartbeat timeout in effect.
const (
	raftDefaultHeartbeat = 500 * time.Millisecond
	raftDefaultElection  = 500 * time.Millisecond
)

// checkRaft checks the raft timings: 0 or at least 5 ms each, an election
// timeout not below the heartbeat timeout, a leader lease not above it.
func (k *Controller) checkRaft() []error {
	var errs []error
	hb, el, lease := k.RaftHeartbeatTimeout, k.RaftElectionTimeout, k.RaftLeaderLeaseTimeout
	for _, t := range []struct {
		key string
		d   time.Duration
	}{{KeyControllerRaftHeartbeatTimeout, hb}, {KeyControllerRaftElectionTimeout, el}, {KeyControllerRaftLeaderLeaseTimeout, lease}} {
		if t.d < 0 || (t.d > 0 && t.d < 5*time.Millisecond) {
			errs = append(errs, fmt.Errorf("config: %s=%d: want 0 (the default) or at least 5", t.key, t.d.Milliseconds()))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	eff := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	hb = eff(hb, raftDefaultHeartbeat)
	if e := eff(el, raftDefaultElection); e < hb {
		errs = append(errs, fmt.Errorf("config: %s=%d is below the heartbeat timeout %d", KeyControllerRaftElectionTimeout, e.Milliseconds(), hb.Milliseconds()))
	}
	if l := eff(lease, hb); l > hb {
		errs = append(errs, fmt.Errorf("config: %s=%d is above the heartbeat timeout %d", KeyControllerRaftLeaderLeaseTimeout, l.Milliseconds(), hb.Milliseconds()))
	}
	return errs
}

// minRaftSecret is raftnode.MinSecretLen (copied, as the timings above).
const minRaftSecret = 16

// readRaftSecurity reads the cluster secret and checks that mutual TLS
// has the files it needs: this node's certificate and key, and the trust
// file peers' certificates must chain to. Test mode's throw-away
// certificate cannot be verified by a peer.
func (k *Controller) readRaftSecurity(c *Config) []error {
	var errs []error
	if path := strings.TrimSpace(k.RaftSecretFile); path != "" {
		b, err := os.ReadFile(path)
		switch secret := []byte(strings.TrimSpace(string(b))); {
		case err != nil:
			errs = append(errs, fmt.Errorf("config: %s: %w", KeyControllerRaftSecretFile, err))
		case len(secret) < minRaftSecret:
			errs = append(errs, fmt.Errorf("config: %s %s holds %d bytes: want a secret of at least %d (openssl rand -hex 32 > %s)",
				KeyControllerRaftSecretFile, path, len(secret), minRaftSecret, path))
		default:
			k.RaftSecret = secret
		}
	}
	if k.RaftTLSEnable {
		st, err := c.TLS()
		switch {
		case err != nil:
			errs = append(errs, err)
		case st.Mode == TLSDisabled || st.TestMode || st.CertPath == "" || st.KeyPath == "" || st.TrustCertPath == "":
			errs = append(errs, fmt.Errorf("config: %s=true needs %s, %s and %s (each member's certificate, naming its raft host, and the CA that issued them), and %s not disabled; %s's certificate cannot be verified by a peer",
				KeyControllerRaftTLSEnable, KeyTLSServerCertPath, KeyTLSServerKeyPath, KeyTLSServerTrustCertPath, KeyTLSServerMode, KeyTLSTestModeEnable))
		}
	}
	return errs
}

// Properties is the listing GET_CONTROLLER_CONFIG (1010) answers, sorted:
// every key of a Java controller's listing (the fields of its
// ControllerConfig and NettyServerConfig, under Java's names:
// isProcessReadEvent, jraftConfig, listenPort the broker-facing port) with
// this node's values, over the start-up keys, which are listed too.
func (k *Controller) Properties() []properties.Property {
	m := maps.Clone(k.Startup)
	if m == nil {
		m = make(map[string]string)
	}
	for i := range keys {
		key := &keys[i]
		if key.Listed&RoleController == 0 || aliased(key.Name) {
			continue
		}
		if _, set := m[key.Name]; key.node != nil || !set && key.Default != nil {
			m[key.Name] = k.text(key)
		}
	}
	// What the membership says: Java prints its own fields.
	ms := k.Membership
	_, m["listenPort"], _ = net.SplitHostPort(ms.Self().ServeAddr)
	m[membership.KeyControllerType] = ms.Style.String()
	if ms.Style == membership.DLedger {
		peers := make([]string, len(ms.Peers))
		for i, p := range ms.Peers {
			peers[i] = p.ID + "-" + p.RaftAddr
		}
		m[membership.KeyDLedgerPeers] = strings.Join(peers, ";")
		m[membership.KeyDLedgerSelfID] = ms.SelfID
		if ms.Group != "" {
			m[membership.KeyDLedgerGroup] = ms.Group
		}
	}
	if m["bindAddress"] == "" {
		m["bindAddress"] = "0.0.0.0"
	}
	m["jraftConfig"] = jraftConfigText(ms)
	return sortedProperties(m)
}

// text is the key's value in k as Java prints it: the node's field, or
// the key's default.
func (k *Controller) text(key *Key) string {
	if key.node != nil {
		return format(load(key.node(k), key.unit()))
	}
	return format(key.defaultFor(RoleController))
}

// aliased reports whether another key is an alias of name: 1010 lists the
// alias (Java's field name) instead.
func aliased(name string) bool {
	for i := range keys {
		if keys[i].Alias == name {
			return true
		}
	}
	return false
}

// jraftConfigText is what Java's 1010 shows for its JraftConfig object:
// its class name and identity hash, here a hash of the group.
func jraftConfigText(m *membership.Membership) string {
	h := fnv.New32a()
	h.Write([]byte(m.Group))
	return fmt.Sprintf("org.apache.rocketmq.common.JraftConfig@%x", h.Sum32())
}

// AppendText appends the listing (Properties) as key=value lines: the 1010
// body, written as 319's is.
func (k *Controller) AppendText(dst []byte) []byte { return properties.Append(dst, k.Properties()) }

// RuntimeUpdate returns a copy of k with the properties of a 1009 applied,
// or an *UpdateError and no copy: the checks of 318 (checkUpdate) for the
// controller's keys and black list.
func (k *Controller) RuntimeUpdate(props []properties.Property) (*Controller, error) {
	vals, err := checkUpdate(RoleController, k.ConfigBlackList, props)
	if err != nil {
		return nil, err
	}
	n := *k
	for i, p := range props {
		key := lookup(p.Key)
		store(key.node(&n), vals[i], key.unit())
	}
	return &n, nil
}

// PersistUpdate writes the listing into ConfigStorePath as Java does (none:
// nothing is written), the way 318 writes its keys (persist), without
// jraftConfig, which names a Java object, not a setting.
func (k *Controller) PersistUpdate() error {
	if k.ConfigStorePath == "" {
		return nil
	}
	props := slices.DeleteFunc(k.Properties(), func(p properties.Property) bool { return p.Key == "jraftConfig" })
	return persist(RoleController, k.ConfigStorePath, props)
}

// text is the key's value in c as -p prints it: its field, its value as
// written, or its default for role (controllerStorePath resolved).
func (c *Config) text(key *Key, r Role) string {
	switch v, set := c.Extra[key.Name]; {
	case !key.kept():
		return key.Value(c)
	case set:
		return v
	case key.Name == KeyControllerStorePath:
		return c.controllerStorePath()
	}
	return format(key.defaultFor(r))
}

// AppendTextWithController appends every setting of the NameServer and of
// its controller (whether enableControllerInNamesrv is on or not) as sorted
// key=value lines: namesrv -p.
func (c *Config) AppendTextWithController(dst []byte) []byte {
	m := make(map[string]string)
	for _, p := range c.Properties() {
		m[p.Key] = p.Value
	}
	for i := range keys {
		if key := &keys[i]; key.Roles&RoleController != 0 && key.Alias == "" {
			if _, ok := m[key.Name]; !ok {
				m[key.Name] = c.text(key, RoleController)
			}
		}
	}
	return properties.Append(dst, sortedProperties(m))
}

// AppendControllerText appends a standalone controller's settings as
// sorted key=value lines: controller -p. The keys only the NameServer
// reads (kvConfigPath, the route switches) are left out, unless c holds
// them as written, unknown to it.
func (c *Config) AppendControllerText(dst []byte) []byte {
	m := maps.Clone(c.Extra)
	if m == nil {
		m = make(map[string]string)
	}
	for i := range keys {
		if key := &keys[i]; key.Roles&RoleController != 0 && key.Alias == "" {
			m[key.Name] = c.text(key, RoleController)
		}
	}
	return properties.Append(dst, sortedProperties(m))
}

// sortedProperties is m sorted by key.
func sortedProperties(m map[string]string) []properties.Property {
	out := make([]properties.Property, 0, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		out = append(out, properties.Property{Key: key, Value: m[key]})
	}
	return out
}
