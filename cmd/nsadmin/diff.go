// The diff subcommand: asks every NameServer in -n for its brokers and the
// route of every topic, and reports where they disagree.

package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
)

// Kinds of difference, in report order: what a broker's registration puts
// in the broker table first, then what it puts in each topic's route.
const (
	kindCluster       = "cluster"       // a cluster's broker names
	kindBrokerCluster = "brokerCluster" // the cluster a broker group belongs to
	kindBroker        = "broker"        // one brokerName/brokerId address
	kindTopic         = "topic"         // a topic has a route on some servers only
	kindQueue         = "queue"         // a topic's queue data on one broker group
	kindOrder         = "orderTopicConf"
)

var kindOrderRank = map[string]int{kindCluster: 0, kindBrokerCluster: 1, kindBroker: 2, kindTopic: 3, kindQueue: 4, kindOrder: 5}

// difference is one thing the NameServers disagree about. values holds one
// rendering per NameServer (by index into the -n list); nil means absent.
type difference struct {
	kind, subject string
	cluster       string
	broker        string
	brokerID      *int64
	topic         string
	values        []*string
	// shown, when set, is values as the table prints them: the lists of
	// names with each name quoted by name.
	shown []*string
}

// tableSubject is the subject with each name in it quoted by name, so that
// a name cannot break the report's rows or columns.
func (d *difference) tableSubject() string {
	switch d.kind {
	case kindCluster:
		return name(d.cluster)
	case kindBrokerCluster:
		return name(d.broker)
	case kindBroker:
		if d.brokerID != nil {
			return name(fmt.Sprintf("%s/%d", d.broker, *d.brokerID))
		}
	case kindQueue:
		return name(d.topic) + " @ " + name(d.broker)
	case kindTopic, kindOrder:
		return name(d.topic)
	}
	return oneLine(d.subject)
}

// tableValue is server i's value as the table prints it: "-" when absent,
// names quoted by name and other values by oneLine.
func (d *difference) tableValue(i int) string {
	v := d.values[i]
	switch {
	case v == nil:
		return "-"
	case *v == "":
		return `""`
	case d.shown != nil && d.shown[i] != nil:
		return *d.shown[i]
	case d.kind == kindBroker || d.kind == kindBrokerCluster:
		return name(*v)
	}
	return oneLine(*v)
}

// nsView is what diff learnt from one NameServer.
type nsView struct {
	addr   string
	c      *client.Client
	ci     *body.ClusterInfo
	topics []string

	mu  sync.Mutex
	err error // guarded by mu; the first failure takes the server out of the comparison
}

func (v *nsView) fail(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		v.err = err
	}
}

func (v *nsView) failed() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// diffReport is the outcome of a diff, ready to print.
type diffReport struct {
	addrs    []string
	alive    []bool
	errs     []error
	clusters int
	brokers  int
	topics   int
	diffs    []difference
}

func runDiff(in *input, stdout, stderr io.Writer) int {
	if len(in.addrs) < 2 {
		fmt.Fprintf(stderr, "nsadmin diff: -n lists %d NameServer; diff needs at least two; run 'nsadmin help diff'\n", len(in.addrs))
		return exitUsage
	}
	for i, a := range in.addrs {
		if slices.Contains(in.addrs[:i], a) {
			fmt.Fprintf(stderr, "nsadmin diff: %s is listed twice in -n; run 'nsadmin help diff'\n", a)
			return exitUsage
		}
	}
	rep := collectDiff(in)
	for i, err := range rep.errs {
		if err != nil {
			fmt.Fprintf(stderr, "nsadmin diff: %s: %s\n", rep.addrs[i], describeFailure(err))
		}
	}
	compared := 0
	for _, a := range rep.alive {
		if a {
			compared++
		}
	}
	if err := rep.write(stdout, in.json); err != nil {
		fmt.Fprintf(stderr, "nsadmin diff: write output: %v\n", err)
		return exitFail
	}
	if compared < len(rep.addrs) || len(rep.diffs) > 0 {
		return exitFail
	}
	return exitOK
}

