// The command table: every nsadmin command, the NameServer ones and the
// controller ones, with its flags, help text and what it runs; and what the
// NameServer commands send and print.
//
// Why a table over Go's flag package and not a CLI library: mqadmin's
// command lines mix one-dash names of one and more letters (-n, -bn for
// electMaster's broker set) with two-dash long ones (--namesrvAddr), and
// nsadmin has always taken rocketns's own flags Go's way (-strictSign,
// -timeout 5s, -tlsCA f). spf13/pflag (cobra), peterbourgon/ff/v4 and
// alecthomas/kong read a single dash as a cluster of one-letter flags: -bn
// and -strictSign are refused, and -timeout 5s silently becomes -t imeout
// with a stray argument. urfave/cli/v3 parses every one of these as flag
// does, but its help, its usage errors (the whole help after each one) and
// its exit codes would all be replaced to keep mqadmin's and nsadmin's, so
// it would add a dependency for what flag already does.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/client"
)

// flagKind is what a flag's value is.
type flagKind int

const (
	textFlag   flagKind = iota // a string, trimmed
	intFlag                    // an int64 in min..max
	switchFlag                 // a switch: no value, or =true/=false
)

// flagSpec is one flag. short is its name after one dash (-t, -bn,
// -strictSign), long mqadmin's long name after two (--topic); either may be
// "". Like every Go flag, each name takes one dash or two, and a value
// after a space or '='.
type flagSpec struct {
	short, long string
	arg, usage  string // arg names the value in help
	kind        flagKind
	required    bool
	allowEmpty  bool   // a text flag whose "" is a value
	def         string // the default, shown in help
	min, max    int64  // an integer's range
	// env is the variable read when the flag is not given.
	env string
	// addrs: a ';'-separated host:port list, checked when given.
	addrs bool
}

// key is the name a command reads the flag by: the short one if any.
func (f *flagSpec) key() string {
	if f.short != "" {
		return f.short
	}
	return f.long
}

// command is one command. Exactly one of read, apply, all and ctl is set:
// a read goes to the first reachable NameServer of -n, an apply to every
// one (it returns a topic count, or -1 when the request has none), all runs
// the whole command itself (diff, which compares the servers), and ctl is
// a controller command, which prints its output and errors as mqadmin does.
type command struct {
	name     string
	synopsis string // one line for the command list
	about    string // the rest of the help text
	flags    []flagSpec
	jsonDoc  string
	read     func(ctx context.Context, c *client.Client, in *input) (*output, error)
	apply    func(ctx context.Context, c *client.Client, in *input) (int, error)
	all      func(in *input, stdout, stderr io.Writer) int // returns the exit code
	ctl      func(in *input) (any, error)                  // prints the table itself, returns the JSON document
	// javaClass is mqadmin's SubCommand, named in a controller command's
	// error text.
	javaClass string
}

// kind is the command's column in the command list.
func (c *command) kind() string {
	switch {
	case c.apply != nil:
		return "write"
	case c.all != nil:
		return "check"
	case c.ctl != nil:
		return "controller"
	}
	return "read"
}

