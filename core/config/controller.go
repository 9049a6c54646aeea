// The controller's keys (Java's ControllerConfig and JraftConfig, and
// rocketns's raft timings): their types and defaults, the checks Apply runs
// on them, and the controller node's settings read from a Config, embedded
// in the NameServer or standalone (ctlserver.FromConfig makes a node's
// configuration of them).

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/raftnode/membership"
)

// Keys of the controller that rocketns acts on.
const (
	KeyEnableControllerInNamesrv = "enableControllerInNamesrv"
	KeyControllerStorePath       = "controllerStorePath"
	KeyScanInactiveMasterInt     = "scanInactiveMasterInterval"
	KeyControllerQueueCapacity   = "controllerRequestThreadPoolQueueCapacity"
	KeyElectMasterMaxRetryCount  = "electMasterMaxRetryCount"
	KeyEnableElectUncleanMaster  = "enableElectUncleanMaster"
	KeyNotifyBrokerRoleChanged   = "notifyBrokerRoleChanged"
	// KeyProcessReadEvent is the property; Java's 1010 lists the field,
	// KeyIsProcessReadEvent, which is accepted too.
	KeyProcessReadEvent   = "processReadEvent"
	KeyIsProcessReadEvent = "isProcessReadEvent"
	// rocketns's raft timings (0 = the raftnode defaults: a leader change
	// in 1-2 s). DLedger's and jRaft's own tunings have no equivalent.
	KeyControllerRaftHeartbeatTimeout   = "controllerRaftHeartbeatTimeoutMs"
	KeyControllerRaftElectionTimeout    = "controllerRaftElectionTimeoutMs"
	KeyControllerRaftLeaderLeaseTimeout = "controllerRaftLeaderLeaseTimeoutMs"
	// rocketns's bounds on the controller's state (a peer that may send
	// 1013 and 904 could otherwise grow it without end).
	KeyControllerMaxBrokerSets    = "controllerMaxBrokerSets"
	KeyControllerMaxBrokersPerSet = "controllerMaxBrokersPerSet"
	KeyControllerMaxLiveBrokers   = "controllerMaxLiveBrokers"
	// rocketns's raft security: a file holding the cluster secret every
	// member proves at each raft connection, and mutual TLS between members
	// with the tls.server.* files. Without either, raft accepts any
	// connection from a member's address.
	KeyControllerRaftSecretFile = "controllerRaftSecretFile"
	KeyControllerRaftTLSEnable  = "controllerRaftTLSEnable"
)

// Defaults of the state bounds: far above any real cluster (a few hundred
// broker sets of two or three brokers, a few more ids where brokers lost
// their identity files), far below what exhausts a node: a flood up to
// all three (short names) grew a node's live heap by about 13 MiB.
const (
	DefaultControllerMaxBrokerSets    = 4096
	DefaultControllerMaxBrokersPerSet = 32
	DefaultControllerMaxLiveBrokers   = 16384
	// maxControllerBound caps each of them.
	maxControllerBound = 1 << 20
)

// ctlUse says what rocketns does with a controller key.
type ctlUse uint8

const (
	ctlUsed     ctlUse = iota // read by the controller node
	ctlJavaOnly               // accepted, kept and printed; a warning when set
)

// ctlKey is one controller key: its type, Java's default ("" when Java has
// none, or the default depends on other keys) and its use.
type ctlKey struct {
	name string
	typ  Type
	def  string
	use  ctlUse
}

