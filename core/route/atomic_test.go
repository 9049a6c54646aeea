// Every write is all-or-nothing: a writer only stages its changes until it
// commits them, so what it prepared changes no table (brokers, clusters,
// liveness, connections, filter servers, the topic index, mappings, topic
// entries, the broker view, the cached route bodies), a panic while it
// prepares leaves every table as it was, and a write it refuses changes
// nothing. Each test here fails when a writer changes a table before its
// commit, commits after a panic or commits what it staged before refusing.

package route

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// dumpState prints everything the table holds and everything readers are
// served (route bodies in both dialects and with an orderTopicConf, the
// cluster info), so two dumps are equal only if nothing anyone can see or
// the writers rely on changed. It also checks the expiry heap and the
// connection index against the live table, and the source counts against
// the topic entries, printing "broken: " lines where they disagree. Identities are left out: what
// must stay is the bytes served, which the dump reads through the readers.
func dumpState(t *testing.T, tb *Table) string {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var sb strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&sb, format+"\n", args...) }
	for _, n := range sortedKeys(tb.groups) {
		g := tb.groups[n]
		p("group %s: cluster=%q zone=%q acting=%v addrs=%v", n, g.cluster, g.zone, g.actingMaster, g.addrs)
	}
	for _, c := range sortedKeys(tb.clusters) {
		p("cluster %s: %v", c, sortedKeys(tb.clusters[c]))
	}
	liveKeys := mapKeys(tb.live)
	sort.Slice(liveKeys, func(i, j int) bool { return keyLess(liveKeys[i], liveKeys[j]) })
	for _, k := range liveKeys {
		li := tb.live[k]
		p("live %v: last=%d timeout=%d dv=%+v conn=%d ha=%q name=%q id=%d", k, li.lastUpdate, li.timeout, li.dv, li.conn, li.haAddr, li.name, li.id)
		if li.key != k {
			p("broken: live entry keyed %v holds key %v", k, li.key)
		}
		if li.idx < 0 || li.idx >= len(tb.expiry) || tb.expiry[li.idx] != li {
			p("broken: live entry %v is not at its heap position %d", k, li.idx)
		}
	}
	if len(tb.expiry) != len(tb.live) {
		p("broken: expiry heap holds %d entries for %d live", len(tb.expiry), len(tb.live))
	}
	for i := range tb.expiry {
		if parent := (i - 1) / 2; i > 0 && tb.expiry[i].deadline() < tb.expiry[parent].deadline() {
			p("broken: expiry heap order at %d", i)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(tb.conns)) {
		keys := mapKeys(tb.conns[c])
		sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
		p("conn %d: %v", c, keys)
	}
	filterKeys := mapKeys(tb.filters)
	sort.Slice(filterKeys, func(i, j int) bool { return keyLess(filterKeys[i], filterKeys[j]) })
	for _, k := range filterKeys {
		p("filters %v: %v", k, tb.filters[k])
	}
	for _, n := range sortedKeys(tb.brokerTopics) {
		p("index %s: %v", n, sortedKeys(tb.brokerTopics[n]))
	}
	for _, topic := range sortedKeys(tb.mappings) {
		m := tb.mappings[topic]
		for _, b := range sortedKeys(m) {
			p("mapping %s/%s: %s", topic, b, m[b])
		}
	}
	var topics []string
	tb.topics.Range(func(k string, _ *topicEntry) bool { topics = append(topics, k); return true })
	sort.Strings(topics)
	for _, topic := range topics {
		e, _ := tb.topics.Load(topic)
		p("topic %s: key=%q queues=%v mapping=%v source=%q", topic, e.topic, e.queues, e.mapping, e.source)
		for _, d := range []body.Dialect{body.Standard, body.Legacy} {
			b, ok := tb.RouteBody(topic, d)
			p("  body %d: %v %s", d, ok, b)
		}
		b, ok := tb.RouteBodyOrdered(topic, body.Legacy, "a:4")
		p("  ordered: %v %s", ok, b)
	}
	counted := map[string]int{}
	tb.topics.Range(func(_ string, e *topicEntry) bool {
		if e.source != "" {
			counted[e.source]++
		}
		return true
	})
	for _, src := range sortedKeys(tb.sourceTopics) {
		p("source %s: %d topics", src, tb.sourceTopics[src])
	}
	if !maps.Equal(counted, tb.sourceTopics) {
		p("broken: source counts %v disagree with the entries' %v", tb.sourceTopics, counted)
	}
	v := tb.view.Load()
	for _, n := range sortedKeys(v.groups) {
		p("view group %s: %+v %v", n, v.groups[n].data, v.groups[n].filters)
	}
	for _, c := range sortedKeys(v.clusters) {
		p("view cluster %s: %v", c, v.clusters[c])
	}
	p("cluster info %s", tb.AppendClusterInfo(nil))
	p("list generation %d", tb.listGen.Load())
	for _, l := range encodedLists(tb) {
		p("list %s: %d %s", l.name, l.got.Topics, l.got.Body)
		if !bytes.Equal(l.got.Body, l.want) {
			p("broken: list %s is not the table's: %s", l.name, l.want)
		}
	}
	// Last: the reads above filled every cache.
	p("cached bytes %d", tb.cachedBytes.Load())
	p("generation %d", tb.gen.Load())
	return sb.String()
}