// allFlags is every flag the command takes, in help order: -n first for
// a NameServer command, its own, then the ones every command takes.
func (c *command) allFlags() []flagSpec {
	var out []flagSpec
	if c.ctl == nil {
		n := flagNamesrv
		n.required = true
		out = append(out, n)
	}
	return append(append(out, c.flags...), commonFlags...)
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

var (
	flagNamesrv   = flagSpec{short: "n", long: "namesrvAddr", arg: "addrs", usage: "NameServer addresses host:port, ';'-separated", env: "NAMESRV_ADDR"}
	flagCtlAddr   = flagSpec{short: "a", long: "controllerAddress", arg: "addrs", usage: "controller addresses host:port, ';'-separated", required: true, addrs: true}
	flagTopic     = flagSpec{short: "t", long: "topic", arg: "topic", usage: "topic name", required: true}
	flagBroker    = flagSpec{short: "b", long: "brokerName", arg: "brokerName", usage: "broker name (the group, e.g. broker-a)", required: true}
	flagNamespace = flagSpec{short: "s", long: "namespace", arg: "namespace", usage: "KV namespace", required: true}
	flagKVValue   = flagSpec{short: "v", long: "value", arg: "value", usage: "value", required: true, allowEmpty: true}
	flagBrokerSet = flagSpec{short: "b", long: "brokerName", arg: "brokerName", usage: "the broker set"}
	flagInterval  = flagSpec{short: "i", long: "interval", arg: "seconds", usage: "repeat every this many seconds until interrupted", kind: intFlag, min: 1, max: 1 << 31}
)

// commonFlags are taken by every command.
var commonFlags = []flagSpec{
	{short: "o", arg: "format", usage: "output: table or json", def: "table"},
	{short: "timeout", arg: "d", usage: "deadline per server for connect and answer", def: defaultTimeout.String()},
	{short: "accessKey", arg: "ak", usage: "sign requests with this ACL account", env: "ROCKETMQ_ACCESS_KEY"},
	{short: "secretKey", arg: "sk", usage: "its secret key; the variable keeps it out of ps", env: "ROCKETMQ_SECRET_KEY"},
	{short: "strictSign", kind: switchFlag, usage: "sign in rocketns's strict scheme (code, time and nonce signed;\nrocketns only)", env: "ROCKETMQ_STRICT_SIGN"},
	{short: "tls", kind: switchFlag, usage: "connect over TLS, for tls.server.mode=enforcing", env: "ROCKETMQ_TLS"},
	{short: "tlsCA", arg: "file", usage: "PEM CAs to verify the server's certificate against (else the\nsystem's roots)", env: "ROCKETMQ_TLS_CA"},
	{short: "tlsCert", arg: "file", usage: "PEM client certificate, for tls.server.need.client.auth", env: "ROCKETMQ_TLS_CERT"},
	{short: "tlsKey", arg: "file", usage: "its PEM private key", env: "ROCKETMQ_TLS_KEY"},
	{short: "tlsInsecure", kind: switchFlag, usage: "INSECURE: encrypt but do not verify the server's certificate, so anyone\non the path can pose as it; only for a test-mode server\n", env: "ROCKETMQ_TLS_INSECURE"},
}

const writeJSON = `{"command":"<name>","results":[{"namesrv":"host:port","ok":true},
   {"namesrv":"host:port","ok":false,"code":16,"error":"error code 16 (NO_PERMISSION): ..."}]}
  "code" is present only when the NameServer answered with an error code.`

const countJSON = `{"command":"<name>","results":[{"namesrv":"host:port","ok":true,"topicCount":3}]}
  "topicCount" is the number of topics the NameServer changed; failed entries
  carry "ok":false, "error" and, for an error answer, "code"; a NameServer that
  has no broker of that name has "brokerNotFound":true. When none has it the
  command fails (exit 1).`

// commands returns every command in help order: the NameServer ones, then
// the controller ones.
func commands() []*command {
	return []*command{
		{
			name:     "clusterList",
			synopsis: "brokers of every cluster (106)",
			about:    "Lists every broker address the NameServer knows, by cluster, broker name and id\n(GET_BROKER_CLUSTER_INFO, 106).",
			flags:    []flagSpec{{short: "c", long: "clusterName", arg: "clusterName", usage: "show only this cluster"}},
			jsonDoc: `{"namesrv":"host:port","brokers":[{"cluster":"DefaultCluster","brokerName":"broker-a",
   "brokerId":0,"addr":"10.0.0.1:10911","zoneName":"","enableActingMaster":false}]}
  Sorted by cluster, broker name, broker id.`,
			read: readClusterList,
		},
		{
			name:     "topicRoute",
			synopsis: "route of a topic: brokers and queues (105)",
			about:    "Shows the route clients get for a topic (GET_ROUTEINFO_BY_TOPIC, 105).",
			flags:    []flagSpec{flagTopic},
			jsonDoc: `{"namesrv":"host:port","topic":"TopicTest","route":{...}}
  "route" is the TopicRouteData as a 5.x NameServer writes it in standard JSON:
  brokerDatas (brokerAddrs keyed by id), filterServerTable, orderTopicConf
  (if any), queueDatas, topicQueueMappingByBroker (static topics only).`,
			read: readTopicRoute,
		},
		{
			name:     "topicList",
			synopsis: "all topics, or by cluster (206 / 106 + 224)",
			about: "Lists topic names, sorted, one per line (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 206). With -c\n" +
				"(--clusterModel, a switch as in mqadmin) each topic with the cluster it lives on, one row per\n" +
				"cluster, retry and dead-letter topics left out as mqadmin does (GET_BROKER_CLUSTER_INFO, 106,\n" +
				"and GET_TOPICS_BY_CLUSTER, 224, per cluster; mqadmin's consumer group column needs the brokers\n" +
				"and is not shown). With --clusterName only the topics with queues on that cluster's brokers (224).",
			flags: []flagSpec{
				{short: "c", long: "clusterModel", kind: switchFlag, usage: "list each topic with its cluster"},
				{long: "clusterName", arg: "clusterName", usage: "list only the topics of this cluster"},
			},
			jsonDoc: `{"namesrv":"host:port","cluster":"","topics":["TBW102","TopicTest"]}
  with -c: {"namesrv":"host:port","rows":[{"cluster":"DefaultCluster","topic":"TopicTest"}]}
  ("cluster" is "" for a topic on no registered broker's cluster).`,
			read: readTopicList,
		},
		{
			name:     "topicClusterList",
			synopsis: "clusters a topic lives on (105)",
			about:    "Lists the clusters of the brokers in a topic's route, sorted, one per line.",
			flags:    []flagSpec{flagTopic},
			jsonDoc:  `{"namesrv":"host:port","topic":"TopicTest","clusters":["DefaultCluster"]}`,
			read:     readTopicClusterList,
		},
		{
			name:     "getNamesrvConfig",
			synopsis: "the NameServer's configuration (319)",
			about:    "Shows every configuration key and value (GET_NAMESRV_CONFIG, 319).",
			jsonDoc:  `{"namesrv":"host:port","config":{"bindAddress":"0.0.0.0","listenPort":"9876",...}}`,
			read:     readNamesrvConfig,
		},
		{
			name:     "updateNamesrvConfig",
			synopsis: "change one configuration key (318)",
			about: "Sets one configuration key at run time (UPDATE_NAMESRV_CONFIG, 318). File paths and\n" +
				"blacklisted keys are refused with NO_PERMISSION; rocketns also refuses keys that cannot\n" +
				"change at run time.",
			flags:   []flagSpec{{short: "k", long: "key", arg: "key", usage: "configuration key", required: true}, flagKVValue},
			jsonDoc: writeJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return -1, c.UpdateNamesrvConfig(ctx, []properties.Property{{Key: in.str("k"), Value: in.str("v")}})
			},
		},
		{
			name:     "updateKvConfig",
			synopsis: "put a KV entry (100)",
			about:    "Stores value under namespace/key in the NameServer's KV store (PUT_KV_CONFIG, 100).",
			flags:    []flagSpec{flagNamespace, {short: "k", long: "key", arg: "key", usage: "key", required: true}, flagKVValue},
			jsonDoc:  writeJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return -1, c.PutKV(ctx, in.str("s"), in.str("k"), in.str("v"))
			},
		},
		{
			name:     "deleteKvConfig",
			synopsis: "delete a KV entry (102)",
			about:    "Removes namespace/key from the KV store (DELETE_KV_CONFIG, 102); a missing key is not an error.",
			flags:    []flagSpec{flagNamespace, {short: "k", long: "key", arg: "key", usage: "key", required: true}},
			jsonDoc:  writeJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return -1, c.DeleteKV(ctx, in.str("s"), in.str("k"))
			},
		},
		{
			name:     "getKvConfig",
			synopsis: "read a KV entry or a whole namespace (101 / 219)",
			about: "Shows namespace/key (GET_KV_CONFIG, 101), or without -k every entry of the namespace\n" +
				"(GET_KVLIST_BY_NAMESPACE, 219). A missing key or namespace is an error (code 22).",
			flags:   []flagSpec{flagNamespace, {short: "k", long: "key", arg: "key", usage: "key; omit to list the namespace"}},
			jsonDoc: `{"namesrv":"host:port","namespace":"ORDER_TOPIC_CONFIG","table":{"TopicOrder":"broker-a:4"}}`,
			read:    readKV,
		},
		{
			name:     "wipeWritePerm",
			synopsis: "stop writes to a broker's queues (205)",
			about: "Clears the write permission of every queue of a broker in the NameServer's routes\n" +
				"(WIPE_WRITE_PERM_OF_BROKER, 205), to drain a broker before stopping it. The broker's next\n" +
				"changed registration restores its own permissions.",
			flags:   []flagSpec{flagBroker},
			jsonDoc: countJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return brokerCount(ctx, c, in.str("b"), c.WipeWritePerm)
			},
		},
		{
			name:     "addWritePerm",
			synopsis: "give a broker's queues read+write again (327)",
			about: "Sets the permission of every queue of a broker to read+write (6) in the NameServer's\n" +
				"routes (ADD_WRITE_PERM_OF_BROKER, 327; a 4.x NameServer does not support it).",
			flags:   []flagSpec{flagBroker},
			jsonDoc: countJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return brokerCount(ctx, c, in.str("b"), c.AddWritePerm)
			},
		},
		{
			name:     "deleteTopic",
			synopsis: "remove a topic's queues on one cluster from the routes (216)",
			about: "Removes a topic's queues on one cluster's brokers from the NameServers' routes\n" +
				"(DELETE_TOPIC_IN_NAMESRV, 216); the topic goes when no queues are left. -c is required, as in\n" +
				"mqadmin: to remove a topic everywhere, run this for each cluster topicClusterList names. A 4.x\n" +
				"Java NameServer has no cluster field in 216 and removes the topic from every cluster. This is\n" +
				"only the NameServer part of mqadmin's deleteTopic: the brokers keep the topic and register it\n" +
				"again unless it is also deleted on them.",
			flags: []flagSpec{flagTopic,
				{short: "c", long: "clusterName", arg: "clusterName", usage: "the cluster whose brokers' queues of the topic go", required: true}},
			jsonDoc: writeJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				return -1, c.DeleteTopic(ctx, in.str("t"), in.str("c"))
			},
		},
		{
			name:     "registerTopic",
			synopsis: "add a topic's queues on a broker to the routes (217)",
			about: "Registers a topic's queues on one broker in the NameServers' routes, as a 5.x broker does\n" +
				"for a new topic (REGISTER_TOPIC_IN_NAMESRV, 217). The broker must be registered: the\n" +
				"NameServer silently ignores queues of an unknown broker. Check with topicRoute.",
			flags: []flagSpec{flagTopic, flagBroker,
				{short: "r", long: "readQueueNums", arg: "readQueueNums", usage: "read queue count", def: "8", kind: intFlag, max: 1 << 16},
				{short: "w", long: "writeQueueNums", arg: "writeQueueNums", usage: "write queue count", def: "8", kind: intFlag, max: 1 << 16},
				{short: "p", long: "perm", arg: "perm", usage: "permission: 2 write, 4 read, 6 read+write (1 inherit)", def: "6", kind: intFlag, max: 7},
			},
			jsonDoc: writeJSON,
			apply: func(ctx context.Context, c *client.Client, in *input) (int, error) {
				q := body.QueueData{BrokerName: in.str("b"), ReadQueueNums: int32(in.int("r")),
					WriteQueueNums: int32(in.int("w")), Perm: int32(in.int("p"))}
				return -1, c.RegisterTopic(ctx, in.str("t"), []body.QueueData{q})
			},
		},
		{
			name:     "getBrokerMemberGroup",
			synopsis: "addresses of one broker group (901)",
			about:    "Shows the addresses of a broker group by id (GET_BROKER_MEMBER_GROUP, 901; 5.x only).\nAn unknown group has no addresses.",
			flags:    []flagSpec{{short: "c", long: "clusterName", arg: "clusterName", usage: "cluster name", required: true}, flagBroker},
			jsonDoc:  `{"namesrv":"host:port","cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":[{"id":0,"addr":"10.0.0.1:10911"}]}`,
			read:     readMemberGroup,
		},
		{
			name:     "queryDataVersion",
			synopsis: "topic-config version stored for a broker (322)",
			about: "Shows the topic-config data version the NameServer holds for one broker address\n" +
				"(QUERY_DATA_VERSION, 322). Like any 322 request it counts as a heartbeat of that broker.",
			flags: []flagSpec{
				{short: "c", long: "clusterName", arg: "clusterName", usage: "cluster name", required: true}, flagBroker,
				{short: "a", long: "brokerAddr", arg: "brokerAddr", usage: "broker address host:port", required: true},
				{short: "i", long: "brokerId", arg: "brokerId", usage: "broker id (0 = master)", def: "0", kind: intFlag, max: 1 << 62},
			},
			jsonDoc: `{"namesrv":"host:port","known":true,"dataVersion":{"stateVersion":0,"timestamp":1700000000123,"counter":42}}
  "known" is false (and "dataVersion" absent) when the NameServer has no live entry.`,
			read: readDataVersion,
		},
		{
			name:     "diff",
			synopsis: "compare the NameServers' brokers and routes (106, 206, 105)",
			about: "Asks every NameServer in -n for its brokers (GET_BROKER_CLUSTER_INFO, 106) and topics\n" +
				"(GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 206), then every NameServer for the route (105) of every\n" +
				"topic any of them listed, and prints what differs: clusters and broker addresses missing on\n" +
				"some, a broker group in different clusters, topics only some have a route for, and per topic\n" +
				"and broker group a different perm, read or write queue count or topic sys flag. NameServers\n" +
				"share nothing, so a broker that lost its link to one of them shows up here.\n\n" +
				"Exit status: 0 when all agree; 1 when they differ, or when a NameServer could not be asked\n" +
				"(unreachable, or an error answer such as 206 disabled by enableAllTopicList=false). Such a\n" +
				"server is named on stderr and in the report, and the others are still compared. -timeout\n" +
				"bounds each request. A broker re-registering while diff runs can show as a transient difference:\n" +
				"run it again.",
			flags: []flagSpec{
				{long: "workers", arg: "n", usage: "topics whose routes are asked for at once", def: "16", kind: intFlag, min: 1, max: 1024},
			},
			jsonDoc: `{"namesrvs":["a:9876","b:9876","c:9876"],"compared":["a:9876","b:9876"],
   "errors":[{"namesrv":"c:9876","error":"unreachable: connect: connection refused"}],
   "clusters":1,"brokers":2,"topics":3,"identical":false,
   "differences":[{"kind":"broker","subject":"broker-a/0","cluster":"DefaultCluster","brokerName":"broker-a","brokerId":0,
     "values":{"a:9876":"10.0.0.1:10911","b:9876":null}}]}
  kinds: cluster, brokerCluster, broker, topic, queue, orderTopicConf. "values" has one entry per
  compared NameServer; null means it lacks the thing. "clusters", "brokers" (addresses) and "topics"
  count the union over the compared NameServers.`,
			all: runDiff,
		},
		{
			name: "getControllerMetaData", javaClass: "GetControllerMetaDataSubCommand",
			synopsis: "a controller node's group, leader and peers (1005)",
			about:    "Asks the node at -a for its raft group, the leader it knows and the peers (CONTROLLER_GET_METADATA_INFO, 1005).",
			flags:    []flagSpec{flagCtlAddr},
			jsonDoc: `{"controller":"host:port","group":"group1","controllerLeaderId":"n0",
   "controllerLeaderAddress":"host:port","isLeader":true,"peers":["n0:host:port"]}`,
			ctl: runGetControllerMetaData,
		},
		{
			name: "getSyncStateSet", javaClass: "GetSyncStateSetSubCommand",
			synopsis: "master, epochs and SyncStateSet of broker sets (1005, 1006)",
			about: "Finds the leader through -a (1005) and asks it for the sets named by -b, or of every broker\n" +
				"set of cluster -c as the NameServers of -n list them (CONTROLLER_GET_SYNC_STATE_DATA, 1006).\n" +
				"-b is one name, not split (as in mqadmin).",
			flags: []flagSpec{flagCtlAddr, flagBrokerSet,
				{short: "c", long: "clusterName", arg: "clusterName", usage: "every broker set of this cluster (needs -n)"},
				flagNamesrv, flagInterval},
			jsonDoc: `{"controller":"leader host:port","brokerSets":[{"brokerName":"broker-a","masterBrokerId":1,
   "masterAddress":"host:port","masterEpoch":1,"syncStateSetEpoch":2,
   "inSyncReplicas":[{"brokerName":"broker-a","brokerId":1,"brokerAddress":"host:port","alive":true}],
   "notInSyncReplicas":[]}]}
  masterBrokerId and masterAddress are absent for a set without a master.`,
			ctl: runGetSyncStateSet,
		},
		{
			name: "getBrokerEpoch", javaClass: "GetBrokerEpochSubCommand",
			synopsis: "epoch history of the brokers of a set or cluster (106, then 1007 to each broker)",
			about: "Lists the brokers of set -b or cluster -c from the NameServers of -n (106) and asks each broker\n" +
				"for its epoch history (GET_BROKER_EPOCH_CACHE, 1007). The last entry ends at the broker's max offset.",
			flags: []flagSpec{flagNamesrv, flagBrokerSet,
				{short: "c", long: "clusterName", arg: "clusterName", usage: "every broker set of this cluster"},
				flagInterval},
			jsonDoc: `{"namesrv":"host:port","brokers":[{"clusterName":"DefaultCluster","brokerName":"broker-a",
   "brokerAddr":"host:port","brokerId":0,"maxOffset":0,
   "epochs":[{"epoch":1,"startOffset":0,"endOffset":0}]}]}`,
			ctl: runGetBrokerEpoch,
		},
		{
			name: "getControllerConfig", javaClass: "GetControllerConfigSubCommand",
			synopsis: "each controller node's configuration (1010)",
			about:    "Asks every node of -a for its configuration (GET_CONTROLLER_CONFIG, 1010); it is node-local.",
			flags:    []flagSpec{flagCtlAddr},
			jsonDoc:  `{"controllers":[{"controller":"host:port","config":{"bindAddress":"0.0.0.0",...}}]}`,
			ctl:      runGetControllerConfig,
		},
		{
			name: "updateControllerConfig", javaClass: "UpdateControllerConfigSubCommand",
			synopsis: "change one setting on each controller node (1009)",
			about: "Sends key=value to every node of -a (UPDATE_CONTROLLER_CONFIG, 1009). rocketns accepts only the\n" +
				"run-time keys (notifyBrokerRoleChanged, enableElectUncleanMaster, electMasterMaxRetryCount,\n" +
				"processReadEvent) and persists them; every node is tried, and any refusal fails the command.",
			flags: []flagSpec{flagCtlAddr,
				{short: "k", long: "key", arg: "key", usage: "config key", required: true},
				{short: "v", long: "value", arg: "value", usage: "config value", required: true, allowEmpty: true}},
			jsonDoc: `{"key":"k","value":"v","results":[{"controller":"host:port","ok":true},
   {"controller":"host:port","ok":false,"code":16,"error":"CODE: 16  DESC: ..."}]}`,
			ctl: runUpdateControllerConfig,
		},
		{
			name: "electMaster", javaClass: "ReElectMasterSubCommand",
			synopsis: "make a broker the master of its set (1005, 1002)",
			about: "Finds the leader through -a (1005) and asks it to elect broker -b of set -bn as master\n" +
				"(CONTROLLER_ELECT_MASTER, 1002, an admin trigger). The broker must be alive and in the\n" +
				"SyncStateSet (or the set allow unclean elections); 2011 means it is the master already.",
			flags: []flagSpec{flagCtlAddr,
				{short: "c", long: "clusterName", arg: "clusterName", usage: "the cluster", required: true},
				{short: "bn", long: "brokerName", arg: "brokerName", usage: "the broker set", required: true},
				{short: "b", long: "brokerId", arg: "brokerId", usage: "the broker id to elect", required: true}},
			jsonDoc: `{"controller":"leader host:port","clusterName":"DefaultCluster","brokerName":"broker-a",
   "masterBrokerId":2,"masterAddress":"host:port","masterEpoch":3,"syncStateSetEpoch":5,
   "members":[{"brokerId":1,"addr":"host:port"},{"brokerId":2,"addr":"host:port"}]}
  The table output omits the members, as mqadmin's does (it never finds them).`,
			ctl: runElectMaster,
		},
		{
			name: "cleanBrokerMetadata", javaClass: "CleanBrokerMetadataCommand",
			synopsis: "remove brokers, or a whole set, from the controller (1005, 1011)",
			about: "Finds the leader through -a (1005) and removes broker ids -b (';'-separated; none: the whole\n" +
				"set) of set -bn (CLEAN_BROKER_DATA, 1011). Only brokers that are not alive, unless -l;\n" +
				"without -l, -c is required.",
			flags: []flagSpec{flagCtlAddr,
				{short: "bn", long: "brokerName", arg: "brokerName", usage: "the broker set", required: true},
				{short: "b", long: "brokerControllerIdsToClean", arg: "ids", usage: "broker ids to clean, ';'-separated"},
				{short: "c", long: "clusterName", arg: "clusterName", usage: "the cluster (required without -l)"},
				{short: "l", long: "cleanLivingBroker", usage: "clean brokers that are alive too", kind: switchFlag}},
			jsonDoc: `{"controller":"leader host:port","brokerName":"broker-a","ok":true}`,
			ctl:     runCleanBrokerMetadata,
		},
	}
}

