// config.go holds Config, every setting the NameServer and the controller
// read.

package config

// Config is every setting the NameServer reads, and the controller's keys
// (in Extra). Field names follow the Java keys (listenPort -> ListenPort);
// durations keep Java's units so a namesrv.properties file means the same
// thing here. The table (table.go) says which key sets which field.
type Config struct {
	// NamesrvConfig.
	RocketmqHome                      string
	KVConfigPath                      string // kvConfigPath
	ConfigStorePath                   string
	ProductEnvName                    string
	ClusterTest                       bool
	OrderMessageEnable                bool
	ReturnOrderTopicConfigToBroker    bool
	ScanNotActiveBrokerInterval       int64 // ms
	UnRegisterBrokerQueueCapacity     int
	SupportActingMaster               bool
	EnableAllTopicList                bool
	EnableTopicList                   bool
	NotifyMinBrokerIdChanged          bool
	NeedWaitForService                bool
	WaitSecondsForService             int
	DeleteTopicWithBrokerRegistration bool
	ConfigBlackList                   string
	// EnableControllerInNamesrv runs a controller node beside the
	// NameServer.
	EnableControllerInNamesrv bool

	// NettyServerConfig.
	BindAddress                     string
	ListenPort                      int
	ServerChannelMaxIdleTimeSeconds int

	// rocketns's own.
	FrameMaxLength int    // frameMaxLength: whole frame incl. the 4-byte prefix, like Java's com.rocketmq.remoting.frameMaxLength
	LogLevel       string // logLevel: debug|info|warn|error
	LogFormat      string // logFormat: text|json

	// Log file (README "Logs"): empty logs to stderr only.
	LogFile       string // logFile: path of the log file, rotated by size
	LogMaxSizeMB  int    // logMaxSizeMB: rotate when the file reaches this size
	LogMaxAgeDays int    // logMaxAgeDays: delete rotated files older than this; 0 = by count only
	LogMaxBackups int    // logMaxBackups: rotated files kept; 0 = all (within logMaxAgeDays)
	LogCompress   bool   // logCompress: gzip rotated files

	// StrictConfig (strictConfig) refuses unknown keys instead of warning
	// about them.
	StrictConfig bool

	// Authorization (README "Security"); none of these can change at run
	// time.
	AuthorizationEnable         bool   // authorizationEnable: protected codes need an ACL signature
	ACLFile                     string // aclFile: accessKey:secretKey:role lines
	AuthorizeBrokerRegistration bool   // authorizeBrokerRegistration: 103/322/904 need one too
	AdminAllowCIDRs             string // adminAllowCIDRs: protected codes only from these networks
	// Broker trust (README "Security"), also start-up only.
	BrokerAllowCIDRs       string // brokerAllowCIDRs: brokers' codes from these networks; "" = adminAllowCIDRs
	ACLStrictSignature     bool   // aclStrictSignature: every account must use the strict signature scheme
	ACLStrictWindowSeconds int    // aclStrictWindowSeconds: how far a strict signature's time may be from now

	// Limits (rocketns's own; see README "Limits").
	MaxConnections            int // maxConnections: connections beyond it are closed at accept
	MaxPendingResponseBytes   int // maxPendingResponseBytes: unflushed response bytes per connection before a flush
	MaxPendingRequestBytes    int // maxPendingRequestBytes: unread request bytes per connection before it is closed
	ServerWriteTimeoutSeconds int // serverWriteTimeoutSeconds: a flush that cannot finish in this time closes the connection
	MaxConnectionsPerIP       int // maxConnectionsPerIP: connections from one source address beyond it are closed at accept
	ReservedConnections       int // reservedConnections: of maxConnections, kept for adminAllowCIDRs and brokerAllowCIDRs when set
	MaxBufferedBytes          int // maxBufferedBytes: request and response bytes all connections hold buffered; 0 = from GOMEMLIMIT
	MaxTopicsPerBroker        int // maxTopicsPerBroker: topics one registration may carry
	MaxTopics                 int // maxTopics: topics the route table holds, all brokers together
	MaxTopicsPerSource        int // maxTopicsPerSource: topics the registrations from one host may bring; 0 = no quota
	HeavyBusyPercent          int // heavyBusyPercent: of their time, how much the heavy-request turns may be busy in a storm

	// Bounds that keep one request from costing every peer (README
	// "Limits"): a KV entry large enough to make registration replies
	// unframeable, a heartbeat timeout whose expiry overflows.
	KVMaxKeyBytes       int // kvMaxKeyBytes: a KV key or namespace name
	KVMaxValueBytes     int // kvMaxValueBytes: a KV value
	KVMaxNamespaceBytes int // kvMaxNamespaceBytes: one namespace, keys and values, as its JSON counts them
	KVMaxTotalBytes     int // kvMaxTotalBytes: every namespace together (the kvConfig.json file, roughly)
	// MaxHeartbeatTimeoutMillis (maxHeartbeatTimeoutMillis) caps the
	// heartbeatTimeoutMillis a broker registers with.
	MaxHeartbeatTimeoutMillis int64

	// TLS, with the Java system-property names (TlsSystemConfig), accepted
	// in the -c file and in tls.config.file.
	TLSServerMode           string // tls.server.mode: disabled|permissive|enforcing; empty picks one (see Config.TLS)
	TLSServerCertPath       string // tls.server.certPath: PEM certificate chain
	TLSServerKeyPath        string // tls.server.keyPath: PEM private key
	TLSServerKeyPassword    string // tls.server.keyPassword: unsupported, must stay empty
	TLSServerTrustCertPath  string // tls.server.trustCertPath: PEM CAs that client certificates must chain to
	TLSServerNeedClientAuth string // tls.server.need.client.auth: none|optional|require
	TLSServerAuthClient     bool   // tls.server.authClient: verify client certificates against the trust file
	TLSTestModeEnable       bool   // tls.test.mode.enable: serve a self-signed certificate generated at start
	TLSConfigFile           string // tls.config.file: properties file overriding the tls.* keys but tls.server.mode

	// Admin HTTP listener (README "Admin HTTP listener and metrics").
	AdminListen string // adminListen: host:port of /metrics, /healthz, /readyz, /rocketmq/nsaddr and the status page; empty = off
	NsaddrList  string // nsaddrList: the ip:port;ip:port answer of /rocketmq/nsaddr; empty = 404

	// Warm restart (docs/operations.md): the route table's snapshot.
	RouteSnapshotEnable     bool   // routeSnapshotEnable: write the route snapshot and load it at start
	RouteSnapshotPath       string // routeSnapshotPath: its file; "" = routes.snapshot beside kvConfigPath
	RouteSnapshotIntervalMs int64  // routeSnapshotIntervalMs: at most one background write per interval
	// The copy from another NameServer when there is no usable snapshot.
	RouteSnapshotPeerCopy      bool   // routeSnapshotPeerCopy: copy the table from a peer at a cold start
	RouteSnapshotPeers         string // routeSnapshotPeers: host:port;host:port; "" = nsaddrList
	RouteSnapshotPeerTimeoutMs int64  // routeSnapshotPeerTimeoutMs: the bound on one peer's answer
	RouteSnapshotPeerAccessKey string // routeSnapshotPeerAccessKey: the aclFile account that signs the copy; "" = unsigned

	// Extra holds, as written, the keys that set no field: the
	// controller's (read into a Controller), the Java-only settings
	// (seeded with Java's defaults by Default) and unknown keys from a
	// config file. Java keeps such keys in its Configuration and prints them
	// in GET_NAMESRV_CONFIG, so rocketns keeps them too.
	Extra map[string]string

	// sources says where each key's value came from (Source); keys not in
	// it have their default.
	sources map[string]Source
}