// describeFailure is describe with the unreachable wording of the other
// commands.
func describeFailure(err error) string {
	var ue *errUnreachable
	if errors.As(err, &ue) {
		return ue.Error()
	}
	return describe(err)
}

// asked wraps a request failure the way withClient does, so an unreachable
// server reads the same in every command.
func asked(err error, in *input) error {
	var re *client.ResponseError
	if err != nil && !errors.As(err, &re) && isTransport(err) {
		return unreachable(err, in)
	}
	return err
}

// collectDiff asks every server and compares what they said. Servers are
// asked in parallel; topics go through a pool of in.int("workers")
// goroutines sharing one pipelined connection per server.
func collectDiff(in *input) *diffReport {
	views := make([]*nsView, len(in.addrs))
	var wg sync.WaitGroup
	for i, addr := range in.addrs {
		v := &nsView{addr: addr}
		views[i] = v
		wg.Go(func() { v.load(in) })
	}
	wg.Wait()
	defer func() {
		for _, v := range views {
			if v.c != nil {
				v.c.Close()
			}
		}
	}()

	rep := &diffReport{addrs: in.addrs}
	var alive []*nsView
	for _, v := range views {
		if v.failed() == nil {
			alive = append(alive, v)
		}
	}
	var candidates []difference
	if len(alive) >= 2 {
		candidates = compareClusters(views)
		candidates = append(candidates, compareTopics(views, unionTopics(alive), int(in.int("workers")), in)...)
	}

	rep.alive = make([]bool, len(views))
	rep.errs = make([]error, len(views))
	for i, v := range views {
		rep.errs[i] = v.failed()
		rep.alive[i] = rep.errs[i] == nil
	}
	rep.diffs = keepDiffering(candidates, rep.alive)
	rep.clusters, rep.brokers, rep.topics = countUnion(views, rep.alive)
	return rep
}

// load dials the server and reads its cluster info and topic list.
func (v *nsView) load(in *input) {
	ctx, cancel := context.WithTimeout(context.Background(), in.timeout)
	defer cancel()
	c, err := dial(ctx, v.addr, in)
	if err != nil {
		v.fail(unreachable(err, in))
		return
	}
	c.SetCredentials(in.creds)
	v.c = c
	if v.ci, err = c.ClusterInfo(ctx); err != nil {
		v.fail(asked(err, in))
		return
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), in.timeout)
	defer cancel2()
	if v.topics, err = c.AllTopicList(ctx2); err != nil {
		v.fail(asked(err, in))
	}
}

func unionTopics(views []*nsView) []string {
	seen := make(map[string]struct{})
	var all []string
	for _, v := range views {
		for _, t := range v.topics {
			if _, ok := seen[t]; !ok {
				seen[t] = struct{}{}
				all = append(all, t)
			}
		}
	}
	slices.Sort(all)
	return all
}

// countUnion counts clusters, broker addresses and topics over the servers
// still compared.
func countUnion(views []*nsView, alive []bool) (clusters, brokers, topics int) {
	cs := make(map[string]struct{})
	bs := make(map[string]struct{})
	var live []*nsView
	for i, v := range views {
		if !alive[i] {
			continue
		}
		live = append(live, v)
		for c := range v.ci.Clusters {
			cs[c] = struct{}{}
		}
		for _, b := range v.ci.Brokers {
			for _, a := range b.Addrs {
				bs[fmt.Sprintf("%s/%d", b.BrokerName, a.ID)] = struct{}{}
			}
		}
	}
	return len(cs), len(bs), len(unionTopics(live))
}

func strPtr(s string) *string { return &s }

// joinNames joins sorted names twice: raw, as they are compared and as
// JSON shows them, and shown, each quoted by name for the table.
func joinNames(names []string) (raw, shown *string) {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = name(n)
	}
	return strPtr(strings.Join(names, ",")), strPtr(strings.Join(quoted, ","))
}

