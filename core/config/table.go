// The table of every configuration key: the one place a setting is
// defined. Parsing, defaults, ranges, -p, GET_NAMESRV_CONFIG (319) and
// GET_CONTROLLER_CONFIG (1010), the run-time updates (318, 1009), the
// ROCKETNS_ variables, the suggestions for misspelt keys and the docs'
// tables (docs/configuration.md, the README's main settings, the
// migration guide's Java keys) are all read from it.

package config

import "github.com/rocketns/rocketns/core/raftnode/membership"

// Keys of the controller that the code names.
const (
	KeyEnableControllerInNamesrv = "enableControllerInNamesrv"
	KeyControllerStorePath       = "controllerStorePath"
	// rocketns's raft timings (0 = the raftnode defaults).
	KeyControllerRaftHeartbeatTimeout   = "controllerRaftHeartbeatTimeoutMs"
	KeyControllerRaftElectionTimeout    = "controllerRaftElectionTimeoutMs"
	KeyControllerRaftLeaderLeaseTimeout = "controllerRaftLeaderLeaseTimeoutMs"
	// rocketns's raft security.
	KeyControllerRaftSecretFile = "controllerRaftSecretFile"
	KeyControllerRaftTLSEnable  = "controllerRaftTLSEnable"
	// The bound on a node's liveness table.
	KeyControllerMaxLiveBrokers = "controllerMaxLiveBrokers"
)

// Keys of the route snapshot's peer copy that the checks name.
const (
	KeyRouteSnapshotPeerCopy      = "routeSnapshotPeerCopy"
	KeyRouteSnapshotPeers         = "routeSnapshotPeers"
	KeyRouteSnapshotPeerAccessKey = "routeSnapshotPeerAccessKey"
)

// Defaults of the controller's state bounds: far above any real cluster (a
// few hundred broker sets of two or three brokers, a few more ids where
// brokers lost their identity files), far below what exhausts a node: a
// flood up to all three (short names) grew a node's live heap by about
// 13 MiB.
const (
	DefaultControllerMaxBrokerSets    = 4096
	DefaultControllerMaxBrokersPerSet = 32
	DefaultControllerMaxLiveBrokers   = 16384
)

