// The mqadmin controller commands (getControllerMetaData, getSyncStateSet,
// getBrokerEpoch, getControllerConfig, updateControllerConfig, electMaster,
// cleanBrokerMetadata): mqadmin's names, short and long flags and printed
// output, -o json, and mqadmin's error text with a non-zero exit status.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/client"
)

// ctlFlag is one flag of a controller command, with mqadmin's short and
// long names (-a and --controllerAddress).
type ctlFlag struct {
	short, long, arg, usage string
	required                bool
	isBool                  bool
}

// ctlCommand is one controller command. run prints the table output or
// returns the JSON document; its errors are printed as mqadmin prints them.
type ctlCommand struct {
	name, synopsis, about, jsonDoc string
	// javaClass names mqadmin's SubCommand in the error text.
	javaClass string
	flags     []ctlFlag
	run       func(ctx *ctlRun) (any, error)
}

var (
	flagControllerAddr = ctlFlag{short: "a", long: "controllerAddress", arg: "addr", usage: "controller address(es), ';'-separated", required: true}
	flagNamesrvAddr    = ctlFlag{short: "n", long: "namesrvAddr", arg: "addrs", usage: "NameServer addresses, ';'-separated (default $NAMESRV_ADDR)"}
	flagInterval       = ctlFlag{short: "i", long: "interval", arg: "seconds", usage: "repeat every this many seconds until interrupted"}
)

