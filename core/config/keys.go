// The table of configuration keys: which Config field each Java key sets, how
// its value is parsed, and the Java keys rocketns accepts without using.

package config

// Type is how a key's value is parsed.
type Type uint8

const (
	TypeString Type = iota // trimmed, like Java's String setters
	TypeBool               // true/false, case-insensitive; anything else is an error
	TypeInt                // 32-bit signed decimal
	TypeInt64              // 64-bit signed decimal
)

func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeBool:
		return "bool"
	case TypeInt:
		return "int"
	case TypeInt64:
		return "int64"
	}
	return "unknown"
}

// Origin says which Java config object a key belongs to.
type Origin uint8

const (
	OriginNamesrv     Origin = iota // NamesrvConfig
	OriginNettyServer               // NettyServerConfig
	OriginNettyClient               // NettyClientConfig (read from -c by Java, never printed by 319)
	OriginRocketns                  // rocketns's own settings
)

// Key describes one known configuration key.
type Key struct {
	Name   string
	Type   Type
	Origin Origin
	// Live is true for settings the server reads at request time, so an
	// UPDATE_NAMESRV_CONFIG changes behaviour at once; the others only take
	// effect at the next start (as in Java, where they are only persisted).
	Live bool

	strPtr  func(*Config) *string
	boolPtr func(*Config) *bool
	intPtr  func(*Config) *int
	i64Ptr  func(*Config) *int64
}

func strKey(name string, o Origin, live bool, f func(*Config) *string) Key {
	return Key{Name: name, Type: TypeString, Origin: o, Live: live, strPtr: f}
}

func boolKey(name string, o Origin, live bool, f func(*Config) *bool) Key {
	return Key{Name: name, Type: TypeBool, Origin: o, Live: live, boolPtr: f}
}

func intKey(name string, o Origin, live bool, f func(*Config) *int) Key {
	return Key{Name: name, Type: TypeInt, Origin: o, Live: live, intPtr: f}
}

func int64Key(name string, o Origin, live bool, f func(*Config) *int64) Key {
	return Key{Name: name, Type: TypeInt64, Origin: o, Live: live, i64Ptr: f}
}