// output is a read's result: a JSON document and the same as a table.
type output struct {
	json  any
	table func(w io.Writer)
}

func (o *output) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSONTo(w, o.json)
	}
	tw := newTable(w)
	o.table(tw)
	return tw.Flush()
}

func writeJSONTo(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

type brokerRow struct {
	Cluster            string `json:"cluster"`
	BrokerName         string `json:"brokerName"`
	BrokerID           int64  `json:"brokerId"`
	Addr               string `json:"addr"`
	ZoneName           string `json:"zoneName"`
	EnableActingMaster bool   `json:"enableActingMaster"`
}

func readClusterList(ctx context.Context, c *client.Client, in *input) (*output, error) {
	ci, err := c.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	rows := []brokerRow{}
	for _, b := range ci.Brokers {
		if in.given("c") && b.Cluster != in.str("c") {
			continue
		}
		for _, a := range b.Addrs {
			rows = append(rows, brokerRow{b.Cluster, b.BrokerName, a.ID, a.Addr, b.ZoneName, b.EnableActingMaster})
		}
	}
	slices.SortFunc(rows, func(a, b brokerRow) int {
		if x := strings.Compare(a.Cluster, b.Cluster); x != 0 {
			return x
		}
		if x := strings.Compare(a.BrokerName, b.BrokerName); x != 0 {
			return x
		}
		return compareInt(a.BrokerID, b.BrokerID)
	})
	doc := struct {
		Namesrv string      `json:"namesrv"`
		Brokers []brokerRow `json:"brokers"`
	}{c.Addr(), rows}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Cluster\t#Broker\t#BID\t#Addr\t#Zone\t#ActingMaster")
		for _, r := range rows {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%t\n", name(r.Cluster), name(r.BrokerName), r.BrokerID, name(r.Addr), dash(r.ZoneName), r.EnableActingMaster)
		}
	}}, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dash is name for an optional field: "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return name(s)
}

