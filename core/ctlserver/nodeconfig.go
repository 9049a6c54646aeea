// The node-local configuration GET_CONTROLLER_CONFIG (1010) shows and
// UPDATE_CONTROLLER_CONFIG (1009) changes: the hook a properties-backed
// store implements, and the in-memory store used when none is given.

package ctlserver

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/raftnode/membership"
)

// Property is one key and value of a 1009 body, in body order.
type Property = properties.Property

// Refusals a ConfigStore's Update wraps: 1009 answers ErrBlackListed with
// 16 NO_PERMISSION "Can not update config in black list.", as Java does,
// and ErrNotRuntime (a key that is not a run-time setting: a path, a peer,
// a port) with 16 and the error's text as the remark.
var (
	ErrBlackListed = errors.New("key in the config black list")
	ErrNotRuntime  = errors.New("not a run-time setting")
	// ErrNotPersisted: the update could not be written and was not
	// applied; the error names the file, which the answer must not.
	ErrNotPersisted = errors.New("the configuration file could not be written")
)

// ConfigStore is a node's configuration as 1009 and 1010 see it. It is
// node-local (never replicated). Implementations must be safe for
// concurrent use.
type ConfigStore interface {
	// Text is the 1010 body: properties text, one key=value line per key.
	Text() []byte
	// Update applies the properties of a 1009 body (never empty) and
	// returns the run-time settings in force afterwards. A refusal is an
	// error, wrapping ErrBlackListed for a black-listed key; any other
	// error is answered SYSTEM_ERROR with its text.
	Update(props []Property) (RuntimeSettings, error)
	// Runtime is the run-time settings in force now, read at start-up.
	Runtime() RuntimeSettings
}

// Run-time keys, as Java's field names spell them in 1009 and 1010.
const (
	keyNotifyBrokerRoleChanged  = "notifyBrokerRoleChanged"
	keyEnableElectUncleanMaster = "enableElectUncleanMaster"
	keyElectMasterMaxRetryCount = "electMasterMaxRetryCount"
	keyProcessReadEvent         = "isProcessReadEvent"
	keyConfigBlackList          = "configBlackList"
)

// MemoryConfig is a ConfigStore kept in memory only: the keys a Java 5.3.3
// controller lists (its ControllerConfig and NettyServerConfig fields)
// with this node's values, plus any extra start-up keys. As in Java a 1009
// changes only keys already listed (others are ignored) and refuses a
// black-listed key. Unlike Java it is all or nothing: a run-time key whose
// value does not parse refuses the whole update. It does not persist.
type MemoryConfig struct {
	mu        sync.Mutex
	props     map[string]string
	blackList map[string]bool
	runtime   RuntimeSettings
}

// NewMemoryConfig lists c's settings under Java's keys, over extra (the
// start-up properties file, whose keys are listed too and lose to c's).
// configBlackList is read from the result once, as Java reads it at
// start-up.
func NewMemoryConfig(c *Config, extra map[string]string) *MemoryConfig {
	props := JavaProperties(c, extra)
	mc := &MemoryConfig{props: props, blackList: map[string]bool{}, runtime: c.Runtime()}
	for _, k := range []string{keyConfigBlackList, "configStorePath", "rocketmqHome"} {
		mc.blackList[k] = true
	}
	for _, k := range strings.Split(props[keyConfigBlackList], ";") {
		if k = strings.TrimSpace(k); k != "" {
			mc.blackList[k] = true
		}
	}
	return mc
}

