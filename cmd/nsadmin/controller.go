// What the mqadmin controller commands (getControllerMetaData,
// getSyncStateSet, getBrokerEpoch, getControllerConfig,
// updateControllerConfig, electMaster, cleanBrokerMetadata) send and print:
// mqadmin's printed output, -o json, and mqadmin's error text with a
// non-zero exit status. Their flags and help are in the command table.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/client"
)

// controllerAddr is the first -a entry, as mqadmin takes it for commands
// that talk to one node.
func (in *input) controllerAddr() string { return in.controllerAddrs()[0] }

// controllerAddrs is -a, which parse has checked.
func (in *input) controllerAddrs() []string {
	addrs, _ := splitAddrs(in.str("a"), "a")
	return addrs
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
func (in *input) call(role, addr string, fn func(ctx context.Context, c *client.Client) error) error {
	err := withClient(addr, in, fn)
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
func (in *input) leader() (string, error) {
	var m *client.ControllerMetadata
	err := in.call(roleController, in.controllerAddr(), func(ctx context.Context, c *client.Client) (err error) {
		m, err = c.ControllerMetadata(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	if m.LeaderAddr == "" {
		return "", fmt.Errorf("%s knows no controller leader", in.controllerAddr())
	}
	return m.LeaderAddr, nil
}

// runControllerCommand runs a controller command, every -i seconds if
// given: exit 0 on success, 1 when a node or broker refused or could not be
// reached (printed as mqadmin prints it), 2 for a bad command line.
func runControllerCommand(cmd *command, in *input, stdout, stderr io.Writer) int {
	for {
		doc, err := cmd.ctl(in)
		var usage *usageError
		if errors.As(err, &usage) {
			return usageFailed(stderr, cmd, err)
		}
		if err != nil {
			printJavaError(stderr, cmd, err)
			return exitFail
		}
		if in.json && doc != nil {
			if err := writeJSONTo(stdout, doc); err != nil {
				fmt.Fprintf(stderr, "nsadmin %s: write output: %v\n", cmd.name, err)
				return exitFail
			}
		}
		if !in.given("i") {
			return exitOK
		}
		time.Sleep(time.Duration(in.int("i")) * time.Second) // until interrupted
	}
}

// printJavaError prints err as mqadmin prints a failed command: the
// SubCommandException, its cause as Java names it (MQBrokerException
// "CODE: n  DESC: remark" for an error answer) and the FAQ line.
func printJavaError(w io.Writer, cmd *command, err error) {
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

// clusterInfo asks the first reachable NameServer for the brokers (106);
// when none is, the error names each.
func (in *input) clusterInfo(addrs []string) (string, *body.ClusterInfo, error) {
	var failed []error
	for _, addr := range addrs {
		var ci *body.ClusterInfo
		err := in.call(roleNamesrv, addr, func(ctx context.Context, c *client.Client) (err error) {
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

func runGetControllerMetaData(in *input) (any, error) {
	addr := in.controllerAddr()
	var m *client.ControllerMetadata
	err := in.call(roleController, addr, func(ctx context.Context, c *client.Client) (err error) {
		m, err = c.ControllerMetadata(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	peers := m.PeerList()
	if in.json {
		if peers == nil {
			peers = []string{}
		}
		return map[string]any{"controller": addr, "group": m.Group, "controllerLeaderId": m.LeaderID,
			"controllerLeaderAddress": m.LeaderAddr, "isLeader": m.IsLeader, "peers": peers}, nil
	}
	fmt.Fprintf(in.out, "\n#ControllerGroup\t%s", javaNull(m.Group))
	fmt.Fprintf(in.out, "\n#ControllerLeaderId\t%s", javaNull(m.LeaderID))
	fmt.Fprintf(in.out, "\n#ControllerLeaderAddress\t%s", javaNull(m.LeaderAddr))
	for _, p := range peers {
		fmt.Fprintf(in.out, "\n#Peer:\t%s", p)
	}
	fmt.Fprint(in.out, "\n")
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

func runGetSyncStateSet(in *input) (any, error) {
	var names []string
	switch {
	case in.given("b"):
		names = []string{in.str("b")} // not split, as mqadmin
	case in.given("c"):
		addrs, err := in.namesrvAddrs()
		if err != nil {
			return nil, err
		}
		_, ci, err := in.clusterInfo(addrs)
		if err != nil {
			return nil, err
		}
		if names, err = brokerNamesOf(ci, in.str("c")); err != nil {
			return nil, err
		}
	default:
		return nil, usagef("give -b brokerName or -c clusterName")
	}
	leader, err := in.leader()
	if err != nil {
		return nil, err
	}
	var sets []body.ReplicasInfo
	if err := in.call(roleLeader, leader, func(ctx context.Context, c *client.Client) (err error) {
		sets, err = c.SyncStateData(ctx, names)
		return err
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(sets, func(a, b body.ReplicasInfo) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	if in.json {
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
		fmt.Fprintf(in.out, "\n#brokerName\t%s\n#MasterBrokerId\t%s\n#MasterAddr\t%s\n#MasterEpoch\t%d\n#SyncStateSetEpoch\t%d\n#SyncStateSetNums\t%d\n",
			s.BrokerName, id, addr, s.MasterEpoch, s.SyncStateSetEpoch, len(s.InSync))
		for _, x := range s.InSync {
			fmt.Fprintf(in.out, "\nInSyncReplica:\t%s\n", replicaText(x))
		}
		for _, x := range s.NotInSync {
			fmt.Fprintf(in.out, "\nNotInSyncReplica:\t%s\n", replicaText(x))
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

func runGetBrokerEpoch(in *input) (any, error) {
	if !in.given("b") && !in.given("c") {
		return nil, usagef("give -b brokerName or -c clusterName")
	}
	addrs, err := in.namesrvAddrs()
	if err != nil {
		return nil, err
	}
	namesrv, ci, err := in.clusterInfo(addrs)
	if err != nil {
		return nil, err
	}
	names := []string{in.str("b")}
	if !in.given("b") {
		if names, err = brokerNamesOf(ci, in.str("c")); err != nil {
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
			if err := in.call(role, a.Addr, func(ctx context.Context, c *client.Client) (err error) {
				ec, err = c.BrokerEpochCache(ctx)
				return err
			}); err != nil {
				return nil, err
			}
			if n := len(ec.EpochList); n > 0 {
				ec.EpochList[n-1].EndOffset = ec.MaxOffset // as mqadmin shows the last one
			}
			if in.json {
				doc.Brokers = append(doc.Brokers, epochBrokerJSON{ClusterName: ec.ClusterName, BrokerName: ec.BrokerName,
					BrokerAddr: a.Addr, BrokerID: ec.BrokerID, MaxOffset: ec.MaxOffset, Epochs: ec.EpochList})
				continue
			}
			fmt.Fprintf(in.out, "\n#clusterName\t%s\n#brokerName\t%s\n#brokerAddr\t%s\n#brokerId\t%d",
				ec.ClusterName, ec.BrokerName, a.Addr, ec.BrokerID)
			for _, e := range ec.EpochList {
				fmt.Fprintf(in.out, "\n#Epoch: EpochEntry{epoch=%d, startOffset=%d, endOffset=%d}", e.Epoch, e.StartOffset, e.EndOffset)
			}
			fmt.Fprint(in.out, "\n")
		}
	}
	if in.json {
		return doc, nil
	}
	return nil, nil
}

func runGetControllerConfig(in *input) (any, error) {
	type nodeConfig struct {
		Controller string            `json:"controller"`
		Config     map[string]string `json:"config"`
	}
	doc := struct {
		Controllers []nodeConfig `json:"controllers"`
	}{Controllers: []nodeConfig{}}
	for _, addr := range in.controllerAddrs() {
		var pairs []properties.Property
		if err := in.call(roleController, addr, func(ctx context.Context, c *client.Client) (err error) {
			_, pairs, err = c.ControllerConfig(ctx)
			return err
		}); err != nil {
			return nil, err
		}
		if in.json {
			m := make(map[string]string, len(pairs))
			for _, p := range pairs {
				m[p.Key] = p.Value
			}
			doc.Controllers = append(doc.Controllers, nodeConfig{Controller: addr, Config: m})
			continue
		}
		fmt.Fprintf(in.out, "============%s============\n", addr)
		for _, p := range pairs {
			fmt.Fprintf(in.out, "%-50s=  %s\n", p.Key, p.Value)
		}
	}
	if in.json {
		return doc, nil
	}
	return nil, nil
}

func runUpdateControllerConfig(in *input) (any, error) {
	type result struct {
		Controller string `json:"controller"`
		OK         bool   `json:"ok"`
		Code       *int32 `json:"code,omitempty"`
		Error      string `json:"error,omitempty"`
	}
	key, value := in.str("k"), in.str("v")
	addrs := in.controllerAddrs()
	results := make([]result, 0, len(addrs))
	var first error
	for _, addr := range addrs {
		err := in.call(roleController, addr, func(ctx context.Context, c *client.Client) error {
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
	if in.json {
		doc := map[string]any{"key": key, "value": value, "results": results}
		if first != nil {
			// The document still goes out, then the error.
			_ = writeJSONTo(in.out, doc)
			return nil, first
		}
		return doc, nil
	}
	if first != nil {
		return nil, first
	}
	fmt.Fprintf(in.out, "update controller config success![%s]\n%s : %s\n", strings.Join(addrs, ", "), key, value)
	return nil, nil
}

func runElectMaster(in *input) (any, error) {
	id, err := strconv.ParseInt(in.str("b"), 10, 64)
	if err != nil {
		return nil, usagef("bad -b %q: want a broker id", in.str("b"))
	}
	leader, err := in.leader()
	if err != nil {
		return nil, err
	}
	cluster, name := in.str("c"), in.str("bn")
	var res *client.ElectResult
	if err := in.call(roleLeader, leader, func(ctx context.Context, c *client.Client) (err error) {
		res, err = c.ElectMaster(ctx, cluster, name, id)
		return err
	}); err != nil {
		return nil, err
	}
	if in.json {
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
	fmt.Fprintf(in.out, "\n#ClusterName\t%s", cluster)
	fmt.Fprintf(in.out, "\n#BrokerName\t%s", name)
	fmt.Fprintf(in.out, "\n#BrokerMasterAddr\t%s", javaNull(res.MasterAddr))
	fmt.Fprintf(in.out, "\n#MasterEpoch\t%d", res.MasterEpoch)
	fmt.Fprintf(in.out, "\n#SyncStateSetEpoch\t%d\n", res.SyncStateSetEpoch)
	return nil, nil
}

func runCleanBrokerMetadata(in *input) (any, error) {
	living := in.on("l")
	if !living && in.str("c") == "" {
		return nil, usagef("cleanLivingBroker option is false, clusterName option can not be empty")
	}
	leader, err := in.leader()
	if err != nil {
		return nil, err
	}
	name := in.str("bn")
	if err := in.call(roleLeader, leader, func(ctx context.Context, c *client.Client) error {
		return c.CleanBrokerData(ctx, in.str("c"), name, in.str("b"), living)
	}); err != nil {
		return nil, err
	}
	if in.json {
		return map[string]any{"controller": leader, "brokerName": name, "ok": true}, nil
	}
	fmt.Fprintf(in.out, "clear broker %s metadata from controller success! \n", name)
	return nil, nil
}