// compareClusters compares the 106 answers of the servers that gave one.
func compareClusters(views []*nsView) []difference {
	n := len(views)
	var out []difference
	// Cluster -> its broker names.
	members := make(map[string][]*string)
	membersShown := make(map[string][]*string)
	// brokerName -> cluster, and brokerName/id -> address.
	groups := make(map[string][]*string)
	type addrKey struct {
		name string
		id   int64
	}
	addrs := make(map[addrKey][]*string)
	addrCluster := make(map[addrKey]string)
	slot := func(m map[string][]*string, k string) []*string {
		if m[k] == nil {
			m[k] = make([]*string, n)
		}
		return m[k]
	}
	for i, v := range views {
		if v.ci == nil || v.failed() != nil {
			continue
		}
		for c, names := range v.ci.Clusters {
			names = slices.Clone(names)
			slices.Sort(names)
			slot(members, c)[i], slot(membersShown, c)[i] = joinNames(names)
		}
		for _, b := range v.ci.Brokers {
			slot(groups, b.BrokerName)[i] = strPtr(b.Cluster)
			for _, a := range b.Addrs {
				k := addrKey{b.BrokerName, a.ID}
				if addrs[k] == nil {
					addrs[k] = make([]*string, n)
				}
				addrs[k][i] = strPtr(a.Addr)
				addrCluster[k] = b.Cluster
			}
		}
	}
	for c, vals := range members {
		out = append(out, difference{kind: kindCluster, subject: c, cluster: c, values: vals, shown: membersShown[c]})
	}
	for name, vals := range groups {
		// A group missing on a server is reported by its address rows; this
		// row is only for a group two servers place in different clusters.
		if differs(vals, false) {
			out = append(out, difference{kind: kindBrokerCluster, subject: name, broker: name, values: vals})
		}
	}
	for k, vals := range addrs {
		id := k.id
		out = append(out, difference{kind: kindBroker, subject: fmt.Sprintf("%s/%d", k.name, k.id),
			cluster: addrCluster[k], broker: k.name, brokerID: &id, values: vals})
	}
	return out
}

// differs reports whether the non-nil values disagree, or, with
// missingCounts, whether any value is missing while another is present.
func differs(vals []*string, missingCounts bool) bool {
	var first *string
	sawNil := false
	for _, v := range vals {
		if v == nil {
			sawNil = true
			continue
		}
		if first == nil {
			first = v
		} else if *v != *first {
			return true
		}
	}
	return missingCounts && sawNil && first != nil
}

// routeAnswer is one server's answer for one topic.
type routeAnswer struct {
	route *body.TopicRoute // nil: no route (17), or the server was not asked
	asked bool
}

// compareTopics asks every live server for the route of every topic with a
// bounded pool and returns the candidate differences. A server that fails
// part-way is taken out of the comparison; keepDiffering later drops what
// only it disagreed on.
func compareTopics(views []*nsView, topics []string, workers int, in *input) []difference {
	var (
		mu  sync.Mutex
		out []difference
		wg  sync.WaitGroup
	)
	next := make(chan string)
	for range min(workers, max(len(topics), 1)) {
		wg.Go(func() {
			answers := make([]routeAnswer, len(views))
			for topic := range next {
				for i, v := range views {
					answers[i] = routeAnswer{}
					if v.failed() != nil {
						continue
					}
					tr, err := askRoute(v.c, topic, in)
					if err != nil {
						v.fail(asked(err, in))
						continue
					}
					answers[i] = routeAnswer{route: tr, asked: true}
				}
				d := compareTopic(topic, answers)
				if len(d) > 0 {
					mu.Lock()
					out = append(out, d...)
					mu.Unlock()
				}
			}
		})
	}
	for _, t := range topics {
		next <- t
	}
	close(next)
	wg.Wait()
	return out
}

// askRoute returns the topic's route, or nil when the server has none.
func askRoute(c *client.Client, topic string, in *input) (*body.TopicRoute, error) {
	ctx, cancel := context.WithTimeout(context.Background(), in.timeout)
	defer cancel()
	tr, err := c.Route(ctx, topic)
	var re *client.ResponseError
	if errors.As(err, &re) && re.Code == codec.TopicNotExist {
		return nil, nil
	}
	return tr, err
}