// JavaProperties lists c's settings under the keys a Java 5.3.3 controller
// lists in 1010 (its ControllerConfig and NettyServerConfig fields, with
// Java's field names: isProcessReadEvent, jraftConfig, listenPort the
// broker-facing port), over extra (the start-up properties, whose keys
// are listed too and lose to c's). A ConfigStore starts from it.
func JavaProperties(c *Config, extra map[string]string) map[string]string {
	props := make(map[string]string, len(extra)+48)
	for k, v := range extra {
		props[k] = v
	}
	setDefault := func(k, v string) {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	// Keys a properties mapping supplies (paths, the home directory);
	// Java's defaults otherwise, and rocketmqHome only when known.
	setDefault("configStorePath", "controller/controller.properties")
	setDefault(keyConfigBlackList, "configBlackList;configStorePath")
	setDefault("controllerStorePath", c.StoreDir)
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	b := strconv.FormatBool
	bind := c.BindAddress
	if bind == "" {
		bind = "0.0.0.0"
	}
	m := c.Membership
	self := m.Self()
	_, port, _ := net.SplitHostPort(self.ServeAddr)
	idle := int64(c.IdleTimeout / time.Second)
	if c.IdleTimeout < 0 {
		idle = 0
	}
	fixed := map[string]string{
		"bindAddress": bind,
		"controllerRequestThreadPoolQueueCapacity": strconv.Itoa(c.RequestQueueCapacity),
		"controllerThreadPoolNums":                 "16",
		"controllerType":                           m.Style.String(),
		keyElectMasterMaxRetryCount:                strconv.Itoa(c.ElectMasterMaxRetryCount),
		keyEnableElectUncleanMaster:                b(c.EnableElectUncleanMaster),
		"enableShutdownGracefully":                 "false",
		keyProcessReadEvent:                        b(c.ProcessReadEvent),
		"jraftConfig":                              jraftConfigText(m),
		"listenPort":                               port,
		"mappedFileSize":                           "1073741824",
		keyNotifyBrokerRoleChanged:                 b(c.NotifyBrokerRoleChanged),
		"scanInactiveMasterInterval":               ms(c.ScanInactiveMasterInterval),
		"scanNotActiveBrokerInterval":              ms(c.ScanNotActiveBrokerInterval),
		"serverChannelMaxIdleTimeSeconds":          strconv.FormatInt(idle, 10),
	}
	if m.Style == membership.DLedger {
		peers := make([]string, len(m.Peers))
		for i, p := range m.Peers {
			peers[i] = p.ID + "-" + p.RaftAddr
		}
		fixed["controllerDLegerPeers"] = strings.Join(peers, ";")
		fixed["controllerDLegerSelfId"] = m.SelfID
		if m.Group != "" {
			fixed["controllerDLegerGroup"] = m.Group
		}
	}
	for k, v := range fixed {
		props[k] = v
	}
	// Settings this server does not have, with Java's values, so that
	// the listing is the one mqadmin knows.
	for k, v := range javaOnlyDefaults {
		setDefault(k, v)
	}
	return props
}

// javaOnlyDefaults are the keys of a Java 5.3.3 controller's 1010 that no
// setting here corresponds to (metrics exporters, Netty tuning).
var javaOnlyDefaults = map[string]string{
	"metricGrpcExporterIntervalInMills":    "60000",
	"metricGrpcExporterTimeOutInMills":     "3000",
	"metricLoggingExporterIntervalInMills": "10000",
	"metricsExporterType":                  "DISABLE",
	"metricsGrpcExporterHeader":            "",
	"metricsGrpcExporterTarget":            "",
	"metricsInDelta":                       "false",
	"metricsLabel":                         "",
	"metricsPromExporterHost":              "",
	"metricsPromExporterPort":              "5557",
	"serverAsyncSemaphoreValue":            "64",
	"serverCallbackExecutorThreads":        "0",
	"serverNettyWorkerGroupEnable":         "true",
	"serverOnewaySemaphoreValue":           "256",
	"serverPooledByteBufAllocatorEnable":   "true",
	"serverSelectorThreads":                "3",
	"serverSocketBacklog":                  "1024",
	"serverSocketRcvBufSize":               "0",
	"serverSocketSndBufSize":               "0",
	"serverWorkerThreads":                  "8",
	"shutdownWaitTimeSeconds":              "30",
	"useEpollNativeSelector":               "false",
	"writeBufferHighWaterMark":             "0",
	"writeBufferLowWaterMark":              "0",
}

// jraftConfigText is what Java's 1010 shows for its JraftConfig object:
// its class name and identity hash, here a hash of the group.
func jraftConfigText(m *membership.Membership) string {
	h := fnv.New32a()
	h.Write([]byte(m.Group))
	return fmt.Sprintf("org.apache.rocketmq.common.JraftConfig@%x", h.Sum32())
}

// Text implements ConfigStore: every key sorted, key=value\n as Java's
// MixAll.properties2String writes them (no escaping).
func (mc *MemoryConfig) Text() []byte {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return AppendJavaText(nil, mc.props)
}

// AppendJavaText appends props as a Java 1010 body: every key sorted,
// key=value\n as Java's MixAll.properties2String writes them (no
// escaping).
func AppendJavaText(dst []byte, props map[string]string) []byte {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = append(dst, props[k]...)
		dst = append(dst, '\n')
	}
	return dst
}

// Update implements ConfigStore.
func (mc *MemoryConfig) Update(props []Property) (RuntimeSettings, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for _, p := range props {
		if mc.blackList[p.Key] {
			return mc.runtime, fmt.Errorf("%s: %w", p.Key, ErrBlackListed)
		}
	}
	rt := mc.runtime
	for _, p := range props {
		v := strings.TrimSpace(p.Value)
		switch p.Key {
		case keyNotifyBrokerRoleChanged:
			rt.NotifyBrokerRoleChanged = javaBool(v)
		case keyEnableElectUncleanMaster:
			rt.EnableElectUncleanMaster = javaBool(v)
		case keyProcessReadEvent, "processReadEvent":
			// 1010 lists the field name; Java's setter reads the bean
			// name. Either changes the setting here.
			rt.ProcessReadEvent = javaBool(v)
		case keyElectMasterMaxRetryCount:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return mc.runtime, fmt.Errorf("%s=%q is not an int", p.Key, p.Value)
			}
			rt.ElectMasterMaxRetryCount = int(n)
		}
	}
	for _, p := range props {
		k := p.Key
		if k == "processReadEvent" {
			k = keyProcessReadEvent
		}
		if _, ok := mc.props[k]; ok {
			mc.props[k] = p.Value
		}
	}
	mc.runtime = rt
	return rt, nil
}

// Runtime implements ConfigStore.
func (mc *MemoryConfig) Runtime() RuntimeSettings {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return mc.runtime
}

// javaBool is Boolean.parseBoolean.
func javaBool(s string) bool { return strings.EqualFold(s, "true") }