// permString is Java's PermName.perm2String: R, W and X (inherit) or '-'.
func permString(p int32) string {
	b := []byte("---")
	if p&4 != 0 {
		b[0] = 'R'
	}
	if p&2 != 0 {
		b[1] = 'W'
	}
	if p&1 != 0 {
		b[2] = 'X'
	}
	return string(b)
}

func readTopicRoute(ctx context.Context, c *client.Client, in *input) (*output, error) {
	topic := in.str("t")
	tr, err := c.Route(ctx, topic)
	if err != nil {
		return nil, err
	}
	doc := struct {
		Namesrv string          `json:"namesrv"`
		Topic   string          `json:"topic"`
		Route   json.RawMessage `json:"route"`
	}{c.Addr(), topic, body.AppendTopicRoute(nil, tr, body.Standard)}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Broker\t#Cluster\t#BID\t#Addr\t#Zone")
		for _, b := range tr.BrokerDatas {
			for _, a := range b.Addrs {
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", name(b.BrokerName), name(b.Cluster), a.ID, name(a.Addr), dash(b.ZoneName))
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "#Broker\t#ReadQueues\t#WriteQueues\t#Perm\t#SysFlag")
		for _, q := range tr.QueueDatas {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s(%d)\t%d\n", name(q.BrokerName), q.ReadQueueNums, q.WriteQueueNums, permString(q.Perm), q.Perm, q.TopicSysFlag)
		}
		if tr.OrderTopicConf != "" {
			fmt.Fprintf(w, "\norderTopicConf: %s\n", oneLine(tr.OrderTopicConf))
		}
	}}, nil
}