// knownKeys covers every Config field except Extra. It is never modified.
var knownKeys = append(boundsKeys(), []Key{
	strKey("rocketmqHome", OriginNamesrv, false, func(c *Config) *string { return &c.RocketmqHome }),
	strKey("kvConfigPath", OriginNamesrv, false, func(c *Config) *string { return &c.KVConfigPath }),
	strKey("configStorePath", OriginNamesrv, false, func(c *Config) *string { return &c.ConfigStorePath }),
	strKey("productEnvName", OriginNamesrv, false, func(c *Config) *string { return &c.ProductEnvName }),
	boolKey("clusterTest", OriginNamesrv, false, func(c *Config) *bool { return &c.ClusterTest }),
	boolKey("orderMessageEnable", OriginNamesrv, true, func(c *Config) *bool { return &c.OrderMessageEnable }),
	boolKey("returnOrderTopicConfigToBroker", OriginNamesrv, true, func(c *Config) *bool { return &c.ReturnOrderTopicConfigToBroker }),
	int64Key("scanNotActiveBrokerInterval", OriginNamesrv, false, func(c *Config) *int64 { return &c.ScanNotActiveBrokerInterval }),
	intKey("unRegisterBrokerQueueCapacity", OriginNamesrv, false, func(c *Config) *int { return &c.UnRegisterBrokerQueueCapacity }),
	boolKey("supportActingMaster", OriginNamesrv, true, func(c *Config) *bool { return &c.SupportActingMaster }),
	boolKey("enableAllTopicList", OriginNamesrv, true, func(c *Config) *bool { return &c.EnableAllTopicList }),
	boolKey("enableTopicList", OriginNamesrv, true, func(c *Config) *bool { return &c.EnableTopicList }),
	boolKey("notifyMinBrokerIdChanged", OriginNamesrv, true, func(c *Config) *bool { return &c.NotifyMinBrokerIdChanged }),
	boolKey("needWaitForService", OriginNamesrv, true, func(c *Config) *bool { return &c.NeedWaitForService }),
	intKey("waitSecondsForService", OriginNamesrv, true, func(c *Config) *int { return &c.WaitSecondsForService }),
	boolKey("deleteTopicWithBrokerRegistration", OriginNamesrv, true, func(c *Config) *bool { return &c.DeleteTopicWithBrokerRegistration }),
	strKey("configBlackList", OriginNamesrv, true, func(c *Config) *string { return &c.ConfigBlackList }),

	strKey("bindAddress", OriginNettyServer, false, func(c *Config) *string { return &c.BindAddress }),
	intKey("listenPort", OriginNettyServer, false, func(c *Config) *int { return &c.ListenPort }),
	intKey("serverChannelMaxIdleTimeSeconds", OriginNettyServer, false, func(c *Config) *int { return &c.ServerChannelMaxIdleTimeSeconds }),

	intKey("frameMaxLength", OriginRocketns, false, func(c *Config) *int { return &c.FrameMaxLength }),
	strKey("logLevel", OriginRocketns, false, func(c *Config) *string { return &c.LogLevel }),
	strKey("logFormat", OriginRocketns, false, func(c *Config) *string { return &c.LogFormat }),
	strKey(KeyLogFile, OriginRocketns, false, func(c *Config) *string { return &c.LogFile }),
	intKey(KeyLogMaxSizeMB, OriginRocketns, false, func(c *Config) *int { return &c.LogMaxSizeMB }),
	intKey(KeyLogMaxAgeDays, OriginRocketns, false, func(c *Config) *int { return &c.LogMaxAgeDays }),
	intKey(KeyLogMaxBackups, OriginRocketns, false, func(c *Config) *int { return &c.LogMaxBackups }),
	boolKey(KeyLogCompress, OriginRocketns, false, func(c *Config) *bool { return &c.LogCompress }),
	boolKey(KeyStrictConfig, OriginRocketns, false, func(c *Config) *bool { return &c.StrictConfig }),

	boolKey("authorizationEnable", OriginRocketns, false, func(c *Config) *bool { return &c.AuthorizationEnable }),
	strKey("aclFile", OriginRocketns, false, func(c *Config) *string { return &c.ACLFile }),
	boolKey("authorizeBrokerRegistration", OriginRocketns, false, func(c *Config) *bool { return &c.AuthorizeBrokerRegistration }),
	strKey("adminAllowCIDRs", OriginRocketns, false, func(c *Config) *string { return &c.AdminAllowCIDRs }),
	strKey("brokerAllowCIDRs", OriginRocketns, false, func(c *Config) *string { return &c.BrokerAllowCIDRs }),
	boolKey("aclStrictSignature", OriginRocketns, false, func(c *Config) *bool { return &c.ACLStrictSignature }),
	intKey("aclStrictWindowSeconds", OriginRocketns, false, func(c *Config) *int { return &c.ACLStrictWindowSeconds }),

	intKey("maxConnections", OriginRocketns, false, func(c *Config) *int { return &c.MaxConnections }),
	intKey("maxPendingResponseBytes", OriginRocketns, false, func(c *Config) *int { return &c.MaxPendingResponseBytes }),
	intKey("maxPendingRequestBytes", OriginRocketns, false, func(c *Config) *int { return &c.MaxPendingRequestBytes }),
	intKey("serverWriteTimeoutSeconds", OriginRocketns, false, func(c *Config) *int { return &c.ServerWriteTimeoutSeconds }),
	intKey("maxConnectionsPerIP", OriginRocketns, false, func(c *Config) *int { return &c.MaxConnectionsPerIP }),
	intKey("reservedConnections", OriginRocketns, false, func(c *Config) *int { return &c.ReservedConnections }),
	intKey("maxBufferedBytes", OriginRocketns, false, func(c *Config) *int { return &c.MaxBufferedBytes }),
	intKey("maxTopicsPerBroker", OriginRocketns, false, func(c *Config) *int { return &c.MaxTopicsPerBroker }),
	intKey("maxTopics", OriginRocketns, false, func(c *Config) *int { return &c.MaxTopics }),

	strKey(KeyTLSServerMode, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerMode }),
	strKey(KeyTLSServerCertPath, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerCertPath }),
	strKey(KeyTLSServerKeyPath, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerKeyPath }),
	strKey(KeyTLSServerKeyPassword, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerKeyPassword }),
	strKey(KeyTLSServerTrustCertPath, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerTrustCertPath }),
	strKey(KeyTLSServerNeedClientAuth, OriginRocketns, false, func(c *Config) *string { return &c.TLSServerNeedClientAuth }),
	boolKey(KeyTLSServerAuthClient, OriginRocketns, false, func(c *Config) *bool { return &c.TLSServerAuthClient }),
	boolKey(KeyTLSTestModeEnable, OriginRocketns, false, func(c *Config) *bool { return &c.TLSTestModeEnable }),
	strKey(KeyTLSConfigFile, OriginRocketns, false, func(c *Config) *string { return &c.TLSConfigFile }),

	strKey(KeyAdminListen, OriginRocketns, false, func(c *Config) *string { return &c.AdminListen }),
	strKey(KeyNsaddrList, OriginRocketns, false, func(c *Config) *string { return &c.NsaddrList }),
}...)

// Keys returns the known keys, in no particular order. The slice is a copy.
func Keys() []Key {
	return append([]Key(nil), knownKeys...)
}