func mapKeys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keyLess(a, b addrKey) bool {
	if a.cluster != b.cluster {
		return a.cluster < b.cluster
	}
	return a.addr < b.addr
}

type namedList struct {
	name string
	got  *EncodedList
	want []byte // encoded afresh
}

// encodedLists reads every topic list through its cache, beside a fresh
// encoding of it.
func encodedLists(tb *Table) []namedList {
	sys, addr := tb.SystemTopicList()
	out := []namedList{
		{"all", tb.TopicListBody(), body.AppendTopicList(nil, tb.TopicList(), "")},
		{"system", tb.SystemTopicListBody(), body.AppendTopicList(nil, sys, addr)},
	}
	for _, k := range []UnitKind{UnitTopics, HasUnitSubTopics, HasUnitSubUnunitTopics} {
		out = append(out, namedList{fmt.Sprint("unit ", k), tb.UnitTopicListBody(k), body.AppendTopicList(nil, tb.UnitTopicList(k), "")})
	}
	for _, c := range []string{"c", "c2", "c9"} {
		out = append(out, namedList{"cluster " + c, tb.TopicsByClusterBody(c), body.AppendTopicList(nil, tb.TopicsByCluster(c), "")})
	}
	return out
}

// warm fills every cache a reader can fill, so a write that drops or
// replaces one shows in the dump.
func warm(tb *Table) {
	encodedLists(tb)
	var topics []string
	tb.topics.Range(func(k string, _ *topicEntry) bool { topics = append(topics, k); return true })
	for _, topic := range topics {
		tb.RouteBody(topic, body.Standard)
		tb.RouteBody(topic, body.Legacy)
		tb.RouteBodyOrdered(topic, body.Legacy, "a:4")
	}
	tb.AppendClusterInfo(nil)
}

// injected is the value a test panics with inside a writer.
type injected struct{}

// writes are the table's writers: a case runs its write on the table, in
// full, or on staged, which only prepares it.
type writes interface {
	Register(*Registration) (RegisterResult, error)
	Unregister(cluster, addr, name string, id int64) ([]Eviction, bool)
	ScanExpired() []Eviction
	ConnClosed(ConnID) []Eviction
	WipeWritePerm(brokerName string) int
	AddWritePerm(brokerName string) int
	DeleteTopic(topic, cluster string)
	RegisterTopic(topic string, queues []body.QueueData)
	Heartbeat(cluster, addr string) bool
	QueryDataVersion(cluster, addr string, dv *body.DataVersion) (bool, body.DataVersion, bool)
}

// staged runs a writer's preparation under the writers' lock, as the
// table's method does, and drops what it staged instead of committing it.
type staged struct{ tb *Table }

func (s staged) prepare(fn func(w *write)) {
	s.tb.mu.Lock()
	defer s.tb.mu.Unlock()
	fn(&write{t: s.tb})
}

func (s staged) Register(r *Registration) (res RegisterResult, err error) {
	s.prepare(func(w *write) { res, err = w.register(r) })
	return res, err
}