// lines prints one name per line with no header, so the output pipes
// straight into xargs or a loop, like mqadmin's topicList. Names are
// quoted by name: whoever registers a broker picks its topic names, and a
// line break in one must not read as a second topic.
func lines(list []string) func(w io.Writer) {
	return func(w io.Writer) {
		for _, s := range list {
			fmt.Fprintln(w, name(s))
		}
	}
}

func readTopicList(ctx context.Context, c *client.Client, in *input) (*output, error) {
	if in.on("c") {
		return readTopicClusters(ctx, c)
	}
	var topics []string
	var err error
	if in.given("clusterName") {
		topics, err = c.TopicsByCluster(ctx, in.str("clusterName"))
	} else {
		topics, err = c.AllTopicList(ctx)
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(topics)
	doc := struct {
		Namesrv string   `json:"namesrv"`
		Cluster string   `json:"cluster"`
		Topics  []string `json:"topics"`
	}{c.Addr(), in.str("clusterName"), topics}
	return &output{json: doc, table: lines(topics)}, nil
}

type topicClusterRow struct {
	Cluster string `json:"cluster"`
	Topic   string `json:"topic"`
}

// readTopicClusters is topicList -c, mqadmin's clusterModel: every topic
// with the cluster(s) it has queues on. One 224 per cluster rather than
// mqadmin's route per topic: a handful of requests for any number of topics.
func readTopicClusters(ctx context.Context, c *client.Client) (*output, error) {
	all, err := c.AllTopicList(ctx)
	if err != nil {
		return nil, err
	}
	ci, err := c.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	var clusters []string
	for _, b := range ci.Brokers {
		if !slices.Contains(clusters, b.Cluster) {
			clusters = append(clusters, b.Cluster)
		}
	}
	slices.Sort(clusters)
	placed := make(map[string]bool)
	rows := []topicClusterRow{}
	for _, cl := range clusters {
		topics, err := c.TopicsByCluster(ctx, cl)
		if err != nil {
			return nil, err
		}
		for _, t := range topics {
			placed[t] = true
			rows = append(rows, topicClusterRow{cl, t})
		}
	}
	for _, t := range all {
		if !placed[t] {
			rows = append(rows, topicClusterRow{"", t})
		}
	}
	// mqadmin leaves out the retry and dead-letter topics in this mode.
	rows = slices.DeleteFunc(rows, func(r topicClusterRow) bool {
		return strings.HasPrefix(r.Topic, "%RETRY%") || strings.HasPrefix(r.Topic, "%DLQ%")
	})
	slices.SortFunc(rows, func(a, b topicClusterRow) int {
		if x := strings.Compare(a.Topic, b.Topic); x != 0 {
			return x
		}
		return strings.Compare(a.Cluster, b.Cluster)
	})
	doc := struct {
		Namesrv string            `json:"namesrv"`
		Rows    []topicClusterRow `json:"rows"`
	}{c.Addr(), rows}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Cluster\t#Topic")
		for _, r := range rows {
			fmt.Fprintf(w, "%s\t%s\n", dash(r.Cluster), name(r.Topic))
		}
	}}, nil
}