// queueValue renders queue data the way topicRoute prints it.
func queueValue(q body.QueueData) string {
	s := fmt.Sprintf("%s(%d) r%d w%d", permString(q.Perm), q.Perm, q.ReadQueueNums, q.WriteQueueNums)
	if q.TopicSysFlag != 0 {
		s += fmt.Sprintf(" sysFlag %d", q.TopicSysFlag)
	}
	return s
}

// compareTopic compares one topic's routes. Servers not asked (failed
// earlier) are left out; a server without the topic has nil values.
func compareTopic(topic string, answers []routeAnswer) []difference {
	n := len(answers)
	var out []difference
	presence := make([]*string, n)
	presenceShown := make([]*string, n)
	knownBy := 0
	for i, a := range answers {
		if a.route == nil {
			continue
		}
		knownBy++
		var names []string
		for _, q := range a.route.QueueDatas {
			if !slices.Contains(names, q.BrokerName) {
				names = append(names, q.BrokerName)
			}
		}
		slices.Sort(names)
		presence[i], presenceShown[i] = joinNames(names)
	}
	if knownBy == 0 {
		return nil
	}
	missing := false
	for _, a := range answers {
		missing = missing || (a.asked && a.route == nil)
	}
	if missing {
		out = append(out, difference{kind: kindTopic, subject: topic, topic: topic, values: presence, shown: presenceShown})
	}
	// Queue data and orderTopicConf are compared among the servers that
	// have the topic: a missing topic is already reported above.
	queues := make(map[string][]*string)
	var order []string
	for i, a := range answers {
		if a.route == nil {
			continue
		}
		for _, q := range a.route.QueueDatas {
			if queues[q.BrokerName] == nil {
				queues[q.BrokerName] = make([]*string, n)
				order = append(order, q.BrokerName)
			}
			queues[q.BrokerName][i] = strPtr(queueValue(q))
		}
	}
	haveRoute := make([]bool, n)
	for i, a := range answers {
		haveRoute[i] = a.route != nil
	}
	for _, name := range order {
		vals := queues[name]
		if differsOver(vals, haveRoute) {
			out = append(out, difference{kind: kindQueue, subject: topic + " @ " + name, topic: topic, broker: name, values: vals})
		}
	}
	conf := make([]*string, n)
	for i, a := range answers {
		if a.route != nil {
			conf[i] = strPtr(a.route.OrderTopicConf)
		}
	}
	if differs(conf, false) {
		out = append(out, difference{kind: kindOrder, subject: topic, topic: topic, values: conf})
	}
	return out
}

// differsOver compares vals over the servers in mask only; there a nil
// value (the route lacks that broker group) differs from any other value.
func differsOver(vals []*string, mask []bool) bool {
	var first *string
	seen := false
	for i, in := range mask {
		if !in {
			continue
		}
		if !seen {
			first, seen = vals[i], true
			continue
		}
		if (first == nil) != (vals[i] == nil) || (first != nil && *first != *vals[i]) {
			return true
		}
	}
	return false
}

// keepDiffering drops the values of servers no longer compared, keeps the
// differences that still hold among the rest under the rule that made
// them, and sorts them for the report.
func keepDiffering(cands []difference, alive []bool) []difference {
	var out []difference
	for _, d := range cands {
		vals := make([]*string, len(d.values))
		for i, v := range d.values {
			if alive[i] {
				vals[i] = v
			}
		}
		var live []*string
		for i, v := range vals {
			if alive[i] {
				live = append(live, v)
			}
		}
		var keep bool
		switch d.kind {
		case kindBrokerCluster, kindOrder:
			keep = differs(live, false)
		case kindQueue:
			keep = differsOver(vals, haveTopic(d.topic, cands, alive))
		default:
			keep = differs(live, true)
		}
		if keep {
			d.values = vals
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b difference) int {
		return cmp.Or(cmp.Compare(kindOrderRank[a.kind], kindOrderRank[b.kind]), strings.Compare(a.subject, b.subject))
	})
	return out
}