// controllerKeys are every controller key rocketns knows, in print order.
// Never modified.
var controllerKeys = []ctlKey{
	{KeyEnableControllerInNamesrv, TypeBool, "false", ctlUsed},
	{membership.KeyControllerType, TypeString, "DLedger", ctlUsed},
	{membership.KeyDLedgerGroup, TypeString, "", ctlUsed},
	{membership.KeyDLedgerPeers, TypeString, "", ctlUsed},
	{membership.KeyDLedgerSelfID, TypeString, "", ctlUsed},
	{membership.KeyJRaftGroupID, TypeString, membership.DefaultJRaftGroupID, ctlUsed},
	{membership.KeyJRaftServerID, TypeString, membership.DefaultJRaftServerID, ctlUsed},
	{membership.KeyJRaftInitConf, TypeString, membership.DefaultJRaftInitConf, ctlUsed},
	{membership.KeyJRaftRPCAddress, TypeString, membership.DefaultJRaftRPCAddress, ctlUsed},
	{KeyControllerStorePath, TypeString, "", ctlUsed},
	{KeyScanInactiveMasterInt, TypeInt64, "5000", ctlUsed},
	{KeyControllerQueueCapacity, TypeInt, "50000", ctlUsed},
	{KeyElectMasterMaxRetryCount, TypeInt, "3", ctlUsed},
	{KeyEnableElectUncleanMaster, TypeBool, "false", ctlUsed},
	{KeyNotifyBrokerRoleChanged, TypeBool, "true", ctlUsed},
	{KeyProcessReadEvent, TypeBool, "false", ctlUsed},
	{KeyIsProcessReadEvent, TypeBool, "", ctlUsed},
	{KeyControllerRaftHeartbeatTimeout, TypeInt, "0", ctlUsed},
	{KeyControllerRaftElectionTimeout, TypeInt, "0", ctlUsed},
	{KeyControllerRaftLeaderLeaseTimeout, TypeInt, "0", ctlUsed},
	{KeyControllerMaxBrokerSets, TypeInt, strconv.Itoa(DefaultControllerMaxBrokerSets), ctlUsed},
	{KeyControllerMaxBrokersPerSet, TypeInt, strconv.Itoa(DefaultControllerMaxBrokersPerSet), ctlUsed},
	{KeyControllerMaxLiveBrokers, TypeInt, strconv.Itoa(DefaultControllerMaxLiveBrokers), ctlUsed},
	{KeyControllerRaftSecretFile, TypeString, "", ctlUsed},
	{KeyControllerRaftTLSEnable, TypeBool, "false", ctlUsed},

	{"mappedFileSize", TypeInt, "1073741824", ctlJavaOnly},
	{"controllerThreadPoolNums", TypeInt, "16", ctlJavaOnly},
	{"jRaftElectionTimeoutMs", TypeInt, "1000", ctlJavaOnly},
	{"jRaftSnapshotIntervalSecs", TypeInt, "3600", ctlJavaOnly},
	{"jRaftScanWaitTimeoutMs", TypeInt, "1000", ctlJavaOnly},
	{"metricsExporterType", TypeString, "DISABLE", ctlJavaOnly},
	{"metricsGrpcExporterTarget", TypeString, "", ctlJavaOnly},
	{"metricsGrpcExporterHeader", TypeString, "", ctlJavaOnly},
	{"metricGrpcExporterTimeOutInMills", TypeInt64, "3000", ctlJavaOnly},
	{"metricGrpcExporterIntervalInMills", TypeInt64, "60000", ctlJavaOnly},
	{"metricLoggingExporterIntervalInMills", TypeInt64, "10000", ctlJavaOnly},
	{"metricsPromExporterPort", TypeInt, "5557", ctlJavaOnly},
	{"metricsPromExporterHost", TypeString, "", ctlJavaOnly},
	{"metricsLabel", TypeString, "", ctlJavaOnly},
	{"metricsInDelta", TypeBool, "false", ctlJavaOnly},
}

func lookupControllerKey(name string) (ctlKey, bool) {
	for _, k := range controllerKeys {
		if k.name == name {
			return k, true
		}
	}
	return ctlKey{}, false
}

// controllerReads reports whether the controller node reads key (a Java
// NameServer key among them: enableControllerInNamesrv starts it).
func controllerReads(key string) bool {
	k, ok := lookupControllerKey(key)
	return ok && k.use == ctlUsed
}

// ControllerKeyNames returns every controller key rocketns knows, sorted.
func ControllerKeyNames() []string {
	out := make([]string, len(controllerKeys))
	for i, k := range controllerKeys {
		out[i] = k.name
	}
	slices.Sort(out)
	return out
}