// controllerCommands returns the controller commands in help order.
func controllerCommands() []*ctlCommand {
	return []*ctlCommand{
		{
			name: "getControllerMetaData", javaClass: "GetControllerMetaDataSubCommand",
			synopsis: "a controller node's group, leader and peers (1005)",
			about:    "Asks the node at -a for its raft group, the leader it knows and the peers (CONTROLLER_GET_METADATA_INFO, 1005).",
			flags:    []ctlFlag{flagControllerAddr},
			jsonDoc: `{"controller":"host:port","group":"group1","controllerLeaderId":"n0",
   "controllerLeaderAddress":"host:port","isLeader":true,"peers":["n0:host:port"]}`,
			run: runGetControllerMetaData,
		},
		{
			name: "getSyncStateSet", javaClass: "GetSyncStateSetSubCommand",
			synopsis: "master, epochs and SyncStateSet of broker sets (1005, 1006)",
			about: "Finds the leader through -a (1005) and asks it for the sets named by -b, or of every broker\n" +
				"set of cluster -c as the NameServers of -n list them (CONTROLLER_GET_SYNC_STATE_DATA, 1006).\n" +
				"-b is one name, not split (as in mqadmin).",
			flags: []ctlFlag{flagControllerAddr,
				{short: "b", long: "brokerName", arg: "brokerName", usage: "the broker set"},
				{short: "c", long: "clusterName", arg: "clusterName", usage: "every broker set of this cluster (needs -n)"},
				flagNamesrvAddr, flagInterval},
			jsonDoc: `{"controller":"leader host:port","brokerSets":[{"brokerName":"broker-a","masterBrokerId":1,
   "masterAddress":"host:port","masterEpoch":1,"syncStateSetEpoch":2,
   "inSyncReplicas":[{"brokerName":"broker-a","brokerId":1,"brokerAddress":"host:port","alive":true}],
   "notInSyncReplicas":[]}]}
  masterBrokerId and masterAddress are absent for a set without a master.`,
			run: runGetSyncStateSet,
		},
		{
			name: "getBrokerEpoch", javaClass: "GetBrokerEpochSubCommand",
			synopsis: "epoch history of the brokers of a set or cluster (106, then 1007 to each broker)",
			about: "Lists the brokers of set -b or cluster -c from the NameServers of -n (106) and asks each broker\n" +
				"for its epoch history (GET_BROKER_EPOCH_CACHE, 1007). The last entry ends at the broker's max offset.",
			flags: []ctlFlag{flagNamesrvAddr,
				{short: "b", long: "brokerName", arg: "brokerName", usage: "the broker set"},
				{short: "c", long: "clusterName", arg: "clusterName", usage: "every broker set of this cluster"},
				flagInterval},
			jsonDoc: `{"namesrv":"host:port","brokers":[{"clusterName":"DefaultCluster","brokerName":"broker-a",
   "brokerAddr":"host:port","brokerId":0,"maxOffset":0,
   "epochs":[{"epoch":1,"startOffset":0,"endOffset":0}]}]}`,
			run: runGetBrokerEpoch,
		},
		{
			name: "getControllerConfig", javaClass: "GetControllerConfigSubCommand",
			synopsis: "each controller node's configuration (1010)",
			about:    "Asks every node of -a for its configuration (GET_CONTROLLER_CONFIG, 1010); it is node-local.",
			flags:    []ctlFlag{flagControllerAddr},
			jsonDoc:  `{"controllers":[{"controller":"host:port","config":{"bindAddress":"0.0.0.0",...}}]}`,
			run:      runGetControllerConfig,
		},
		{
			name: "updateControllerConfig", javaClass: "UpdateControllerConfigSubCommand",
			synopsis: "change one setting on each controller node (1009)",
			about: "Sends key=value to every node of -a (UPDATE_CONTROLLER_CONFIG, 1009). rocketns accepts only the\n" +
				"run-time keys (notifyBrokerRoleChanged, enableElectUncleanMaster, electMasterMaxRetryCount,\n" +
				"processReadEvent) and persists them; every node is tried, and any refusal fails the command.",
			flags: []ctlFlag{flagControllerAddr,
				{short: "k", long: "key", arg: "key", usage: "config key", required: true},
				{short: "v", long: "value", arg: "value", usage: "config value", required: true}},
			jsonDoc: `{"key":"k","value":"v","results":[{"controller":"host:port","ok":true},
   {"controller":"host:port","ok":false,"code":16,"error":"CODE: 16  DESC: ..."}]}`,
			run: runUpdateControllerConfig,
		},
		{
			name: "electMaster", javaClass: "ReElectMasterSubCommand",
			synopsis: "make a broker the master of its set (1005, 1002)",
			about: "Finds the leader through -a (1005) and asks it to elect broker -b of set -bn as master\n" +
				"(CONTROLLER_ELECT_MASTER, 1002, an admin trigger). The broker must be alive and in the\n" +
				"SyncStateSet (or the set allow unclean elections); 2011 means it is the master already.",
			flags: []ctlFlag{flagControllerAddr,
				{short: "c", long: "clusterName", arg: "clusterName", usage: "the cluster", required: true},
				{short: "bn", long: "brokerName", arg: "brokerName", usage: "the broker set", required: true},
				{short: "b", long: "brokerId", arg: "brokerId", usage: "the broker id to elect", required: true}},
			jsonDoc: `{"controller":"leader host:port","clusterName":"DefaultCluster","brokerName":"broker-a",
   "masterBrokerId":2,"masterAddress":"host:port","masterEpoch":3,"syncStateSetEpoch":5,
   "members":[{"brokerId":1,"addr":"host:port"},{"brokerId":2,"addr":"host:port"}]}
  The table output omits the members, as mqadmin's does (it never finds them).`,
			run: runElectMaster,
		},
		{
			name: "cleanBrokerMetadata", javaClass: "CleanBrokerMetadataCommand",
			synopsis: "remove brokers, or a whole set, from the controller (1005, 1011)",
			about: "Finds the leader through -a (1005) and removes broker ids -b (';'-separated; none: the whole\n" +
				"set) of set -bn (CLEAN_BROKER_DATA, 1011). Only brokers that are not alive, unless -l;\n" +
				"without -l, -c is required.",
			flags: []ctlFlag{flagControllerAddr,
				{short: "bn", long: "brokerName", arg: "brokerName", usage: "the broker set", required: true},
				{short: "b", long: "brokerControllerIdsToClean", arg: "ids", usage: "broker ids to clean, ';'-separated"},
				{short: "c", long: "clusterName", arg: "clusterName", usage: "the cluster (required without -l)"},
				{short: "l", long: "cleanLivingBroker", usage: "clean brokers that are alive too", isBool: true}},
			jsonDoc: `{"controller":"leader host:port","brokerName":"broker-a","ok":true}`,
			run:     runCleanBrokerMetadata,
		},
	}
}