// haveTopic tells which live servers have a route for topic. A server still
// compared at the end was asked about every topic, so without a topic row
// (nobody asked lacked it) that is every live server; with one, the row's
// non-nil values say.
func haveTopic(topic string, cands []difference, alive []bool) []bool {
	has := slices.Clone(alive)
	for _, c := range cands {
		if c.kind == kindTopic && c.topic == topic {
			for i := range has {
				has[i] = has[i] && c.values[i] != nil
			}
			break
		}
	}
	return has
}

// JSON shapes of the report.
type diffJSON struct {
	Namesrvs    []string      `json:"namesrvs"`
	Compared    []string      `json:"compared"`
	Errors      []diffErrJSON `json:"errors"`
	Clusters    int           `json:"clusters"`
	Brokers     int           `json:"brokers"`
	Topics      int           `json:"topics"`
	Identical   bool          `json:"identical"`
	Differences []diffRowJSON `json:"differences"`
}

type diffErrJSON struct {
	Namesrv string `json:"namesrv"`
	Error   string `json:"error"`
}

type diffRowJSON struct {
	Kind       string             `json:"kind"`
	Subject    string             `json:"subject"`
	Cluster    string             `json:"cluster,omitempty"`
	BrokerName string             `json:"brokerName,omitempty"`
	BrokerID   *int64             `json:"brokerId,omitempty"`
	Topic      string             `json:"topic,omitempty"`
	Values     map[string]*string `json:"values"`
}

func (r *diffReport) write(w io.Writer, asJSON bool) error {
	var compared []string
	for i, a := range r.addrs {
		if r.alive[i] {
			compared = append(compared, a)
		}
	}
	if asJSON {
		doc := diffJSON{Namesrvs: r.addrs, Compared: compared, Errors: []diffErrJSON{}, Clusters: r.clusters,
			Brokers: r.brokers, Topics: r.topics, Differences: []diffRowJSON{}}
		if doc.Compared == nil {
			doc.Compared = []string{}
		}
		for i, err := range r.errs {
			if err != nil {
				doc.Errors = append(doc.Errors, diffErrJSON{r.addrs[i], describeFailure(err)})
			}
		}
		doc.Identical = len(r.diffs) == 0 && len(doc.Errors) == 0
		for _, d := range r.diffs {
			row := diffRowJSON{Kind: d.kind, Subject: d.subject, Cluster: d.cluster, BrokerName: d.broker,
				BrokerID: d.brokerID, Topic: d.topic, Values: make(map[string]*string, len(compared))}
			for i, a := range r.addrs {
				if r.alive[i] {
					row.Values[a] = d.values[i]
				}
			}
			doc.Differences = append(doc.Differences, row)
		}
		return writeJSONTo(w, doc)
	}

	// Built whole first so a write error is seen once, at the end.
	var buf bytes.Buffer
	if len(r.diffs) > 0 {
		tw := newTable(&buf)
		fmt.Fprint(tw, "#Kind\t#Subject")
		for _, a := range compared {
			fmt.Fprintf(tw, "\t#%s", name(a))
		}
		fmt.Fprintln(tw)
		for _, d := range r.diffs {
			fmt.Fprintf(tw, "%s\t%s", d.kind, d.tableSubject())
			for i := range r.addrs {
				if !r.alive[i] {
					continue
				}
				fmt.Fprintf(tw, "\t%s", d.tableValue(i))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(&buf)
	}
	verdict := "no differences"
	switch {
	case len(compared) < 2:
		verdict = "nothing compared"
	case len(r.diffs) == 1:
		verdict = "1 difference"
	case len(r.diffs) > 1:
		verdict = fmt.Sprintf("%d differences", len(r.diffs))
	}
	fmt.Fprintf(&buf, "Compared %d of %d NameServers (%s, %s, %s): %s.\n", len(compared), len(r.addrs),
		plural(r.clusters, "cluster", "clusters"), plural(r.brokers, "broker address", "broker addresses"),
		plural(r.topics, "topic", "topics"), verdict)
	for i, err := range r.errs {
		if err != nil {
			fmt.Fprintf(&buf, "Not compared: %s: %s\n", r.addrs[i], describeFailure(err))
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