// errNoSuchBroker: the NameServer has no broker of the name.
var errNoSuchBroker = errors.New("no such broker")

// brokerCount runs a per-broker write (205, 327) and, when it changed no
// topic, asks the cluster info (106) whether the broker exists at all: a
// broker without topics changes nothing too, a misspelt name must not pass
// for that.
func brokerCount(ctx context.Context, c *client.Client, broker string, op func(context.Context, string) (int, error)) (int, error) {
	n, err := op(ctx, broker)
	if err != nil || n > 0 {
		return n, err
	}
	ci, err := c.ClusterInfo(ctx)
	if err != nil {
		return n, err
	}
	for _, b := range ci.Brokers {
		if b.BrokerName == broker {
			return n, nil
		}
	}
	return n, errNoSuchBroker
}

func readTopicClusterList(ctx context.Context, c *client.Client, in *input) (*output, error) {
	topic := in.str("t")
	tr, err := c.Route(ctx, topic)
	if err != nil {
		return nil, err
	}
	clusters := []string{}
	for _, b := range tr.BrokerDatas {
		if !slices.Contains(clusters, b.Cluster) {
			clusters = append(clusters, b.Cluster)
		}
	}
	slices.Sort(clusters)
	doc := struct {
		Namesrv  string   `json:"namesrv"`
		Topic    string   `json:"topic"`
		Clusters []string `json:"clusters"`
	}{c.Addr(), topic, clusters}
	return &output{json: doc, table: lines(clusters)}, nil
}