// LookupKey returns the known key called name (case-sensitive, like Java's
// setter lookup).
func LookupKey(name string) (Key, bool) {
	for _, k := range knownKeys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// javaOnlyDefault is a NamesrvConfig or NettyServerConfig setting rocketns
// accepts and keeps but does not act on (thread pools, Netty buffers, the
// embedded controller). Java prints these in GET_NAMESRV_CONFIG with their
// defaults, so Default seeds them into Extra.
type javaOnlyDefault struct {
	name  string
	value string
}

// javaOnlyNamesrvCount is how many of javaOnlyDefaults, from the start,
// are NamesrvConfig settings; the rest are NettyServerConfig's.
const javaOnlyNamesrvCount = 5

// javaOnlyDefaults is never modified.
var javaOnlyDefaults = []javaOnlyDefault{
	// NamesrvConfig.
	{"clientRequestThreadPoolNums", "8"},
	{"defaultThreadPoolNums", "16"},
	{"clientRequestThreadPoolQueueCapacity", "50000"},
	{"defaultThreadPoolQueueCapacity", "10000"},
	{"enableControllerInNamesrv", "false"},

	// NettyServerConfig.
	{"serverWorkerThreads", "8"},
	{"serverCallbackExecutorThreads", "0"},
	{"serverSelectorThreads", "3"},
	{"serverOnewaySemaphoreValue", "256"},
	{"serverAsyncSemaphoreValue", "64"},
	{"serverSocketSndBufSize", "0"},
	{"serverSocketRcvBufSize", "0"},
	{"writeBufferHighWaterMark", "0"},
	{"writeBufferLowWaterMark", "0"},
	{"serverSocketBacklog", "1024"},
	{"serverPooledByteBufAllocatorEnable", "true"},
	{"serverNettyWorkerGroupEnable", "true"},
	{"useEpollNativeSelector", "false"},
	{"enableShutdownGracefully", "false"},
	{"shutdownWaitTimeSeconds", "30"},
}

// nettyClientKeys are NettyClientConfig settings. Java reads them from the -c
// file (its client only sends NOTIFY_MIN_BROKER_ID_CHANGE) but does not print
// them in GET_NAMESRV_CONFIG unless the file set them. Never modified.
var nettyClientKeys = []string{
	"clientWorkerThreads", "clientCallbackExecutorThreads", "clientOnewaySemaphoreValue",
	"clientAsyncSemaphoreValue", "connectTimeoutMillis", "channelNotActiveInterval",
	"clientChannelMaxIdleTimeSeconds", "clientSocketSndBufSize", "clientSocketRcvBufSize",
	"clientPooledByteBufAllocatorEnable", "clientCloseSocketIfTimeout", "useTLS", "socksProxyConfig",
	"disableCallbackExecutor", "disableNettyWorkerGroup", "maxReconnectIntervalTimeSeconds",
	"enableReconnectForGoAway", "enableTransparentRetry",
}

// IsJavaOnlyKey reports whether name is a Java setting rocketns accepts but
// has no use for.
func IsJavaOnlyKey(name string) bool {
	for _, k := range javaOnlyDefaults {
		if k.name == name {
			return !controllerReads(name)
		}
	}
	for _, k := range nettyClientKeys {
		if k == name {
			return true
		}
	}
	return false
}

// JavaKey is a Java NameServer setting and what rocketns does with it.
type JavaKey struct {
	Name string
	// Default is Java's default as GET_NAMESRV_CONFIG prints it; "" for the
	// NettyClientConfig keys, which Java does not print.
	Default string
	// Class is the Java config class: NamesrvConfig, NettyServerConfig or
	// NettyClientConfig.
	Class string
	// Used: rocketns acts on it (a Config field, or a key the controller
	// reads: enableControllerInNamesrv); otherwise it is accepted, kept and
	// printed, and has no effect.
	Used bool
}

// JavaKeys lists the Java NameServer settings rocketns accepts: those it
// uses, then those it ignores, each group in the order of Java's classes.
// The migration guide's tables are generated from it.
func JavaKeys() []JavaKey {
	var out []JavaKey
	d := Default()
	for _, k := range knownKeys {
		switch k.Origin {
		case OriginNamesrv:
			out = append(out, JavaKey{Name: k.Name, Default: k.Value(d), Class: "NamesrvConfig", Used: true})
		case OriginNettyServer:
			out = append(out, JavaKey{Name: k.Name, Default: k.Value(d), Class: "NettyServerConfig", Used: true})
		}
	}
	for i, j := range javaOnlyDefaults {
		class := "NettyServerConfig"
		if i < javaOnlyNamesrvCount {
			class = "NamesrvConfig"
		}
		out = append(out, JavaKey{Name: j.name, Default: j.value, Class: class, Used: controllerReads(j.name)})
	}
	for _, n := range nettyClientKeys {
		out = append(out, JavaKey{Name: n, Class: "NettyClientConfig"})
	}
	return out
}