func (s staged) Unregister(cluster, addr, name string, id int64) (evs []Eviction, fenced bool) {
	s.prepare(func(w *write) { evs, fenced, _ = w.unregisterAs(cluster, addr, name, id, "", true) })
	return evs, fenced
}

func (s staged) ScanExpired() (evs []Eviction) {
	s.prepare(func(w *write) { evs = w.scanExpired(s.tb.now()) })
	return evs
}

func (s staged) ConnClosed(c ConnID) (evs []Eviction) {
	s.prepare(func(w *write) { evs = w.connClosed(c) })
	return evs
}

func (s staged) WipeWritePerm(name string) (n int) {
	s.prepare(func(w *write) { n = w.setPerm(name, clearWrite) })
	return n
}

func (s staged) AddWritePerm(name string) (n int) {
	s.prepare(func(w *write) { n = w.setPerm(name, readWrite) })
	return n
}

func (s staged) DeleteTopic(topic, cluster string) {
	s.prepare(func(w *write) { w.deleteTopic(topic, cluster) })
}

func (s staged) RegisterTopic(topic string, queues []body.QueueData) {
	s.prepare(func(w *write) { w.registerTopic(topic, queues) })
}

// A heartbeat's whole preparation is reading the clock (Table.touch).
func (s staged) Heartbeat(cluster, addr string) bool {
	s.prepare(func(*write) { s.tb.now() })
	return s.tb.live[addrKey{cluster, addr}] != nil
}

func (s staged) QueryDataVersion(cluster, addr string, _ *body.DataVersion) (bool, body.DataVersion, bool) {
	return s.Heartbeat(cluster, addr), body.DataVersion{}, false
}

// atomicCase is a table in some state and one write on it.
type atomicCase struct {
	name  string
	opts  Options
	setup func(t *testing.T, tb *Table, clk *clock)
	op    func(tb writes, clk *clock)
}