// javaControllerTuning reports whether an unknown key has the shape of a
// Java controller tuning key (jRaft, DLedger, metrics) that rocketns has no
// use for: accepted with a warning, like the Netty ones, rather than as an
// unknown key.
func javaControllerTuning(name string) bool {
	for _, p := range []string{"jRaft", "jraft", "dLedger", "dLeger", "dledger", "metric"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// checkControllerValue checks the value of a controller key as Apply checks
// the known keys' (nil for any other key).
func checkControllerValue(p properties.Property, src Source) error {
	k, ok := lookupControllerKey(p.Key)
	if !ok {
		return nil
	}
	_, err := parseValue(Key{Name: k.name, Type: k.typ}, p, src)
	return err
}

// controllerWarning is Apply's warning for a controller key kept in
// Extra: none for a key rocketns reads, one for a Java-only or Java tuning
// key. ok is false for keys that are not the controller's.
func controllerWarning(p properties.Property, where string) (warning string, ok bool) {
	if k, known := lookupControllerKey(p.Key); known {
		if k.use == ctlJavaOnly {
			return fmt.Sprintf("config: %s%s is a Java controller setting rocketns does not use; kept as is", p.Key, where), true
		}
		return "", true
	}
	if javaControllerTuning(p.Key) {
		return fmt.Sprintf("config: %s%s is not a setting of rocketns's controller (a Java raft or metrics tuning?); kept as is", p.Key, where), true
	}
	return "", false
}

// ctlValue is a controller key's value: set in Extra, else Java's default.
func (c *Config) ctlValue(name string) string {
	if v, ok := c.Extra[name]; ok {
		return javaTrim(v)
	}
	k, _ := lookupControllerKey(name)
	return k.def
}

func (c *Config) ctlBool(name string) bool { return strings.EqualFold(c.ctlValue(name), "true") }

func (c *Config) ctlInt(name string) int64 {
	n, _ := strconv.ParseInt(c.ctlValue(name), 10, 64)
	return n
}

// ControllerEnabled reports enableControllerInNamesrv: the NameServer then
// runs a controller node beside itself.
func (c *Config) ControllerEnabled() bool { return c.ctlBool(KeyEnableControllerInNamesrv) }

// Java's standalone controller defaults for the keys it shares with the
// NameServer.
const (
	controllerConfigBlackList = "configBlackList;configStorePath"
	standaloneListenPort      = 19876
)

// DefaultController returns the configuration a standalone Java controller
// starts with: the NameServer's defaults for the keys both read (Netty,
// TLS, logging, limits), Java's ControllerConfig values for configStorePath
// (${user.home}/controller/controller.properties) and configBlackList, and
// listenPort 19876 (ignored, as in Java: the ports come from the peers).
// The NameServer's own Java-only keys are left out, so 1010 lists what a
// Java controller lists.
func DefaultController() *Config {
	c := Default()
	home, _ := os.UserHomeDir()
	c.ConfigStorePath = filepath.Join(home, "controller", "controller.properties")
	c.ConfigBlackList = controllerConfigBlackList
	c.ListenPort = standaloneListenPort
	for _, k := range []string{"clientRequestThreadPoolNums", "defaultThreadPoolNums", "clientRequestThreadPoolQueueCapacity",
		"defaultThreadPoolQueueCapacity", KeyEnableControllerInNamesrv} {
		delete(c.Extra, k)
	}
	return c
}

// Controller is a controller node's settings, read from a Config by
// Config.Controller.
type Controller struct {
	// Embedded is set for a controller inside the NameServer.
	Embedded   bool
	Membership *membership.Membership
	// StorePath is controllerStorePath, the raft log and snapshots.
	StorePath                   string
	ScanNotActiveBrokerInterval time.Duration
	ScanInactiveMasterInterval  time.Duration
	ElectMasterMaxRetryCount    int
	EnableElectUncleanMaster    bool
	NotifyBrokerRoleChanged     bool
	ProcessReadEvent            bool
	RequestQueueCapacity        int
	// ConfigStorePath is where UPDATE_CONTROLLER_CONFIG persists;
	// ConfigBlackList the extra keys it refuses.
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
	// RaftTLS is controllerRaftTLSEnable: mutual TLS between members with
	// the tls.server.* certificate, key and trust files.
	RaftTLS bool

	// The keys the node shares with the NameServer: bindAddress,
	// serverChannelMaxIdleTimeSeconds (0 = never), frameMaxLength,
	// maxConnections.
	BindAddress        string
	IdleTimeoutSeconds int
	FrameMaxLength     int
	MaxConnections     int

	// ns is the configuration the node's shared keys come from.
	ns *Config
}

// controllerStorePath is controllerStorePath, or Java's default
// ${user.home}/<controllerType>Controller.
func (c *Config) controllerStorePath() string {
	if p := c.ctlValue(KeyControllerStorePath); p != "" {
		return p
	}
	style := "DLedger"
	if c.ctlValue(membership.KeyControllerType) == membership.ControllerTypeJRaft {
		style = membership.ControllerTypeJRaft
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, style+"Controller")
}

// Controller reads the controller node's settings from c: the controller
// keys (kept in Extra, checked by Apply), and the keys the node shares
// with the NameServer (bindAddress, scanNotActiveBrokerInterval,
// serverChannelMaxIdleTimeSeconds, the limits and TLS). Embedded in the
// NameServer, configStorePath and configBlackList are the NameServer's,
// so the controller keeps Java's ControllerConfig defaults for them
// instead (in Java both would read the file's value and overwrite each
// other's file); standalone, they are c's. Every problem is reported,
// joined.
func (c *Config) Controller(embedded bool) (*Controller, error) {
	var errs []error
	m, err := membership.Parse(func(key string) (string, bool) {
		v, ok := c.Extra[key]
		return v, ok
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("config: %w", err))
	}
	ms := func(name string) time.Duration { return time.Duration(c.ctlInt(name)) * time.Millisecond }
	k := &Controller{
		Embedded:                    embedded,
		Membership:                  m,
		StorePath:                   c.controllerStorePath(),
		ScanNotActiveBrokerInterval: time.Duration(c.ScanNotActiveBrokerInterval) * time.Millisecond,
		ScanInactiveMasterInterval:  ms(KeyScanInactiveMasterInt),
		ElectMasterMaxRetryCount:    int(c.ctlInt(KeyElectMasterMaxRetryCount)),
		EnableElectUncleanMaster:    c.ctlBool(KeyEnableElectUncleanMaster),
		NotifyBrokerRoleChanged:     c.ctlBool(KeyNotifyBrokerRoleChanged),
		ProcessReadEvent:            c.ctlBool(KeyProcessReadEvent),
		RequestQueueCapacity:        int(c.ctlInt(KeyControllerQueueCapacity)),
		ConfigStorePath:             c.ConfigStorePath,
		ConfigBlackList:             c.ConfigBlackList,
		RaftHeartbeatTimeout:        ms(KeyControllerRaftHeartbeatTimeout),
		RaftElectionTimeout:         ms(KeyControllerRaftElectionTimeout),
		RaftLeaderLeaseTimeout:      ms(KeyControllerRaftLeaderLeaseTimeout),
		MaxBrokerSets:               int(c.ctlInt(KeyControllerMaxBrokerSets)),
		MaxBrokersPerSet:            int(c.ctlInt(KeyControllerMaxBrokersPerSet)),
		MaxLiveBrokers:              int(c.ctlInt(KeyControllerMaxLiveBrokers)),
		RaftSecretFile:              c.ctlValue(KeyControllerRaftSecretFile),
		RaftTLS:                     c.ctlBool(KeyControllerRaftTLSEnable),
		BindAddress:                 c.BindAddress,
		IdleTimeoutSeconds:          c.ServerChannelMaxIdleTimeSeconds,
		FrameMaxLength:              c.FrameMaxLength,
		MaxConnections:              c.MaxConnections,
		ns:                          c,
	}
	if _, ok := c.Extra[KeyIsProcessReadEvent]; ok {
		// The field name 1010 lists (and a persisted 1010 view holds).
		k.ProcessReadEvent = c.ctlBool(KeyIsProcessReadEvent)
	}
	if embedded {
		home, _ := os.UserHomeDir()
		k.ConfigStorePath = filepath.Join(home, "controller", "controller.properties")
		k.ConfigBlackList = controllerConfigBlackList
	}
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config: "+format, args...)) }
	if strings.TrimSpace(k.StorePath) == "" {
		bad("%s is empty", KeyControllerStorePath)
	}
	if k.ScanInactiveMasterInterval <= 0 {
		bad("%s=%d: want a positive number of milliseconds", KeyScanInactiveMasterInt, c.ctlInt(KeyScanInactiveMasterInt))
	}
	if k.ElectMasterMaxRetryCount < 1 {
		bad("%s=%d: want at least 1 (Java would never elect)", KeyElectMasterMaxRetryCount, k.ElectMasterMaxRetryCount)
	}
	if k.RequestQueueCapacity < 1 {
		bad("%s=%d: want a positive number", KeyControllerQueueCapacity, k.RequestQueueCapacity)
	}
	for _, b := range []struct {
		key string
		v   int
	}{{KeyControllerMaxBrokerSets, k.MaxBrokerSets}, {KeyControllerMaxBrokersPerSet, k.MaxBrokersPerSet}, {KeyControllerMaxLiveBrokers, k.MaxLiveBrokers}} {
		if b.v < 1 || b.v > maxControllerBound {
			bad("%s=%d: want 1 to %d", b.key, b.v, maxControllerBound)
		}
	}
	errs = append(errs, k.checkRaft()...)
	errs = append(errs, k.readRaftSecurity(c)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return k, nil
}

// checkRaft checks the raft timings the way raft itself would refuse them,
// with the keys named: a heartbeat timeout of at least 5 ms, an election
// timeout not below it, a leader lease not above it.
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

// minRaftSecret is raftnode.MinSecretLen (copied, as the timings below).
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
	if k.RaftTLS {
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

// raftnode's defaults, which a zero timing stands for (raftnode.Default*;
// copied so that this package does not pull in the raft engine to check a
// number). A zero leader lease is the heartbeat timeout in effect.
const (
	raftDefaultHeartbeat = 500 * time.Millisecond
	raftDefaultElection  = 500 * time.Millisecond
)

// StartupProperties are the keys 1010 lists besides the node's own
// settings, as Java lists every key of its start-up file: the controller
// keys and Java-only or unknown keys c holds, and the NameServer's own
// settings when embedded (Java's embedded 1010 shows the NameServer's file
// keys too). The keys the node sets itself (ports, peers, intervals) win
// over these in the listing.
func (k *Controller) StartupProperties() map[string]string {
	out := make(map[string]string, len(k.ns.Extra)+8)
	for key, v := range k.ns.Extra {
		out[key] = v
	}
	out["rocketmqHome"] = k.ns.RocketmqHome
	out["configStorePath"] = k.ConfigStorePath
	out["configBlackList"] = k.ConfigBlackList
	if k.Embedded {
		for _, p := range k.ns.Properties() {
			if _, ok := out[p.Key]; !ok {
				out[p.Key] = p.Value
			}
		}
	}
	return out
}

// controllerProperties are every controller key with its value in c
// (Java's default when unset), controllerStorePath resolved: what -p
// prints for the controller.
func (c *Config) controllerProperties() []properties.Property {
	out := make([]properties.Property, 0, len(controllerKeys))
	for _, k := range controllerKeys {
		if k.name == KeyIsProcessReadEvent {
			continue // processReadEvent is printed; the field name is an alias
		}
		v := c.ctlValue(k.name)
		if k.name == KeyControllerStorePath {
			v = c.controllerStorePath()
		}
		out = append(out, properties.Property{Key: k.name, Value: v})
	}
	return out
}

// AppendTextWithController appends every setting of the NameServer and of
// its controller (whether enableControllerInNamesrv is on or not) as sorted
// key=value lines: namesrv -p.
func (c *Config) AppendTextWithController(dst []byte) []byte {
	props := c.Properties()
	seen := make(map[string]bool, len(props))
	for _, p := range props {
		seen[p.Key] = true
	}
	for _, p := range c.controllerProperties() {
		if !seen[p.Key] {
			props = append(props, p)
		}
	}
	slices.SortFunc(props, func(a, b properties.Property) int { return strings.Compare(a.Key, b.Key) })
	return properties.Append(dst, props)
}

// standaloneKeys are the NameServer-table keys a standalone controller
// reads: Netty's, the logging, limits, TLS, admin listener and
// authorization, and the ones ControllerConfig shares. Never modified.
var standaloneKeys = []string{
	"rocketmqHome", "configStorePath", "configBlackList", "scanNotActiveBrokerInterval",
	"bindAddress", "listenPort", "serverChannelMaxIdleTimeSeconds",
	"frameMaxLength", "logLevel", "logFormat",
	"maxConnections", "maxPendingResponseBytes", "maxPendingRequestBytes", "serverWriteTimeoutSeconds",
	KeyTLSServerMode, KeyTLSServerCertPath, KeyTLSServerKeyPath, KeyTLSServerKeyPassword, KeyTLSServerTrustCertPath,
	KeyTLSServerNeedClientAuth, KeyTLSServerAuthClient, KeyTLSTestModeEnable, KeyTLSConfigFile,
	KeyAdminListen,
	// The controller port enforces the NameServer's authorization keys.
	"authorizationEnable", "aclFile", "authorizeBrokerRegistration", "adminAllowCIDRs", "brokerAllowCIDRs",
	"aclStrictSignature", "aclStrictWindowSeconds",
}

// AppendControllerText appends a standalone controller's settings as
// sorted key=value lines: controller -p. The NameServer's own keys that a
// controller never reads (kvConfigPath, the route switches) are left out.
func (c *Config) AppendControllerText(dst []byte) []byte {
	var props []properties.Property
	for _, name := range standaloneKeys {
		k, _ := LookupKey(name)
		props = append(props, properties.Property{Key: name, Value: k.Value(c)})
	}
	for _, p := range c.controllerProperties() {
		if p.Key != KeyEnableControllerInNamesrv { // the NameServer's
			props = append(props, p)
		}
	}
	seen := map[string]bool{KeyEnableControllerInNamesrv: true}
	for _, p := range props {
		seen[p.Key] = true
	}
	for key, v := range c.Extra {
		if _, known := LookupKey(key); !known && !seen[key] {
			props = append(props, properties.Property{Key: key, Value: v})
		}
	}
	slices.SortFunc(props, func(a, b properties.Property) int { return strings.Compare(a.Key, b.Key) })
	return properties.Append(dst, props)
}