func readNamesrvConfig(ctx context.Context, c *client.Client, in *input) (*output, error) {
	_, pairs, err := c.GetNamesrvConfig(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p.Key] = p.Value
	}
	doc := struct {
		Namesrv string            `json:"namesrv"`
		Config  map[string]string `json:"config"`
	}{c.Addr(), m}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Key\t#Value")
		for _, p := range pairs {
			fmt.Fprintf(w, "%s\t%s\n", name(p.Key), oneLine(p.Value))
		}
	}}, nil
}

// oneLine keeps a value on its table row and in its column: a value with a
// line break, a tab or any other control, format or separator character is
// printed Go-quoted, and so is one that starts with a double quote, so that
// no raw value can pass for a quoted one.
func oneLine(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsGraphic(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// name is oneLine for a name (topic, broker, cluster, address, key), which
// also quotes any space and an empty name: xargs then reads each name as
// one argument, and an empty one still shows. Names come from whoever
// registers a broker, and neither the NameServer nor its Java counterpart
// checks them.
func name(s string) string {
	if s == "" || strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return strconv.Quote(s)
	}
	return oneLine(s)
}

func readKV(ctx context.Context, c *client.Client, in *input) (*output, error) {
	ns := in.str("s")
	var table map[string]string
	if in.given("k") {
		v, err := c.GetKV(ctx, ns, in.str("k"))
		if err != nil {
			return nil, err
		}
		table = map[string]string{in.str("k"): v}
	} else {
		var err error
		if table, err = c.KVList(ctx, ns); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	doc := struct {
		Namesrv   string            `json:"namesrv"`
		Namespace string            `json:"namespace"`
		Table     map[string]string `json:"table"`
	}{c.Addr(), ns, table}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Namespace\t#Key\t#Value")
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%s\t%s\n", name(ns), name(k), oneLine(table[k]))
		}
	}}, nil
}