// masterSlave is a master and a slave of group a (5.x, acting master on),
// a 4.x master of group b in another cluster, filter servers, a static
// topic mapping and a second connection: enough for every write to touch
// every table.
func masterSlave(t *testing.T, tb *Table, clk *clock) {
	t.Helper()
	m := reg5("a", "a0:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 2, 6))
	m.Conn, m.Source = 1, "h1"
	m.HeartbeatTimeoutMillis = 10000
	m.Body.FilterServerList = []string{"fa:1"}
	m.Body.MappingInfo = map[string][]byte{"S": []byte(`{"bname":"a","currIdMap":{"0":0},"epoch":1,"topic":"S","totalQueues":2}`)}
	mustRegister(t, tb, m)
	s := reg5("a", "a1:1", 1, 1, true, tc("T1", 4, 6), tc("T2", 8, 6))
	s.Conn = 1
	mustRegister(t, tb, s)
	b := reg("b", "b0:1", 0, 1, tc("T1", 2, 6), tc("T3", 2, 4))
	b.Cluster = "c2"
	b.Conn, b.Source = 2, "h2"
	b.Body.FilterServerList = []string{"fb:1", "fb:2"}
	mustRegister(t, tb, b)
	clk.ms += 5000
}

func atomicCases() []atomicCase {
	return []atomicCase{
		{name: "first registration", setup: func(*testing.T, *Table, *clock) {}, op: func(tb writes, _ *clock) {
			r := reg5("a", "a0:1", 0, 1, false, tc("T1", 4, 6), tc("T2", 4, 6))
			r.Body.FilterServerList = []string{"f:1"}
			r.Conn, r.Source = 3, "h3"
			tb.Register(r)
		}},
		{name: "new data version", setup: masterSlave, op: func(tb writes, _ *clock) {
			r := reg5("a", "a0:1", 0, 2, true, tc("T1", 8, 4), tc("T4", 1, 6))
			r.ZoneName = "z"
			r.Conn = 3
			r.Body.FilterServerList = []string{"fa:9"}
			r.Body.MappingInfo = map[string][]byte{"S": []byte(`{"bname":"a","currIdMap":{"0":1},"epoch":2,"topic":"S","totalQueues":2}`)}
			tb.Register(r)
		}},
		{name: "new data version, deleting topics", opts: Options{DeleteTopicWithBrokerRegistration: true}, setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.Register(reg5("a", "a0:1", 0, 2, true, tc("T1", 8, 4)))
		}},
		{name: "new group in a known cluster", setup: masterSlave, op: func(tb writes, _ *clock) {
			r := reg5("e", "e0:1", 0, 1, false, tc("T1", 2, 6), tc("T5", 1, 6))
			r.Source = "h1"
			tb.Register(r)
		}},
		{name: "unchanged re-registration", setup: masterSlave, op: func(tb writes, _ *clock) {
			r := reg5("a", "a0:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 2, 6))
			r.Conn = 4
			r.Body.FilterServerList = nil
			tb.Register(r)
		}},
		{name: "slave re-registration", setup: masterSlave, op: func(tb writes, _ *clock) {
			r := reg5("a", "a1:1", 1, 2, true, tc("T1", 4, 6))
			r.Conn = 5
			tb.Register(r)
		}},
		{name: "prime slave of an acting group", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			tb.Unregister("c", "a0:1", "a", 0)
		}, op: func(tb writes, _ *clock) {
			tb.Register(reg5("a", "a1:1", 1, 3, true, tc("T1", 4, 6), tc("T9", 4, 6)))
		}},
		{name: "slave becomes master at its address", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.Register(reg5("a", "a1:1", 0, 3, true, tc("T1", 4, 6)))
		}},
		{name: "id moves to another address", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.Register(reg5("a", "a9:1", 1, 1, true, tc("T1", 4, 6)))
		}},
		{name: "stale registration", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			r := reg5("a", "a1:1", 1, 1, true, tc("T1", 4, 6), tc("T2", 4, 6))
			r.Body.DataVersion.StateVersion = 5
			mustRegister(t, tb, r)
			mustRegister(t, tb, reg5("a", "a8:1", 2, 1, true, tc("T1", 4, 6), tc("T2", 4, 6)))
		}, op: func(tb writes, _ *clock) {
			tb.Register(reg5("a", "a8:1", 1, 1, true, tc("T1", 4, 6)))
		}},
		{name: "unregister the master", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.Unregister("c", "a0:1", "a", 0)
		}},
		{name: "unregister a whole group", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.Unregister("c2", "b0:1", "b", 0)
		}},
		{name: "fenced unregistration", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			// x:1 leaves group d for group a: the live entry is a's now.
			mustRegister(t, tb, reg("d", "x:1", 0, 1, tc("T1", 4, 6), tc("T5", 4, 6)))
			mustRegister(t, tb, reg5("a", "x:1", 2, 1, true, tc("T1", 4, 6), tc("T2", 4, 6)))
		}, op: func(tb writes, _ *clock) {
			tb.Unregister("c", "x:1", "d", 0)
		}},
		{name: "expiry", setup: masterSlave, op: func(tb writes, clk *clock) {
			clk.ms += 200000
			tb.ScanExpired()
		}},
		{name: "connection close", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.ConnClosed(1)
		}},
		{name: "wipe write permission", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.WipeWritePerm("a")
		}},
		{name: "add write permission", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.AddWritePerm("b")
		}},
		{name: "delete a topic everywhere", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.DeleteTopic("T1", "")
		}},
		{name: "delete a topic in one cluster", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.DeleteTopic("T1", "c")
		}},
		{name: "register a topic", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.RegisterTopic("T1", []body.QueueData{{BrokerName: "b", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}, {BrokerName: "a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 4}})
		}},
		{name: "register a new topic", setup: masterSlave, op: func(tb writes, _ *clock) {
			tb.RegisterTopic("T7", []body.QueueData{{BrokerName: "a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}, {BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}})
		}},
		{name: "heartbeat", setup: masterSlave, op: func(tb writes, clk *clock) {
			clk.ms += 1000
			tb.Heartbeat("c", "a0:1")
		}},
		{name: "query data version", setup: masterSlave, op: func(tb writes, clk *clock) {
			clk.ms += 1000
			tb.QueryDataVersion("c", "a1:1", nil)
		}},
	}
}

// prepared sets c's table up, fills every cache and returns the table, its
// clock and the dump.
func prepared(t *testing.T, c atomicCase) (*Table, *clock, string) {
	t.Helper()
	opts := c.opts
	opts.Shards = 4
	tb, clk := newTable(opts)
	c.setup(t, tb, clk)
	warm(tb)
	return tb, clk, dumpState(t, tb)
}

// For every write, what it prepares changes nothing that anyone can see
// or that the writers rely on, and no reader can fill a cache from it; the
// same write committed does change the tables (so a dump that misses a
// table, or a case that writes nothing, cannot pass) and leaves every
// cache as a fresh assembly gives it. Since preparing is where every
// decision and allocation of a write happens, and committing only stores
// what was prepared, a panic at any point of a write leaves the tables
// unchanged.
func TestPreparedWritesChangeNothing(t *testing.T) {
	t.Parallel()
	for _, c := range atomicCases() {
		t.Run(c.name, func(t *testing.T) {
			tb, clk, before := prepared(t, c)
			c.op(staged{tb}, clk)
			warm(tb) // a reader right after the preparation
			if after := dumpState(t, tb); after != before {
				t.Fatalf("preparing the write changed the tables:\n%s", lineDiff(before, after))
			}
			c.op(tb, clk)
			after := dumpState(t, tb)
			if after == before {
				t.Fatalf("the write changed nothing; the case tests nothing:\n%s", before)
			}
			if strings.Contains(after, "broken: ") {
				t.Fatalf("the committed write left the indexes out of step:\n%s", after)
			}
			checkBodies(t, tb, "T1", "T2", "T3", "T4", "T5", "T7", "T9", "S")
		})
	}
}

// A writer that panics part-way (here at the clock, which a registration
// reads after it has worked out its groups, filter servers, topic entries
// and broker view, and a scan or heartbeat before it changes anything) lets
// the panic reach the caller and leaves every table, and every cache a
// reader fills at that moment, as it was; the writers' lock is released,
// so the same write then goes through.
func TestPanicMidWriteChangesNothing(t *testing.T) {
	t.Parallel()
	trapped := 0
	for _, c := range atomicCases() {
		t.Run(c.name, func(t *testing.T) {
			tb, clk, before := prepared(t, c)
			reached := false
			clk.trap = func() {
				reached = true
				warm(tb)
				panic(injected{})
			}
			p := func() (p any) {
				defer func() { p = recover() }()
				c.op(tb, clk)
				return nil
			}()
			clk.trap = nil
			if !reached {
				// No clock: TestPreparedWritesChangeNothing covers it.
				if p != nil {
					t.Fatalf("recovered %v", p)
				}
				return
			}
			trapped++
			if _, ok := p.(injected); !ok {
				t.Fatalf("recovered %v, want the injected panic", p)
			}
			if after := dumpState(t, tb); after != before {
				t.Fatalf("the panic left the tables changed:\n%s", lineDiff(before, after))
			}
			c.op(tb, clk)
			checkBodies(t, tb, "T1", "T2", "T3", "T4", "T5", "T7", "T9", "S")
		})
	}
	if trapped < 10 {
		t.Fatalf("only %d writes read the clock; the test lost its registrations", trapped)
	}
}

// dumpState must print every table: a table it leaves out could change
// while a write prepares and no test would see it. A new field of Table
// belongs in the dump, then in this list.
func TestDumpCoversEveryTable(t *testing.T) {
	t.Parallel()
	dumped := []string{"topics", "view", "cachedBytes", "groups", "clusters", "live", "filters", "brokerTopics",
		"conns", "expiry", "mappings", "sourceTopics"}
	notState := []string{"opts", "now", "mu", "actingMaster", "deleteWithReg"} // no writer changes them
	dumped = append(dumped, "gen", "listGen", "lists")
	typ := reflect.TypeFor[Table]()
	for i := range typ.NumField() {
		if f := typ.Field(i).Name; !slices.Contains(dumped, f) && !slices.Contains(notState, f) {
			t.Errorf("Table.%s is not in dumpState", f)
		}
	}
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(a, "\n") {
		if !ib[l] {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ia[l] {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}

// Every refusal of a write changes nothing anyone can see: not the tables,
// not the caches, not the liveness of the broker it names. Each case is
// refused (the test checks the error), so a writer that refused after
// staging part of its write and committed it anyway would fail here.
func TestRefusedWritesChangeNothing(t *testing.T) {
	t.Parallel()
	owned := func(r *Registration, owner string) *Registration { r.Owner = owner; return r }
	cases := []struct {
		name string
		opts Options
		op   func(tb *Table) error
		want error
	}{
		{"negative broker id", Options{}, func(tb *Table) error {
			_, err := tb.Register(reg5("a", "a0:1", -1, 2, true, tc("T1", 1, 6), tc("T8", 1, 6)))
			return err
		}, ErrNegativeBrokerID},
		{"takeover of an address", Options{}, func(tb *Table) error {
			_, err := tb.Register(owned(reg5("a", "a0:1", 0, 2, true, tc("T1", 1, 4), tc("T8", 1, 6)), "kb"))
			return err
		}, ErrTakeover},
		{"takeover of an id at another address", Options{}, func(tb *Table) error {
			_, err := tb.Register(owned(reg5("a", "evil:1", 0, 2, true, tc("T1", 1, 4), tc("T8", 1, 6)), "kb"))
			return err
		}, ErrTakeover},
		{"unregistration with other credentials", Options{}, func(tb *Table) error {
			_, _, err := tb.UnregisterAs("c", "a0:1", "a", 0, "kb", false)
			return err
		}, ErrTakeover},
		// masterSlave holds T1, T2, T3 and S.
		{"too many topics for a new group", Options{MaxTopics: 5}, func(tb *Table) error {
			_, err := tb.Register(reg5("e", "e0:1", 0, 1, false, tc("T1", 1, 6), tc("T8", 1, 6), tc("T9", 1, 6)))
			return err
		}, ErrTooManyTopics},
		// h1 brought T1, T2 and S.
		{"past its source's quota", Options{MaxTopicsPerSource: 4}, func(tb *Table) error {
			r := reg5("e", "e0:1", 0, 1, false, tc("T1", 1, 6), tc("T8", 1, 6), tc("T9", 1, 6))
			r.Source = "h1"
			_, err := tb.Register(r)
			return err
		}, ErrTopicQuota},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Shards = 4
			tb, clk := newTable(opts)
			masterSlave(t, tb, clk)
			warm(tb)
			before := dumpState(t, tb)
			if err := c.op(tb); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			warm(tb)
			if after := dumpState(t, tb); after != before {
				t.Fatalf("the refused write changed the tables:\n%s", lineDiff(before, after))
			}
		})
	}
}

// An empty broker address is refused before anything changes (Java stores
// it, and rocketns used to fail half-way through: the brokerName stayed in
// its cluster with no group behind it).
func TestRegisterEmptyAddressIsRefused(t *testing.T) {
	t.Parallel()
	tb, clk := newTable(Options{})
	masterSlave(t, tb, clk)
	warm(tb)
	before := dumpState(t, tb)
	for _, name := range []string{"a", "new"} {
		r := reg5(name, "", 1, 1, false)
		_, err := tb.Register(r)
		if !errors.Is(err, ErrEmptyBrokerAddr) {
			t.Fatalf("register %s with an empty address: %v, want ErrEmptyBrokerAddr", name, err)
		}
		if after := dumpState(t, tb); after != before {
			t.Fatalf("refused registration changed the tables:\nbefore\n%s\nafter\n%s", before, after)
		}
	}
}

// The one-topic guard refuses before anything changes. Java refuses after
// steps 1 to 6 and leaves them applied: an empty group in brokerAddrTable
// and its name in clusterAddrTable.
func TestFirstSingleTopicRefusalChangesNothing(t *testing.T) {
	t.Parallel()
	tb, clk := newTable(Options{})
	masterSlave(t, tb, clk)
	warm(tb)
	before := dumpState(t, tb)
	for _, r := range []*Registration{reg5("new", "n0:1", 0, 1, false, tc("X", 1, 6)), reg5("a", "a2:1", 2, 1, true, tc("X", 1, 6))} {
		r.ZoneName = "z"
		r.Cluster = "c9"
		if _, err := tb.Register(r); !errors.Is(err, ErrFirstSingleTopic) {
			t.Fatalf("%s id %d: %v, want ErrFirstSingleTopic", r.BrokerName, r.BrokerID, err)
		}
		if after := dumpState(t, tb); after != before {
			t.Fatalf("refused registration changed the tables:\nbefore\n%s\nafter\n%s", before, after)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := mapKeys(m)
	sort.Strings(out)
	return out
}