func lookupController(name string) *ctlCommand {
	for _, c := range controllerCommands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// ctlRun is one run of a controller command: its flags, the shared
// connection settings, and where the table output goes.
type ctlRun struct {
	cmd  *ctlCommand
	in   *input // timeout, credentials, TLS, -o
	vals map[string]string
	set  map[string]bool
	out  io.Writer
	// sleep waits between -i repetitions (tests replace it).
	sleep  func(time.Duration) bool
	getenv func(string) string
}

func (r *ctlRun) val(short string) string { return r.vals[short] }
func (r *ctlRun) given(short string) bool { return r.set[short] }

// controllerAddr is the first -a entry, as mqadmin takes it for commands
// that talk to one node.
func (r *ctlRun) controllerAddr() string { return r.controllerAddrs()[0] }

func (r *ctlRun) controllerAddrs() []string {
	var out []string
	for _, a := range strings.Split(r.val("a"), ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Roles of the addresses a controller command talks to, named when one
// cannot be reached.
const (
	roleController = "controller"
	roleLeader     = "controller leader"
	roleNamesrv    = "NameServer"
)

// call runs fn against addr with the run's timeout, credentials and TLS. A
// failure to reach addr names role, what addr was expected to be.
func (r *ctlRun) call(role, addr string, fn func(ctx context.Context, c *client.Client) error) error {
	err := withClient(addr, r.in, fn)
	var ue *errUnreachable
	if errors.As(err, &ue) {
		ue.role = role
	}
	return err
}

// unreachables is every *errUnreachable in err's tree, in order.
func unreachables(err error) []*errUnreachable {
	var out []*errUnreachable
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case nil:
		case *errUnreachable:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return out
}

// leader asks the node at -a for the leader (1005), as mqadmin does
// before every leader request.
func (r *ctlRun) leader() (string, error) {
	var m *client.ControllerMetadata
	err := r.call(roleController, r.controllerAddr(), func(ctx context.Context, c *client.Client) (err error) {
		m, err = c.ControllerMetadata(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	if m.LeaderAddr == "" {
		return "", fmt.Errorf("%s knows no controller leader", r.controllerAddr())
	}
	return m.LeaderAddr, nil
}

// runController runs a controller command: exit 0 on success, 1 when a
// node or broker refused or could not be reached, 2 for a bad command
// line.
func runControllerCommand(cmd *ctlCommand, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	r, err := parseController(cmd, args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		printControllerCommandHelp(stdout, cmd)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "nsadmin %s: %v; run 'nsadmin help %s'\n", cmd.name, err, cmd.name)
		return exitUsage
	}
	r.out = stdout
	for {
		doc, err := cmd.run(r)
		var usage *usageError
		if errors.As(err, &usage) {
			fmt.Fprintf(stderr, "nsadmin %s: %v; run 'nsadmin help %s'\n", cmd.name, err, cmd.name)
			return exitUsage
		}
		if err != nil {
			printJavaError(stderr, cmd, err)
			return exitFail
		}
		if r.in.json && doc != nil {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(doc); err != nil {
				fmt.Fprintf(stderr, "nsadmin %s: write output: %v\n", cmd.name, err)
				return exitFail
			}
		}
		n, _ := strconv.Atoi(r.val("i"))
		if n <= 0 || !r.sleep(time.Duration(n)*time.Second) {
			return exitOK
		}
	}
}

// printJavaError prints err as mqadmin prints a failed command: the
// SubCommandException, its cause as Java names it (MQBrokerException
// "CODE: n  DESC: remark" for an error answer) and the FAQ line.
func printJavaError(w io.Writer, cmd *ctlCommand, err error) {
	fmt.Fprintf(w, "org.apache.rocketmq.tools.command.SubCommandException: %s command failed\n", cmd.javaClass)
	var re *client.ResponseError
	var ue *errUnreachable
	switch {
	case errors.As(err, &re):
		fmt.Fprintf(w, "Caused by: org.apache.rocketmq.client.exception.MQBrokerException: CODE: %d  DESC: %s\n", re.Code, re.Remark)
	case errors.As(err, &ue):
		var texts []string
		for _, u := range unreachables(err) {
			texts = append(texts, u.connectText())
		}
		fmt.Fprintf(w, "Caused by: org.apache.rocketmq.remoting.exception.RemotingConnectException: %s\n", strings.Join(texts, "; "))
	default:
		fmt.Fprintf(w, "Caused by: org.apache.rocketmq.client.exception.MQClientException: %s\n", describe(err))
	}
	fmt.Fprintln(w, "For more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ")
}

// parseController reads the command line: the command's flags under both
// their names, and the flags every command shares (-o, -timeout, the ACL
// and TLS ones).
func parseController(cmd *ctlCommand, args []string, getenv func(string) string) (*ctlRun, error) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	format := fs.String("o", "table", "")
	timeout := fs.Duration("timeout", defaultTimeout, "")
	accessKey := fs.String("accessKey", "", "")
	secretKey := fs.String("secretKey", "", "")
	strictSign := fs.Bool("strictSign", false, "")
	var tf tlsFlags
	fs.BoolVar(&tf.on, "tls", false, "")
	fs.StringVar(&tf.ca, "tlsCA", "", "")
	fs.BoolVar(&tf.insecure, "tlsInsecure", false, "")
	fs.StringVar(&tf.cert, "tlsCert", "", "")
	fs.StringVar(&tf.key, "tlsKey", "", "")
	strs := map[string]*string{}
	bools := map[string]*bool{}
	long := map[string]string{} // long name -> short
	for _, f := range cmd.flags {
		long[f.long] = f.short
		if f.isBool {
			b := new(bool)
			bools[f.short] = b
			fs.BoolVar(b, f.short, false, "")
			fs.BoolVar(b, f.long, false, "")
			continue
		}
		s := new(string)
		strs[f.short] = s
		fs.StringVar(s, f.short, "", "")
		fs.StringVar(s, f.long, "", "")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	r := &ctlRun{cmd: cmd, vals: map[string]string{}, set: map[string]bool{}, sleep: sleepOrStop, getenv: getenv}
	r.in = &input{set: map[string]bool{}, timeout: *timeout, strs: map[string]string{}, ints: map[string]int64{}}
	fs.Visit(func(f *flag.Flag) {
		name := f.Name
		if s, ok := long[name]; ok {
			name = s
		}
		r.set[name] = true
		r.in.set[name] = true
	})
	switch *format {
	case "table":
	case "json":
		r.in.json = true
	default:
		return nil, usagef("bad -o %q: want table or json", *format)
	}
	if *timeout <= 0 {
		return nil, usagef("bad -timeout %s: must be positive", *timeout)
	}
	for _, f := range cmd.flags {
		if f.isBool {
			if *bools[f.short] {
				r.vals[f.short] = "true"
			}
			continue
		}
		v := strings.TrimSpace(*strs[f.short])
		r.vals[f.short] = v
		if f.required && !r.set[f.short] {
			return nil, usagef("missing required flag -%s (--%s, %s)", f.short, f.long, f.arg)
		}
		if r.set[f.short] && v == "" && f.short != "v" {
			return nil, usagef("flag -%s (%s) is given but empty: give a value or leave the flag out", f.short, f.arg)
		}
	}
	if r.set["a"] {
		for _, a := range r.controllerAddrs() {
			if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
				return nil, usagef("bad -a address %q: want host:port", a)
			}
		}
		if len(r.controllerAddrs()) == 0 {
			return nil, usagef("flag -a lists no address")
		}
	}
	if r.set["i"] {
		if n, err := strconv.Atoi(r.val("i")); err != nil || n <= 0 {
			return nil, usagef("bad -i %q: want a positive number of seconds", r.val("i"))
		}
	}
	var err error
	if r.in.creds, err = credentials(r.in, *accessKey, *secretKey, *strictSign, getenv); err != nil {
		return nil, err
	}
	if r.in.tls, err = tf.config(r.in, getenv); err != nil {
		return nil, err
	}
	return r, nil
}

// sleepOrStop waits d; -i repeats until the process is interrupted.
func sleepOrStop(d time.Duration) bool {
	time.Sleep(d)
	return true
}

// namesrvAddrs is -n, else NAMESRV_ADDR, for the commands that read the
// brokers from the NameServers.
func (r *ctlRun) namesrvAddrs() ([]string, error) {
	list := r.val("n")
	if !r.given("n") {
		list = r.getenv("NAMESRV_ADDR")
	}
	return splitAddrs(list)
}

// clusterInfo asks the first reachable NameServer for the brokers (106);
// when none is, the error names each.
func (r *ctlRun) clusterInfo(addrs []string) (string, *body.ClusterInfo, error) {
	var failed []error
	for _, addr := range addrs {
		var ci *body.ClusterInfo
		err := r.call(roleNamesrv, addr, func(ctx context.Context, c *client.Client) (err error) {
			ci, err = c.ClusterInfo(ctx)
			return err
		})
		var ue *errUnreachable
		if errors.As(err, &ue) {
			failed = append(failed, err)
			continue
		}
		return addr, ci, err
	}
	return "", nil, errors.Join(failed...)
}

// brokerNamesOf is the broker sets of cluster in ci, sorted.
func brokerNamesOf(ci *body.ClusterInfo, cluster string) ([]string, error) {
	names, ok := ci.Clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %q is not known to the NameServer", cluster)
	}
	names = slices.Clone(names)
	slices.Sort(names)
	return names, nil
}

func runGetControllerMetaData(r *ctlRun) (any, error) {
	addr := r.controllerAddr()
	var m *client.ControllerMetadata
	err := r.call(roleController, addr, func(ctx context.Context, c *client.Client) (err error) {
		m, err = c.ControllerMetadata(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	peers := m.PeerList()
	if r.in.json {
		if peers == nil {
			peers = []string{}
		}
		return map[string]any{"controller": addr, "group": m.Group, "controllerLeaderId": m.LeaderID,
			"controllerLeaderAddress": m.LeaderAddr, "isLeader": m.IsLeader, "peers": peers}, nil
	}
	fmt.Fprintf(r.out, "\n#ControllerGroup\t%s", javaNull(m.Group))
	fmt.Fprintf(r.out, "\n#ControllerLeaderId\t%s", javaNull(m.LeaderID))
	fmt.Fprintf(r.out, "\n#ControllerLeaderAddress\t%s", javaNull(m.LeaderAddr))
	for _, p := range peers {
		fmt.Fprintf(r.out, "\n#Peer:\t%s", p)
	}
	fmt.Fprint(r.out, "\n")
	return nil, nil
}

// javaNull is how Java's %s prints an absent field.
func javaNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

type replicaJSON struct {
	BrokerName    string `json:"brokerName"`
	BrokerID      int64  `json:"brokerId"`
	BrokerAddress string `json:"brokerAddress"`
	Alive         bool   `json:"alive"`
}

type syncStateJSON struct {
	BrokerName        string        `json:"brokerName"`
	MasterBrokerID    *int64        `json:"masterBrokerId,omitempty"`
	MasterAddress     *string       `json:"masterAddress,omitempty"`
	MasterEpoch       int32         `json:"masterEpoch"`
	SyncStateSetEpoch int32         `json:"syncStateSetEpoch"`
	InSync            []replicaJSON `json:"inSyncReplicas"`
	NotInSync         []replicaJSON `json:"notInSyncReplicas"`
}

func replicas(in []body.ReplicaIdentity) []replicaJSON {
	out := make([]replicaJSON, 0, len(in))
	for _, x := range in {
		out = append(out, replicaJSON{x.BrokerName, x.BrokerID, x.BrokerAddress, x.Alive})
	}
	return out
}

// replicaText is Java's ReplicaIdentity.toString.
func replicaText(x body.ReplicaIdentity) string {
	return fmt.Sprintf("ReplicaIdentity{brokerName='%s', brokerId=%d, brokerAddress='%s', alive=%t}",
		x.BrokerName, x.BrokerID, x.BrokerAddress, x.Alive)
}

func runGetSyncStateSet(r *ctlRun) (any, error) {
	var names []string
	switch {
	case r.given("b"):
		names = []string{r.val("b")} // not split, as mqadmin
	case r.given("c"):
		addrs, err := r.namesrvAddrs()
		if err != nil {
			return nil, err
		}
		_, ci, err := r.clusterInfo(addrs)
		if err != nil {
			return nil, err
		}
		if names, err = brokerNamesOf(ci, r.val("c")); err != nil {
			return nil, err
		}
	default:
		return nil, usagef("give -b brokerName or -c clusterName")
	}
	leader, err := r.leader()
	if err != nil {
		return nil, err
	}
	var sets []body.ReplicasInfo
	if err := r.call(roleLeader, leader, func(ctx context.Context, c *client.Client) (err error) {
		sets, err = c.SyncStateData(ctx, names)
		return err
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(sets, func(a, b body.ReplicasInfo) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	if r.in.json {
		doc := struct {
			Controller string          `json:"controller"`
			Sets       []syncStateJSON `json:"brokerSets"`
		}{Controller: leader, Sets: []syncStateJSON{}}
		for _, s := range sets {
			j := syncStateJSON{BrokerName: s.BrokerName, MasterEpoch: s.MasterEpoch, SyncStateSetEpoch: s.SyncStateSetEpoch,
				InSync: replicas(s.InSync), NotInSync: replicas(s.NotInSync)}
			if s.HasMaster {
				id := s.MasterBrokerID
				j.MasterBrokerID = &id
			}
			if s.HasMasterAddress {
				a := s.MasterAddress
				j.MasterAddress = &a
			}
			doc.Sets = append(doc.Sets, j)
		}
		return doc, nil
	}
	for _, s := range sets {
		id := "null"
		if s.HasMaster {
			id = strconv.FormatInt(s.MasterBrokerID, 10)
		}
		addr := "null"
		if s.HasMasterAddress {
			addr = s.MasterAddress
		}
		fmt.Fprintf(r.out, "\n#brokerName\t%s\n#MasterBrokerId\t%s\n#MasterAddr\t%s\n#MasterEpoch\t%d\n#SyncStateSetEpoch\t%d\n#SyncStateSetNums\t%d\n",
			s.BrokerName, id, addr, s.MasterEpoch, s.SyncStateSetEpoch, len(s.InSync))
		for _, x := range s.InSync {
			fmt.Fprintf(r.out, "\nInSyncReplica:\t%s\n", replicaText(x))
		}
		for _, x := range s.NotInSync {
			fmt.Fprintf(r.out, "\nNotInSyncReplica:\t%s\n", replicaText(x))
		}
	}
	return nil, nil
}

type epochBrokerJSON struct {
	ClusterName string            `json:"clusterName"`
	BrokerName  string            `json:"brokerName"`
	BrokerAddr  string            `json:"brokerAddr"`
	BrokerID    int64             `json:"brokerId"`
	MaxOffset   int64             `json:"maxOffset"`
	Epochs      []body.EpochEntry `json:"epochs"`
}

func runGetBrokerEpoch(r *ctlRun) (any, error) {
	if !r.given("b") && !r.given("c") {
		return nil, usagef("give -b brokerName or -c clusterName")
	}
	addrs, err := r.namesrvAddrs()
	if err != nil {
		return nil, err
	}
	namesrv, ci, err := r.clusterInfo(addrs)
	if err != nil {
		return nil, err
	}
	names := []string{r.val("b")}
	if !r.given("b") {
		if names, err = brokerNamesOf(ci, r.val("c")); err != nil {
			return nil, err
		}
	}
	doc := struct {
		Namesrv string            `json:"namesrv"`
		Brokers []epochBrokerJSON `json:"brokers"`
	}{Namesrv: namesrv, Brokers: []epochBrokerJSON{}}
	for _, name := range names {
		i := slices.IndexFunc(ci.Brokers, func(b body.BrokerData) bool { return b.BrokerName == name })
		if i < 0 {
			return nil, fmt.Errorf("broker %s is not known to the NameServer %s", name, namesrv)
		}
		addrs := slices.Clone(ci.Brokers[i].Addrs)
		slices.SortFunc(addrs, body.ByBrokerID)
		for _, a := range addrs {
			var ec *body.EpochEntryCache
			role := fmt.Sprintf("broker %s, brokerId %d", name, a.ID)
			if err := r.call(role, a.Addr, func(ctx context.Context, c *client.Client) (err error) {
				ec, err = c.BrokerEpochCache(ctx)
				return err
			}); err != nil {
				return nil, err
			}
			if n := len(ec.EpochList); n > 0 {
				ec.EpochList[n-1].EndOffset = ec.MaxOffset // as mqadmin shows the last one
			}
			if r.in.json {
				doc.Brokers = append(doc.Brokers, epochBrokerJSON{ClusterName: ec.ClusterName, BrokerName: ec.BrokerName,
					BrokerAddr: a.Addr, BrokerID: ec.BrokerID, MaxOffset: ec.MaxOffset, Epochs: ec.EpochList})
				continue
			}
			fmt.Fprintf(r.out, "\n#clusterName\t%s\n#brokerName\t%s\n#brokerAddr\t%s\n#brokerId\t%d",
				ec.ClusterName, ec.BrokerName, a.Addr, ec.BrokerID)
			for _, e := range ec.EpochList {
				fmt.Fprintf(r.out, "\n#Epoch: EpochEntry{epoch=%d, startOffset=%d, endOffset=%d}", e.Epoch, e.StartOffset, e.EndOffset)
			}
			fmt.Fprint(r.out, "\n")
		}
	}
	if r.in.json {
		return doc, nil
	}
	return nil, nil
}

func runGetControllerConfig(r *ctlRun) (any, error) {
	type nodeConfig struct {
		Controller string            `json:"controller"`
		Config     map[string]string `json:"config"`
	}
	doc := struct {
		Controllers []nodeConfig `json:"controllers"`
	}{Controllers: []nodeConfig{}}
	for _, addr := range r.controllerAddrs() {
		var pairs []properties.Property
		if err := r.call(roleController, addr, func(ctx context.Context, c *client.Client) (err error) {
			_, pairs, err = c.ControllerConfig(ctx)
			return err
		}); err != nil {
			return nil, err
		}
		if r.in.json {
			m := make(map[string]string, len(pairs))
			for _, p := range pairs {
				m[p.Key] = p.Value
			}
			doc.Controllers = append(doc.Controllers, nodeConfig{Controller: addr, Config: m})
			continue
		}
		fmt.Fprintf(r.out, "============%s============\n", addr)
		for _, p := range pairs {
			fmt.Fprintf(r.out, "%-50s=  %s\n", p.Key, p.Value)
		}
	}
	if r.in.json {
		return doc, nil
	}
	return nil, nil
}

func runUpdateControllerConfig(r *ctlRun) (any, error) {
	type result struct {
		Controller string `json:"controller"`
		OK         bool   `json:"ok"`
		Code       *int32 `json:"code,omitempty"`
		Error      string `json:"error,omitempty"`
	}
	key, value := r.val("k"), r.val("v")
	addrs := r.controllerAddrs()
	results := make([]result, 0, len(addrs))
	var first error
	for _, addr := range addrs {
		err := r.call(roleController, addr, func(ctx context.Context, c *client.Client) error {
			return c.UpdateControllerConfig(ctx, []properties.Property{{Key: key, Value: value}})
		})
		res := result{Controller: addr, OK: err == nil}
		if err != nil {
			var re *client.ResponseError
			if errors.As(err, &re) {
				code := re.Code
				res.Code = &code
				res.Error = fmt.Sprintf("CODE: %d  DESC: %s", re.Code, re.Remark)
			} else {
				res.Error = describe(err)
			}
			if first == nil {
				first = err
			}
		}
		results = append(results, res)
	}
	if r.in.json {
		doc := map[string]any{"key": key, "value": value, "results": results}
		if first != nil {
			// The document still goes out, then the error.
			enc := json.NewEncoder(r.out)
			enc.SetIndent("", "  ")
			enc.Encode(doc)
			return nil, first
		}
		return doc, nil
	}
	if first != nil {
		return nil, first
	}
	fmt.Fprintf(r.out, "update controller config success![%s]\n%s : %s\n", strings.Join(addrs, ", "), key, value)
	return nil, nil
}

func runElectMaster(r *ctlRun) (any, error) {
	id, err := strconv.ParseInt(r.val("b"), 10, 64)
	if err != nil {
		return nil, usagef("bad -b %q: want a broker id", r.val("b"))
	}
	leader, err := r.leader()
	if err != nil {
		return nil, err
	}
	cluster, name := r.val("c"), r.val("bn")
	var res *client.ElectResult
	if err := r.call(roleLeader, leader, func(ctx context.Context, c *client.Client) (err error) {
		res, err = c.ElectMaster(ctx, cluster, name, id)
		return err
	}); err != nil {
		return nil, err
	}
	if r.in.json {
		type member struct {
			ID   int64  `json:"brokerId"`
			Addr string `json:"addr"`
		}
		members := []member{}
		if res.Body != nil && res.Body.Group != nil {
			for _, a := range res.Body.Group.Addrs {
				members = append(members, member{a.ID, a.Addr})
			}
		}
		return map[string]any{"controller": leader, "clusterName": cluster, "brokerName": name, "masterBrokerId": res.MasterID,
			"masterAddress": res.MasterAddr, "masterEpoch": res.MasterEpoch, "syncStateSetEpoch": res.SyncStateSetEpoch,
			"members": members}, nil
	}
	fmt.Fprintf(r.out, "\n#ClusterName\t%s", cluster)
	fmt.Fprintf(r.out, "\n#BrokerName\t%s", name)
	fmt.Fprintf(r.out, "\n#BrokerMasterAddr\t%s", javaNull(res.MasterAddr))
	fmt.Fprintf(r.out, "\n#MasterEpoch\t%d", res.MasterEpoch)
	fmt.Fprintf(r.out, "\n#SyncStateSetEpoch\t%d\n", res.SyncStateSetEpoch)
	return nil, nil
}

func runCleanBrokerMetadata(r *ctlRun) (any, error) {
	living := r.val("l") == "true"
	if !living && r.val("c") == "" {
		return nil, usagef("cleanLivingBroker option is false, clusterName option can not be empty")
	}
	leader, err := r.leader()
	if err != nil {
		return nil, err
	}
	name := r.val("bn")
	if err := r.call(roleLeader, leader, func(ctx context.Context, c *client.Client) error {
		return c.CleanBrokerData(ctx, r.val("c"), name, r.val("b"), living)
	}); err != nil {
		return nil, err
	}
	if r.in.json {
		return map[string]any{"controller": leader, "brokerName": name, "ok": true}, nil
	}
	fmt.Fprintf(r.out, "clear broker %s metadata from controller success! \n", name)
	return nil, nil
}

// printControllerHelp lists the controller commands, in the command list of
// nsadmin help.
func printControllerHelp(w io.Writer) {
	fmt.Fprint(w, "\nController commands (RocketMQ 5.x controller, rocketns or Java; -a names controller nodes,\n"+
		"-n NameServers; the common flags below apply, -n only where a command lists it):\n")
	tw := newTable(w)
	for _, c := range controllerCommands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.synopsis)
	}
	tw.Flush()
}

func printControllerCommandHelp(w io.Writer, c *ctlCommand) {
	fmt.Fprintf(w, "nsadmin %s: %s\n\n%s\n", c.name, c.synopsis, c.about)
	var usage strings.Builder
	usage.WriteString("nsadmin " + c.name)
	for _, f := range c.flags {
		arg := ""
		if !f.isBool {
			arg = " " + f.arg
		}
		if f.required {
			fmt.Fprintf(&usage, " -%s%s", f.short, arg)
		} else {
			fmt.Fprintf(&usage, " [-%s%s]", f.short, arg)
		}
	}
	usage.WriteString(" [-o json]")
	fmt.Fprintf(w, "\nUsage:\n  %s\n\nFlags:\n", usage.String())
	tw := newTable(w)
	for _, f := range c.flags {
		note := ""
		if f.required {
			note = " (required)"
		}
		fmt.Fprintf(tw, "  -%s, --%s\t%s%s\n", f.short, f.long, f.usage, note)
	}
	fmt.Fprintf(tw, "  -o table|json\toutput format (default table)\n")
	fmt.Fprintf(tw, "  -timeout d\tbound on each request (default %s)\n", defaultTimeout)
	fmt.Fprintf(tw, "  -accessKey, -secretKey, -tls...\tas for every command (nsadmin help)\n")
	tw.Flush()
	fmt.Fprintf(w, "\nJSON output (-o json):\n  %s\n\nA refusal is printed as mqadmin prints it (CODE: n  DESC: remark); the exit status is then 1.\n", c.jsonDoc)
}