type addrJSON struct {
	ID   int64  `json:"id"`
	Addr string `json:"addr"`
}

func readMemberGroup(ctx context.Context, c *client.Client, in *input) (*output, error) {
	g, err := c.GetBrokerMemberGroup(ctx, in.str("c"), in.str("b"))
	if err != nil {
		return nil, err
	}
	addrs := make([]addrJSON, len(g.Addrs))
	for i, a := range g.Addrs {
		addrs[i] = addrJSON{a.ID, a.Addr}
	}
	doc := struct {
		Namesrv     string     `json:"namesrv"`
		Cluster     string     `json:"cluster"`
		BrokerName  string     `json:"brokerName"`
		BrokerAddrs []addrJSON `json:"brokerAddrs"`
	}{c.Addr(), g.Cluster, g.BrokerName, addrs}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Cluster\t#Broker\t#BID\t#Addr")
		for _, a := range addrs {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", name(g.Cluster), name(g.BrokerName), a.ID, name(a.Addr))
		}
	}}, nil
}

type dataVersionJSON struct {
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
	Counter      int64 `json:"counter"`
}

func readDataVersion(ctx context.Context, c *client.Client, in *input) (*output, error) {
	b := client.Broker{Cluster: in.str("c"), Name: in.str("b"), Addr: in.str("a"), ID: in.int("i")}
	dv, known, err := c.BrokerDataVersion(ctx, b)
	if err != nil {
		return nil, err
	}
	doc := struct {
		Namesrv     string           `json:"namesrv"`
		Known       bool             `json:"known"`
		DataVersion *dataVersionJSON `json:"dataVersion,omitempty"`
	}{Namesrv: c.Addr(), Known: known}
	if known {
		doc.DataVersion = &dataVersionJSON{dv.StateVersion, dv.Timestamp, dv.Counter}
	}
	return &output{json: doc, table: func(w io.Writer) {
		fmt.Fprintln(w, "#Cluster\t#Broker\t#BID\t#Addr\t#StateVersion\t#Timestamp\t#Counter")
		if !known {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t-\t-\t-\n", name(b.Cluster), name(b.Name), b.ID, name(b.Addr))
			return
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%d\t%d\n", name(b.Cluster), name(b.Name), b.ID, name(b.Addr), dv.StateVersion, dv.Timestamp, dv.Counter)
	}}, nil
}