// table is every key, grouped as the docs show them. Java-only keys of
// NamesrvConfig and NettyServerConfig have string defaults: their values
// are kept as written and never checked, as a Java file may hold any of
// them and nothing here reads them.
var table = []Key{
	// NettyServerConfig and NamesrvConfig.
	{Name: "listenPort", Default: 9876, ctlDefault: 19876, Range: between(0, 65535), Class: ClassNettyServer, Roles: RoleBoth, Main: true,
		Doc:   "TCP port for brokers, clients and admin tools; the controller ignores it, as Java's does (its ports come from the peers)",
		field: func(c *Config) any { return &c.ListenPort }},
	{Name: "bindAddress", Default: "0.0.0.0", Class: ClassNettyServer, Roles: RoleBoth, Main: true,
		Doc:   "the IP address to listen on (empty: every interface); no name is resolved",
		field: func(c *Config) any { return &c.BindAddress }, node: func(k *Controller) any { return &k.BindAddress }},
	{Name: "serverChannelMaxIdleTimeSeconds", Default: 120, Unit: "s", Range: atLeast(0), Class: ClassNettyServer, Roles: RoleBoth,
		Doc:   "a connection with nothing read or written for this long is closed, its brokers with it (as Java); also bounds the wait for the rest of a partial frame; `0` never",
		field: func(c *Config) any { return &c.ServerChannelMaxIdleTimeSeconds }, node: func(k *Controller) any { return &k.IdleTimeout }},
	{Name: "rocketmqHome", Default: envDefault("ROCKETMQ_HOME"), Class: ClassNamesrv, Roles: RoleBoth, Listed: RoleBoth, BlackListed: true,
		Doc:   "Java's installation directory; accepted and printed, rocketns needs none (it may be empty)",
		field: func(c *Config) any { return &c.RocketmqHome }},
	{Name: "kvConfigPath", Default: homePath("namesrv/kvConfig.json"), Class: ClassNamesrv, Roles: RoleNameServer, BlackListed: true, Main: true,
		Doc:   "the KV store file (Java's format); a corrupt file stops start-up and is never overwritten",
		field: func(c *Config) any { return &c.KVConfigPath }},
	{Name: "configStorePath", Default: homePath("namesrv/namesrv.properties"), ctlDefault: homePath("controller/controller.properties"),
		Class: ClassNamesrv, Roles: RoleBoth, Listed: RoleBoth, BlackListed: true, Main: true,
		Doc:   "where run-time updates are persisted: the NameServer's (318) the `-c` file when one is given; the controller's (1009) its own file, always the default when embedded",
		field: func(c *Config) any { return &c.ConfigStorePath }, node: func(k *Controller) any { return &k.ConfigStorePath }},
	{Name: "productEnvName", Default: "center", Class: ClassNamesrv, Roles: RoleNameServer,
		Doc:   "accepted and printed",
		field: func(c *Config) any { return &c.ProductEnvName }},
	{Name: "clusterTest", Default: false, Class: ClassNamesrv, Roles: RoleNameServer,
		Doc:   "accepted and printed",
		field: func(c *Config) any { return &c.ClusterTest }},
	{Name: "orderMessageEnable", Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "add `orderTopicConf` (KV namespace `ORDER_TOPIC_CONFIG`) to routes",
		field: func(c *Config) any { return &c.OrderMessageEnable }},
	{Name: "returnOrderTopicConfigToBroker", Default: true, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "registration replies carry the `ORDER_TOPIC_CONFIG` table",
		field: func(c *Config) any { return &c.ReturnOrderTopicConfigToBroker }},
	{Name: "scanNotActiveBrokerInterval", Default: int64(5000), Unit: "ms", Range: atLeast(1), Class: ClassNamesrv, Roles: RoleBoth, Listed: RoleBoth,
		Doc:   "how often expired brokers are evicted; the controller's expiry scan, on every node, too",
		field: func(c *Config) any { return &c.ScanNotActiveBrokerInterval }, node: func(k *Controller) any { return &k.ScanNotActiveBrokerInterval }},
	{Name: "unRegisterBrokerQueueCapacity", Default: 3000, Range: atLeast(1), Class: ClassNamesrv, Roles: RoleNameServer,
		Doc:   "accepted and printed",
		field: func(c *Config) any { return &c.UnRegisterBrokerQueueCapacity }},
	{Name: "supportActingMaster", Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "5.x acting-master route rewrite",
		field: func(c *Config) any { return &c.SupportActingMaster }},
	{Name: "enableAllTopicList", Default: true, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "serve GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206); else `1 disable`",
		field: func(c *Config) any { return &c.EnableAllTopicList }},
	{Name: "enableTopicList", Default: true, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "serve 224 and 311-313; else `1 disable`",
		field: func(c *Config) any { return &c.EnableTopicList }},
	{Name: "notifyMinBrokerIdChanged", Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "send NOTIFY_MIN_BROKER_ID_CHANGE (905) to a group's brokers when its smallest id changes",
		field: func(c *Config) any { return &c.NotifyMinBrokerIdChanged }},
	{Name: "needWaitForService", Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "refuse route queries for the first `waitSecondsForService` after start, so clients do not get the routes of brokers that have not registered again yet",
		field: func(c *Config) any { return &c.NeedWaitForService }},
	// Brokers register every 30 s, so Java's 45 covers one round and 10
	// minutes is ample. A peer setting it to 68 years made every route
	// query answer "not ready" forever, across restarts, since the update
	// is persisted.
	{Name: "waitSecondsForService", Default: 45, Unit: "s", Range: between(0, 600), Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "how long `needWaitForService` refuses route queries",
		field: func(c *Config) any { return &c.WaitSecondsForService }},
	// Warm restart: at most every few seconds keeps the file within one
	// broker registration round (30 s) of the table; below a second it
	// would cost a large table's write every second for nothing.
	{Name: "routeSnapshotEnable", Default: true, Roles: RoleNameServer,
		Doc:   "warm restart: write the route table to `routeSnapshotPath` when it changed (in the background and at shutdown) and load it at start, so a restarted NameServer answers routes before brokers register again; a snapshot older than the brokers' timeout (120 s), corrupt or of another version is ignored with one log line",
		field: func(c *Config) any { return &c.RouteSnapshotEnable }},
	{Name: "routeSnapshotPath", Default: "", Roles: RoleNameServer, BlackListed: true,
		Doc:   "the route snapshot file; empty: `routes.snapshot` in the directory of `kvConfigPath`",
		field: func(c *Config) any { return &c.RouteSnapshotPath }},
	{Name: "routeSnapshotIntervalMs", Default: int64(5000), Unit: "ms", Range: between(1000, 60000), Roles: RoleNameServer,
		Doc:   "at most one background write of the route snapshot per interval, and only when the table changed; a kill loses at most this much of the table's history",
		field: func(c *Config) any { return &c.RouteSnapshotIntervalMs }},
	// The peer copy. Each peer is tried before the port opens, so its
	// timeout is what a dead or stuck peer adds to a start-up: long enough
	// for the largest table a frame carries (16 MiB, about 3M entries: a
	// fraction of a second to encode, as long again to cross a LAN),
	// short enough that a few unreachable peers do not hold a restart
	// for long.
	{Name: KeyRouteSnapshotPeerCopy, Default: true, Roles: RoleNameServer,
		Doc:   "warm start of a server with no usable route snapshot (a new pod with an empty volume, a snapshot too old): before its port opens it copies the route table from the first of `routeSnapshotPeers` that answers, with each broker as long since heard as it was there; a peer that is down, slow or refuses leaves a cold start, never a failed one. Needs `routeSnapshotEnable`",
		field: func(c *Config) any { return &c.RouteSnapshotPeerCopy }},
	{Name: KeyRouteSnapshotPeers, Default: "", Roles: RoleNameServer,
		Doc:   "the rocketns NameServers to copy from, `host:port;host:port`, tried in order; empty: the entries of `nsaddrList` (this server's own entry is refused at once, its port not being open yet)",
		field: func(c *Config) any { return &c.RouteSnapshotPeers }},
	{Name: "routeSnapshotPeerTimeoutMs", Default: int64(3000), Unit: "ms", Range: between(100, 60000), Roles: RoleNameServer,
		Doc:   "the bound on one peer's copy, from the dial to the last byte of its answer; a start-up waits at most this long per peer",
		field: func(c *Config) any { return &c.RouteSnapshotPeerTimeoutMs }},
	{Name: KeyRouteSnapshotPeerAccessKey, Default: "", Roles: RoleNameServer,
		Doc:   "the account of `aclFile` whose secret signs the copy request (strict scheme when the account or `aclStrictSignature` asks for it), for peers with `authorizationEnable`; it needs role `readonly` or `admin` there. Empty: the request goes unsigned, which peers with only `adminAllowCIDRs` accept from their admin networks",
		field: func(c *Config) any { return &c.RouteSnapshotPeerAccessKey }},
	{Name: "deleteTopicWithBrokerRegistration", Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Runtime: true,
		Doc:   "a master's registration is its authoritative topic set",
		field: func(c *Config) any { return &c.DeleteTopicWithBrokerRegistration }},
	{Name: "configBlackList", Default: "configBlackList;configStorePath;kvConfigPath", ctlDefault: "configBlackList;configStorePath",
		Class: ClassNamesrv, Roles: RoleBoth, Listed: RoleBoth, BlackListed: true,
		Doc:   "more keys the run-time updates refuse (`;`-separated), read at start; the controller's own default when embedded",
		field: func(c *Config) any { return &c.ConfigBlackList }, node: func(k *Controller) any { return &k.ConfigBlackList }},
	{Name: KeyEnableControllerInNamesrv, Default: false, Class: ClassNamesrv, Roles: RoleNameServer, Section: SectionController, Main: true,
		Doc:   "run a controller node inside the NameServer",
		field: func(c *Config) any { return &c.EnableControllerInNamesrv }},
	{Name: KeyStrictConfig, Default: false, Roles: RoleBoth,
		Doc:   "refuse unknown keys instead of warning about them",
		field: func(c *Config) any { return &c.StrictConfig }},

	// Logging.
	{Name: "logLevel", Default: "info", Roles: RoleBoth, Section: SectionLog, Main: true,
		Doc:   "`debug`, `info`, `warn` or `error`",
		field: func(c *Config) any { return &c.LogLevel }},
	{Name: "logFormat", Default: "text", Roles: RoleBoth, Section: SectionLog, Main: true,
		Doc:   "`text` or `json` (log/slog's handlers)",
		field: func(c *Config) any { return &c.LogFormat }},
	{Name: KeyLogFile, Default: "", Roles: RoleBoth, Section: SectionLog, Main: true,
		Doc:   "a log file instead of stderr, rotated by size; an absolute path (`~` is not expanded); created at start, a path that cannot be written stops start-up. Empty: stderr only",
		field: func(c *Config) any { return &c.LogFile }},
	{Name: KeyLogMaxSizeMB, Default: 100, Range: atLeast(1), Roles: RoleBoth, Section: SectionLog,
		Doc:   "rotate the log file when it reaches this many MB",
		field: func(c *Config) any { return &c.LogMaxSizeMB }},
	{Name: KeyLogMaxAgeDays, Default: 0, Range: atLeast(0), Roles: RoleBoth, Section: SectionLog,
		Doc:   "delete rotated files older than this many days; `0` by count only",
		field: func(c *Config) any { return &c.LogMaxAgeDays }},
	{Name: KeyLogMaxBackups, Default: 10, Range: atLeast(0), Roles: RoleBoth, Section: SectionLog,
		Doc:   "rotated files kept; `0` all (within `logMaxAgeDays`)",
		field: func(c *Config) any { return &c.LogMaxBackups }},
	{Name: KeyLogCompress, Default: true, Roles: RoleBoth, Section: SectionLog,
		Doc:   "gzip rotated files",
		field: func(c *Config) any { return &c.LogCompress }},

	// Authorization: who may send what (docs/security.md).
	{Name: "authorizationEnable", Default: false, Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "protected codes must carry a valid signature from an account in `aclFile` whose role allows the code",
		field: func(c *Config) any { return &c.AuthorizationEnable }},
	{Name: "aclFile", Default: "", Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "accounts, one per line `accessKey:secretKey:role` (`#` comments; role `admin`, `broker` or `readonly`; keys longer than 6 characters; the secret may contain `:`), and options lines ([security.md](security.md#broker-accounts-and-takeover)). Read at start; a missing, empty or malformed file stops start-up. Keep it `chmod 600`: a warning is logged otherwise",
		field: func(c *Config) any { return &c.ACLFile }},
	{Name: "authorizeBrokerRegistration", Default: false, Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "brokers' codes must be signed too, and come from `brokerAllowCIDRs` when set (both must pass)",
		field: func(c *Config) any { return &c.AuthorizeBrokerRegistration }},
	{Name: "adminAllowCIDRs", Default: "", Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "protected codes only from these source networks, `,`-separated CIDRs or single addresses (`10.0.0.0/8, 192.168.1.7, fd00::/8`)",
		field: func(c *Config) any { return &c.AdminAllowCIDRs }},
	{Name: "brokerAllowCIDRs", Default: "", Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "the networks brokers' codes may come from (the admin networks may send them too; empty: `adminAllowCIDRs`); `0.0.0.0/0, ::/0` means anywhere",
		field: func(c *Config) any { return &c.BrokerAllowCIDRs }},
	{Name: "aclStrictSignature", Default: false, Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "every account must sign in the [strict scheme](security.md#signatures-strict-scheme), which stops replays; needs `authorizationEnable`",
		field: func(c *Config) any { return &c.ACLStrictSignature }},
	// A wider window makes a captured strict request useful for longer,
	// and the replay cache keeps every nonce that long.
	{Name: "aclStrictWindowSeconds", Default: 300, Unit: "s", Range: between(1, 86400), Roles: RoleBoth, Section: SectionSecurity,
		Doc:   "how far a strict signature's time may be from the server's clock, either way",
		field: func(c *Config) any { return &c.ACLStrictWindowSeconds }},

	// TLS, with the Java system-property names (docs/security.md, "TLS").
	{Name: KeyTLSServerMode, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "`disabled`, `permissive` or `enforcing`, any case; empty is `permissive` when a certificate or test mode is configured, else `disabled`. Unlike Java, an unknown value stops start-up",
		field: func(c *Config) any { return &c.TLSServerMode }},
	{Name: KeyTLSServerCertPath, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "PEM certificate chain, leaf first",
		field: func(c *Config) any { return &c.TLSServerCertPath }},
	{Name: KeyTLSServerKeyPath, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "PEM private key (PKCS#8, PKCS#1 or EC)",
		field: func(c *Config) any { return &c.TLSServerKeyPath }},
	{Name: KeyTLSServerKeyPassword, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "**not supported**: encrypted keys stop start-up; decrypt the key (`openssl pkcs8 -in enc.key -out plain.key`) and protect the file",
		field: func(c *Config) any { return &c.TLSServerKeyPassword }},
	{Name: KeyTLSServerTrustCertPath, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "PEM CAs that client certificates must chain to; required with `tls.server.authClient=true`",
		field: func(c *Config) any { return &c.TLSServerTrustCertPath }},
	{Name: KeyTLSServerNeedClientAuth, Default: "none", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "`none`, `optional` or `require`: whether a client certificate is asked for",
		field: func(c *Config) any { return &c.TLSServerNeedClientAuth }},
	{Name: KeyTLSServerAuthClient, Default: false, Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "verify client certificates against `tls.server.trustCertPath`; when `false`, a requested client certificate is accepted unverified, as in Java",
		field: func(c *Config) any { return &c.TLSServerAuthClient }},
	{Name: KeyTLSTestModeEnable, Default: false, Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "serve a self-signed certificate made at start (client auth `optional`, trust any); Java's default is `true`",
		field: func(c *Config) any { return &c.TLSTestModeEnable }},
	{Name: KeyTLSConfigFile, Default: "", Class: ClassTLS, Roles: RoleBoth, Section: SectionTLS,
		Doc:   "a properties file whose `tls.*` keys override the ones above, except `tls.server.mode`; read at start and at every reload (Java's default is `/etc/rocketmq/tls.properties`). A file that is set but unreadable stops start-up",
		field: func(c *Config) any { return &c.TLSConfigFile }},

	// Limits (docs/operations.md, "Limits").
	{Name: "frameMaxLength", Default: 16777216, Range: atLeast(minFrameMaxLength), Roles: RoleBoth, Section: SectionLimits,
		Doc: "one frame, prefix included (Java's `com.rocketmq.remoting.frameMaxLength`); raise it for brokers with 100k topics. A longer length field closes the connection before anything is allocated for it. " +
			"Also the most a compressed registration's sections may inflate to (the layout is so dense that a 40 KB body could otherwise carry 750k topics); only the sections are inflated, never padding after them. " +
			"A reply that would be longer (a KV list, a registration reply carrying `ORDER_TOPIC_CONFIG`, ...) is answered `1` (`SYSTEM_ERROR`) with a remark giving both sizes and a log line: peers refuse such frames as this server does (a 5.3.3 broker closes its connection). " +
			"What the request changed stays changed: a registration is applied even when its reply is refused",
		field: func(c *Config) any { return &c.FrameMaxLength }, node: func(k *Controller) any { return &k.FrameMaxLength }},
	{Name: "maxConnections", Default: 10000, Range: atLeast(1), Roles: RoleBoth, Section: SectionLimits,
		Doc:   "open connections, TLS included; one beyond it is closed at accept. A warning is logged at most once a second with the number refused. At start it is lowered to what `ulimit -n` allows, with a warning ([Limits](operations.md#limits))",
		field: func(c *Config) any { return &c.MaxConnections }, node: func(k *Controller) any { return &k.MaxConnections }},
	{Name: "maxConnectionsPerIP", Default: 1000, Roles: RoleBoth, Section: SectionLimits,
		Doc:   "open connections from one source address, loopback included; one beyond it is closed at accept, logged at most once a second with the number refused, and counted in `rocketns_connections_refused_per_address_total`. Clients behind one NAT or proxy share an address: raise it for them. 1 to `maxConnections`",
		field: func(c *Config) any { return &c.MaxConnectionsPerIP }, node: func(k *Controller) any { return &k.MaxConnectionsPerIP }},
	{Name: "reservedConnections", Default: 1000, Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "of `maxConnections`, the connections kept for the addresses in `brokerAllowCIDRs` and `adminAllowCIDRs` when either is set: once `maxConnections` less this many are open, a connection from any other address is closed at accept (logged and counted as a `maxConnections` refusal), so clients from a few addresses cannot lock the brokers and operators out. Without allowlists nothing is reserved. 0 to `maxConnections` - 1",
		field: func(c *Config) any { return &c.ReservedConnections }},
	{Name: "maxPendingResponseBytes", Default: 16 << 20, Range: atLeast(minPendingBytes), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "answers queued on a connection and not yet handed to the socket: a long pipelined batch is flushed each time it passes this, so a peer that sends many requests without reading holds at most this much (plus one answer) in server memory",
		field: func(c *Config) any { return &c.MaxPendingResponseBytes }},
	{Name: "maxPendingRequestBytes", Default: 64 << 20, Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "request bytes read from a connection and not yet handled: netpoll keeps reading while a flush waits on a peer that does not read, so a connection past this is closed (checked between requests and once a second). At least `frameMaxLength`",
		field: func(c *Config) any { return &c.MaxPendingRequestBytes }},
	{Name: "serverWriteTimeoutSeconds", Default: 30, Unit: "s", Range: atLeast(0), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "a flush that cannot complete in this time (the peer does not read) closes the connection with a log line; `0` waits forever (not recommended)",
		field: func(c *Config) any { return &c.ServerWriteTimeoutSeconds }},
	{Name: "maxBufferedBytes", Default: 0, Roles: RoleNameServer, Section: SectionLimits,
		Doc: "request and response bytes all connections hold buffered together; `0` is a quarter of `GOMEMLIMIT`, 256 MiB without one (at least 64 MiB and 4 x `frameMaxLength`), else at least twice `frameMaxLength`. " +
			"A frame's declared length is reserved before its body is waited for, requests read or unread since the last flush count twice (netpoll's read buffers), replies count until sent, and while a flush or a registration waiting for its slot blocks, the input is looked at after 1 ms and then every 10 ms (1 ms while it grows fast). " +
			"A charge that does not fit closes the connections holding more than the one asking, largest first, or else the one asking (shut at once when its handler is waiting); one warning a second. Connections holding under 16 KiB are not charged. " +
			"When connections let go of most of what they held (the budget held a quarter of its limit, and holds an eighth of that now), the server starts a collection so that the memory goes back to the system at once rather than at the runtime's next forced collection (at most once in 30 s, logged at info). " +
			"Metrics: `rocketns_buffered_bytes`, `rocketns_buffered_bytes_limit`, `rocketns_buffered_bytes_peak`, `rocketns_buffer_closes_total{reason=\"refused\"|\"evicted\"}`. An embedded controller shares it; a standalone one has a budget of its own with the same default",
		field: func(c *Config) any { return &c.MaxBufferedBytes }},
	{Name: "maxTopicsPerBroker", Default: 100000, Range: atLeast(1), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "topics in one registration; a compressed body is refused on its declared count before any record is read. The answer is SYSTEM_ERROR naming the setting, and nothing changes but the broker's liveness, refreshed as by a heartbeat so that it keeps the routes it holds",
		field: func(c *Config) any { return &c.MaxTopicsPerBroker }},
	{Name: "maxTopics", Default: 200000, Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "topics the route table holds, all brokers together; a registration that would add topics past it is refused (SYSTEM_ERROR naming the setting) before anything changes but the broker's liveness, refreshed as by a heartbeat so that it keeps the routes it holds. At least `maxTopicsPerBroker`",
		field: func(c *Config) any { return &c.MaxTopics }},
	{Name: "maxTopicsPerSource", Default: 100000, Range: atLeast(0), Roles: RoleNameServer, Section: SectionLimits,
		Doc: "topics the registrations from one host (the connection's source address, not the `brokerAddr` a broker names) may bring into the route table, so that one peer cannot take all of `maxTopics` and leave legitimate brokers unable to add a topic. " +
			"A topic counts for the host whose registration created it until it leaves the table; topics the table already holds cost nothing, so brokers sharing topics are not charged twice. " +
			"A registration past it is refused (SYSTEM_ERROR naming the setting, counted in `rocketns_registrations_refused_total{reason=\"topic_quota\"}`), and nothing changes but the broker's liveness. " +
			"Raise it when one host runs brokers with more topics than this between them; `0` turns the quota off",
		field: func(c *Config) any { return &c.MaxTopicsPerSource }},
	{Name: "heavyBusyPercent", Default: 10, Range: between(1, 100), Roles: RoleNameServer, Section: SectionLimits,
		Doc: "of their time, how much the turns of heavy requests (registrations of 64 KiB and more, topic lists, cluster info, KV lists) may be busy once a burst of 500 ms per turn is spent. " +
			"Route queries are answered at once, never queued behind heavy requests, but they need a core: in a storm of registrations decoded back to back on a server with one core to spare, route p99 was 19-47x its idle figure, 2.6-8.8x with 50 and 0.8-1.3x in four runs of five with 10 (BENCHMARKS.md). " +
			"Single large registrations and the ordinary ones of a few hundred brokers stay within the burst and never wait; a storm is answered at this share of the turns' time (with 10 on two cores, about 120 000 topic-broker entries a second: a table of 1M entries re-registers within 8-19 s of its brokers' 30 s). No request is held back more than 2 s: when heavy requests come faster than the share answers them, they are answered at full speed until none has waited that long, so a registration cannot wait until its broker expires. Raise it for tables of millions of entries on few cores. `100` bounds nothing",
		field: func(c *Config) any { return &c.HeavyBusyPercent }},
	// A namespace of 2 MiB keeps the ORDER_TOPIC_CONFIG table a
	// registration reply carries under a 16 MiB frame even if every byte
	// of it is a control character the JSON writes as a 6-byte escape.
	{Name: "kvMaxKeyBytes", Default: 1024, Range: between(16, 1<<20), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "a KV key, and a namespace's name",
		field: func(c *Config) any { return &c.KVMaxKeyBytes }},
	{Name: "kvMaxValueBytes", Default: 64 << 10, Range: between(16, 1<<30), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "a KV value",
		field: func(c *Config) any { return &c.KVMaxValueBytes }},
	{Name: "kvMaxNamespaceBytes", Default: 2 << 20, Range: between(16, 1<<30), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "one KV namespace as `kvConfig.json` writes it (escapes included); at least `kvMaxValueBytes`. 2 MiB keeps the `ORDER_TOPIC_CONFIG` table of registration replies under 16 MiB even if every byte were a 6-byte escape",
		field: func(c *Config) any { return &c.KVMaxNamespaceBytes }},
	{Name: "kvMaxTotalBytes", Default: 8 << 20, Range: between(16, 1<<30), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "the whole `kvConfig.json`; at least `kvMaxNamespaceBytes`. Bounds what every KV write rewrites",
		field: func(c *Config) any { return &c.KVMaxTotalBytes }},
	// At least a second, so a broker is not evicted between two scans of
	// its own heartbeats; at most a day. Ten minutes covers any real
	// brokerNotActiveTimeoutMillis (the broker's default is 10 s).
	{Name: "maxHeartbeatTimeoutMillis", Default: int64(600000), Unit: "ms", Range: between(1000, 86400000), Roles: RoleNameServer, Section: SectionLimits,
		Doc:   "caps the `heartbeatTimeoutMillis` a broker registers with (a value near 2^63 used to overflow and evict the broker at once); the 120 s default for an absent field obeys it too",
		field: func(c *Config) any { return &c.MaxHeartbeatTimeoutMillis }},

	// The admin HTTP listener (docs/monitoring.md).
	{Name: KeyAdminListen, Default: "", Roles: RoleBoth, Section: SectionAdmin, Main: true,
		Doc:   "`host:port` of the admin HTTP listener (`/metrics`, `/healthz`, `/readyz`, the status page); empty: off. `:9877` listens on every interface, port `0` picks a free one; a taken port stops start-up. It has no authentication",
		field: func(c *Config) any { return &c.AdminListen }},
	{Name: KeyNsaddrList, Default: "", Roles: RoleNameServer, Section: SectionAdmin,
		Doc:   "the answer of `/rocketmq/nsaddr`: the NameServers as `ip:port;ip:port`, each entry `host:port`; empty: 404",
		field: func(c *Config) any { return &c.NsaddrList }},

	// The controller (ControllerConfig, JraftConfig and rocketns's own):
	// kept in Extra, read into a Controller.
	{Name: membership.KeyControllerType, Default: "DLedger", Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc: "`jRaft` (exactly) selects jRaft-style keys; anything else DLedger style"},
	{Name: membership.KeyDLedgerGroup, Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc: "DLedger-style membership: the group name"},
	{Name: membership.KeyDLedgerPeers, Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc: "DLedger-style membership: `id-host:port;...`, brokers and raft on each port; missing peers or a self id that is not a peer stop start-up with Java's message"},
	{Name: membership.KeyDLedgerSelfID, Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc: "DLedger-style membership: this node's id among the peers"},
	{Name: membership.KeyJRaftGroupID, Default: membership.DefaultJRaftGroupID, Class: ClassJraft, Roles: RoleController, Section: SectionController,
		Doc: "jRaft-style membership: the group"},
	{Name: membership.KeyJRaftServerID, Default: membership.DefaultJRaftServerID, Class: ClassJraft, Roles: RoleController, Section: SectionController,
		Doc: "jRaft-style membership: this node's raft address"},
	{Name: membership.KeyJRaftInitConf, Default: membership.DefaultJRaftInitConf, Class: ClassJraft, Roles: RoleController, Section: SectionController,
		Doc: "jRaft-style membership: every node's raft address"},
	{Name: membership.KeyJRaftRPCAddress, Default: membership.DefaultJRaftRPCAddress, Class: ClassJraft, Roles: RoleController, Section: SectionController,
		Doc: "jRaft-style membership: brokers are served on the i-th entry by the node whose raft address is the i-th of `jRaftInitConf`"},
	{Name: KeyControllerStorePath, Default: homePath("DLedgerController"), Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc:  "the raft log (bbolt) and snapshots: the whole controller state, never delete it; `$HOME/jRaftController` in jRaft style",
		node: func(k *Controller) any { return &k.StorePath }},
	{Name: "scanInactiveMasterInterval", Default: int64(5000), Unit: "ms", Range: atLeast(1), Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc:  "the leader's scan for sets whose master is dead while a member lives",
		node: func(k *Controller) any { return &k.ScanInactiveMasterInterval }},
	{Name: "controllerRequestThreadPoolQueueCapacity", Default: 50000, Range: atLeast(1), Class: ClassController, Roles: RoleController, Section: SectionController,
		Doc:  "leader requests waiting to be decided; beyond it `2 SYSTEM_BUSY`",
		node: func(k *Controller) any { return &k.RequestQueueCapacity }},
	{Name: "electMasterMaxRetryCount", Default: 3, Range: atLeast(1), Class: ClassController, Roles: RoleController, Section: SectionController, Runtime: true,
		Doc:  "attempts of a controller-triggered election",
		node: func(k *Controller) any { return &k.ElectMasterMaxRetryCount }},
	{Name: "enableElectUncleanMaster", Default: false, Class: ClassController, Roles: RoleController, Section: SectionController, Runtime: true,
		Doc:  "elect outside the SyncStateSet when none of it is alive, which may elect a broker missing committed messages",
		node: func(k *Controller) any { return &k.EnableElectUncleanMaster }},
	{Name: "notifyBrokerRoleChanged", Default: true, Class: ClassController, Roles: RoleController, Section: SectionController, Runtime: true,
		Doc:  "send NOTIFY_BROKER_ROLE_CHANGED (1008) to the live members after each election",
		node: func(k *Controller) any { return &k.NotifyBrokerRoleChanged }},
	{Name: "processReadEvent", Default: false, Class: ClassController, Roles: RoleController, Section: SectionController, Runtime: true,
		Doc:  "answer leader reads (1004, 1006, 1012) behind a raft barrier, so a leader deposed without knowing it cannot answer from a stale state; also `isProcessReadEvent`, the name 1010 lists",
		node: func(k *Controller) any { return &k.ProcessReadEvent }},
	{Name: "isProcessReadEvent", Type: TypeBool, Alias: "processReadEvent", Class: ClassController, Roles: RoleController, Section: SectionController, Runtime: true,
		node: func(k *Controller) any { return &k.ProcessReadEvent }},
	{Name: KeyControllerRaftHeartbeatTimeout, Default: 0, Unit: "ms", Roles: RoleController, Section: SectionController,
		Doc:  "raft's heartbeat timeout and, unless set, the leader's lease; `0` is 500 ms, else at least 5. A dead leader is replaced in about 1-2 s with the defaults; raise it with the election timeout where CPU stalls depose leaders ([Raft timings](controller.md#raft-timings))",
		node: func(k *Controller) any { return &k.RaftHeartbeatTimeout }},
	{Name: KeyControllerRaftElectionTimeout, Default: 0, Unit: "ms", Roles: RoleController, Section: SectionController,
		Doc:  "raft's election timeout; `0` is 500 ms, else at least 5 and not below the heartbeat timeout",
		node: func(k *Controller) any { return &k.RaftElectionTimeout }},
	{Name: KeyControllerRaftLeaderLeaseTimeout, Default: 0, Unit: "ms", Roles: RoleController, Section: SectionController,
		Doc:  "how long a leader cut off from a majority keeps leading; `0` is the heartbeat timeout, else at least 5 and not above it",
		node: func(k *Controller) any { return &k.RaftLeaderLeaseTimeout }},
	{Name: "controllerMaxBrokerSets", Default: DefaultControllerMaxBrokerSets, Range: between(1, maxControllerBound), Roles: RoleController, Section: SectionController,
		Doc:  "broker sets the controller holds: a 1013 that would create one more is refused `1 SYSTEM_ERROR` naming the key (clean unused sets with `cleanBrokerMetadata`)",
		node: func(k *Controller) any { return &k.MaxBrokerSets }},
	{Name: "controllerMaxBrokersPerSet", Default: DefaultControllerMaxBrokersPerSet, Range: between(1, maxControllerBound), Roles: RoleController, Section: SectionController,
		Doc:  "ids registered in one set: a 1013 for one more is refused the same way (a set grows an id each time a broker loses its identity file; clean the gone ones with `cleanBrokerMetadata -b`)",
		node: func(k *Controller) any { return &k.MaxBrokersPerSet }},
	{Name: KeyControllerMaxLiveBrokers, Default: DefaultControllerMaxLiveBrokers, Range: between(1, maxControllerBound), Roles: RoleController, Section: SectionController,
		Doc:  "brokers in a node's liveness table: a heartbeat from a broker new to a full table is refused unless the broker is registered (1013), so a flood of made-up brokers cannot keep the real ones out",
		node: func(k *Controller) any { return &k.MaxLiveBrokers }},
	{Name: KeyControllerRaftSecretFile, Default: "", Roles: RoleController, Section: SectionController,
		Doc:  "a file holding the cluster secret every member proves at each raft connection (at least 16 bytes, surrounding white space ignored; `chmod 600`; [the raft transport](security.md#the-controllers-raft-transport))",
		node: func(k *Controller) any { return &k.RaftSecretFile }},
	{Name: KeyControllerRaftTLSEnable, Default: false, Roles: RoleController, Section: SectionController,
		Doc:  "mutual TLS between members with `tls.server.certPath`, `keyPath` and `trustCertPath` (each member's certificate names its raft host); test mode is refused",
		node: func(k *Controller) any { return &k.RaftTLSEnable }},

	// Java keys accepted, kept and listed, that nothing here reads.
	{Name: "clientRequestThreadPoolNums", Default: "8", Class: ClassNamesrv, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "defaultThreadPoolNums", Default: "16", Class: ClassNamesrv, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientRequestThreadPoolQueueCapacity", Default: "50000", Class: ClassNamesrv, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "defaultThreadPoolQueueCapacity", Default: "10000", Class: ClassNamesrv, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "serverWorkerThreads", Default: "8", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverCallbackExecutorThreads", Default: "0", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverSelectorThreads", Default: "3", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverOnewaySemaphoreValue", Default: "256", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverAsyncSemaphoreValue", Default: "64", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverSocketSndBufSize", Default: "0", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverSocketRcvBufSize", Default: "0", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "writeBufferHighWaterMark", Default: "0", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "writeBufferLowWaterMark", Default: "0", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverSocketBacklog", Default: "1024", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverPooledByteBufAllocatorEnable", Default: "true", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "serverNettyWorkerGroupEnable", Default: "true", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "useEpollNativeSelector", Default: "false", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "enableShutdownGracefully", Default: "false", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	{Name: "shutdownWaitTimeSeconds", Default: "30", Class: ClassNettyServer, Roles: RoleBoth, JavaOnly: true, Section: SectionJava},
	// NettyClientConfig: Java reads them from the -c file (its client only
	// sends NOTIFY_MIN_BROKER_ID_CHANGE) but does not print them in
	// GET_NAMESRV_CONFIG unless the file set them.
	{Name: "clientWorkerThreads", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientCallbackExecutorThreads", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientOnewaySemaphoreValue", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientAsyncSemaphoreValue", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "connectTimeoutMillis", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "channelNotActiveInterval", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientChannelMaxIdleTimeSeconds", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientSocketSndBufSize", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientSocketRcvBufSize", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientPooledByteBufAllocatorEnable", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "clientCloseSocketIfTimeout", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "useTLS", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "socksProxyConfig", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "disableCallbackExecutor", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "disableNettyWorkerGroup", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "maxReconnectIntervalTimeSeconds", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "enableReconnectForGoAway", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	{Name: "enableTransparentRetry", Class: ClassNettyClient, Roles: RoleNameServer, JavaOnly: true, Section: SectionJava},
	// The controller's: typed as Java's, so a value that does not parse
	// stops start-up as it always has.
	{Name: "mappedFileSize", Default: 1073741824, Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "controllerThreadPoolNums", Default: 16, Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "jRaftElectionTimeoutMs", Default: 1000, Class: ClassJraft, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "jRaftSnapshotIntervalSecs", Default: 3600, Class: ClassJraft, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "jRaftScanWaitTimeoutMs", Default: 1000, Class: ClassJraft, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsExporterType", Default: "DISABLE", Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsGrpcExporterTarget", Default: "", Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsGrpcExporterHeader", Default: "", Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricGrpcExporterTimeOutInMills", Default: int64(3000), Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricGrpcExporterIntervalInMills", Default: int64(60000), Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricLoggingExporterIntervalInMills", Default: int64(10000), Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsPromExporterPort", Default: 5557, Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsPromExporterHost", Default: "", Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsLabel", Default: "", Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
	{Name: "metricsInDelta", Default: false, Class: ClassController, Roles: RoleController, JavaOnly: true, Section: SectionJava},
}
