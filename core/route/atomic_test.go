// Every write is all-or-nothing: a panic injected between any two of its
// steps leaves every table (brokers, clusters, liveness, connections,
// filter servers, the topic index, mappings, topic entries, the broker view
// and the cached route bodies) exactly as it was.

package route

import (
	"errors"
	"fmt"
	"maps"
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
// connection index against the live table. Identities are left out: a
// rollback republishes the entries it restores with empty caches (a reader
// may have filled them from the abandoned broker view), so what must come
// back is the bytes served, which the dump reads through the readers.
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
			p("  live entry keyed %v holds key %v", k, li.key)
		}
		if li.idx < 0 || li.idx >= len(tb.expiry) || tb.expiry[li.idx] != li {
			p("  live entry %v is not at its heap position %d", k, li.idx)
		}
	}
	if len(tb.expiry) != len(tb.live) {
		p("expiry heap holds %d entries for %d live", len(tb.expiry), len(tb.live))
	}
	for i := range tb.expiry {
		if parent := (i - 1) / 2; i > 0 && tb.expiry[i].deadline() < tb.expiry[parent].deadline() {
			p("expiry heap order broken at %d", i)
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
		p("topic %s: key=%q queues=%v mapping=%v", topic, e.topic, e.queues, e.mapping)
		for _, d := range []body.Dialect{body.Standard, body.Legacy} {
			b, ok := tb.RouteBody(topic, d)
			p("  body %d: %v %s", d, ok, b)
		}
		b, ok := tb.RouteBodyOrdered(topic, body.Legacy, "a:4")
		p("  ordered: %v %s", ok, b)
	}
	v := tb.view.Load()
	for _, n := range sortedKeys(v.groups) {
		p("view group %s: %+v %v", n, v.groups[n].data, v.groups[n].filters)
	}
	for _, c := range sortedKeys(v.clusters) {
		p("view cluster %s: %v", c, v.clusters[c])
	}
	p("cluster info %s", tb.AppendClusterInfo(nil))
	// Last: the reads above refilled what a rollback emptied.
	p("cached bytes %d", tb.cachedBytes.Load())
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

// warm fills every cache a reader can fill, so a write that drops or
// replaces one shows in the dump.
func warm(tb *Table) {
	var topics []string
	tb.topics.Range(func(k string, _ *topicEntry) bool { topics = append(topics, k); return true })
	for _, topic := range topics {
		tb.RouteBody(topic, body.Standard)
		tb.RouteBody(topic, body.Legacy)
		tb.RouteBodyOrdered(topic, body.Legacy, "a:4")
	}
	tb.AppendClusterInfo(nil)
}

// injected is the value the test hook panics with.
type injected struct{ step string }

// atomicCase is a table in some state and one write on it.
type atomicCase struct {
	name  string
	opts  Options
	setup func(t *testing.T, tb *Table, clk *clock)
	op    func(tb *Table, clk *clock)
}

// masterSlave is a master and a slave of group a (5.x, acting master on),
// a 4.x master of group b in another cluster, filter servers, a static
// topic mapping and a second connection: enough for every write to touch
// every table.
func masterSlave(t *testing.T, tb *Table, clk *clock) {
	t.Helper()
	m := reg5("a", "a0:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 2, 6))
	m.Conn = 1
	m.HeartbeatTimeoutMillis = 10000
	m.Body.FilterServerList = []string{"fa:1"}
	m.Body.MappingInfo = map[string][]byte{"S": []byte(`{"bname":"a","currIdMap":{"0":0},"epoch":1,"topic":"S","totalQueues":2}`)}
	mustRegister(t, tb, m)
	s := reg5("a", "a1:1", 1, 1, true, tc("T1", 4, 6), tc("T2", 8, 6))
	s.Conn = 1
	mustRegister(t, tb, s)
	b := reg("b", "b0:1", 0, 1, tc("T1", 2, 6), tc("T3", 2, 4))
	b.Cluster = "c2"
	b.Conn = 2
	b.Body.FilterServerList = []string{"fb:1", "fb:2"}
	mustRegister(t, tb, b)
	clk.ms += 5000
}

func atomicCases() []atomicCase {
	return []atomicCase{
		{name: "first registration", setup: func(*testing.T, *Table, *clock) {}, op: func(tb *Table, _ *clock) {
			r := reg5("a", "a0:1", 0, 1, false, tc("T1", 4, 6), tc("T2", 4, 6))
			r.Body.FilterServerList = []string{"f:1"}
			r.Conn = 3
			tb.Register(r)
		}},
		{name: "new data version", setup: masterSlave, op: func(tb *Table, _ *clock) {
			r := reg5("a", "a0:1", 0, 2, true, tc("T1", 8, 4), tc("T4", 1, 6))
			r.ZoneName = "z"
			r.Conn = 3
			r.Body.FilterServerList = []string{"fa:9"}
			r.Body.MappingInfo = map[string][]byte{"S": []byte(`{"bname":"a","currIdMap":{"0":1},"epoch":2,"topic":"S","totalQueues":2}`)}
			tb.Register(r)
		}},
		{name: "new data version, deleting topics", opts: Options{DeleteTopicWithBrokerRegistration: true}, setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.Register(reg5("a", "a0:1", 0, 2, true, tc("T1", 8, 4)))
		}},
		{name: "unchanged re-registration", setup: masterSlave, op: func(tb *Table, _ *clock) {
			r := reg5("a", "a0:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 2, 6))
			r.Conn = 4
			r.Body.FilterServerList = nil
			tb.Register(r)
		}},
		{name: "slave re-registration", setup: masterSlave, op: func(tb *Table, _ *clock) {
			r := reg5("a", "a1:1", 1, 2, true, tc("T1", 4, 6))
			r.Conn = 5
			tb.Register(r)
		}},
		{name: "prime slave of an acting group", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			tb.Unregister("c", "a0:1", "a", 0)
		}, op: func(tb *Table, _ *clock) {
			tb.Register(reg5("a", "a1:1", 1, 3, true, tc("T1", 4, 6), tc("T9", 4, 6)))
		}},
		{name: "slave becomes master at its address", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.Register(reg5("a", "a1:1", 0, 3, true, tc("T1", 4, 6)))
		}},
		{name: "id moves to another address", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.Register(reg5("a", "a9:1", 1, 1, true, tc("T1", 4, 6)))
		}},
		{name: "stale registration", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			r := reg5("a", "a1:1", 1, 1, true, tc("T1", 4, 6), tc("T2", 4, 6))
			r.Body.DataVersion.StateVersion = 5
			mustRegister(t, tb, r)
			mustRegister(t, tb, reg5("a", "a8:1", 2, 1, true, tc("T1", 4, 6), tc("T2", 4, 6)))
		}, op: func(tb *Table, _ *clock) {
			tb.Register(reg5("a", "a8:1", 1, 1, true, tc("T1", 4, 6)))
		}},
		{name: "unregister the master", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.Unregister("c", "a0:1", "a", 0)
		}},
		{name: "unregister a whole group", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.Unregister("c2", "b0:1", "b", 0)
		}},
		{name: "fenced unregistration", setup: func(t *testing.T, tb *Table, clk *clock) {
			masterSlave(t, tb, clk)
			// x:1 leaves group d for group a: the live entry is a's now.
			mustRegister(t, tb, reg("d", "x:1", 0, 1, tc("T1", 4, 6), tc("T5", 4, 6)))
			mustRegister(t, tb, reg5("a", "x:1", 2, 1, true, tc("T1", 4, 6), tc("T2", 4, 6)))
		}, op: func(tb *Table, _ *clock) {
			tb.Unregister("c", "x:1", "d", 0)
		}},
		{name: "expiry", setup: masterSlave, op: func(tb *Table, clk *clock) {
			clk.ms += 200000
			tb.ScanExpired()
		}},
		{name: "connection close", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.ConnClosed(1)
		}},
		{name: "wipe write permission", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.WipeWritePerm("a")
		}},
		{name: "add write permission", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.AddWritePerm("b")
		}},
		{name: "delete a topic everywhere", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.DeleteTopic("T1", "")
		}},
		{name: "delete a topic in one cluster", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.DeleteTopic("T1", "c")
		}},
		{name: "register a topic", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.RegisterTopic("T1", []body.QueueData{{BrokerName: "b", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}, {BrokerName: "a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 4}})
		}},
		{name: "register a new topic", setup: masterSlave, op: func(tb *Table, _ *clock) {
			tb.RegisterTopic("T7", []body.QueueData{{BrokerName: "a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}, {BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}})
		}},
		{name: "heartbeat", setup: masterSlave, op: func(tb *Table, clk *clock) {
			clk.ms += 1000
			tb.Heartbeat("c", "a0:1")
		}},
		{name: "query data version", setup: masterSlave, op: func(tb *Table, clk *clock) {
			clk.ms += 1000
			tb.QueryDataVersion("c", "a1:1", nil)
		}},
	}
}

// For every write and every step of it, a panic at that step leaves the
// dump unchanged, and the panic reaches the caller. The write run to its
// end must change the dump, so a write without steps or a dump that misses
// a table cannot pass.
func TestWritesAreAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, c := range atomicCases() {
		t.Run(c.name, func(t *testing.T) {
			build := func(panicAt int) (*Table, *clock, *int, *bool) {
				steps, armed := new(int), new(bool)
				opts := c.opts
				opts.Shards = 4
				opts.Hook = func(step string) {
					if !*armed {
						return
					}
					*steps++
					if *steps == panicAt {
						panic(injected{step})
					}
				}
				tb, clk := newTable(opts)
				c.setup(t, tb, clk)
				warm(tb)
				return tb, clk, steps, armed
			}
			tb, clk, steps, armed := build(0)
			before := dumpState(t, tb)
			*armed = true
			c.op(tb, clk)
			if after := dumpState(t, tb); after == before {
				t.Fatalf("the write changed nothing; the case tests nothing:\n%s", before)
			}
			n := *steps
			if n == 0 {
				t.Fatal("the write has no steps")
			}
			for k := 1; k <= n; k++ {
				tb, clk, _, armed := build(k)
				before := dumpState(t, tb)
				*armed = true
				step := func() (p any) {
					defer func() { p = recover() }()
					c.op(tb, clk)
					return nil
				}()
				in, ok := step.(injected)
				if !ok {
					t.Fatalf("step %d of %d: recovered %v, want the injected panic", k, n, step)
				}
				if after := dumpState(t, tb); after != before {
					t.Fatalf("panic at step %d of %d (%s) left the tables changed:\nbefore\n%s\nafter\n%s", k, n, in.step, before, after)
				}
				// Still usable: the same write now goes through.
				*armed = false
				c.op(tb, clk)
				checkBodies(t, tb, "T1", "T2", "T3", "T4", "T5", "T7", "T9", "S")
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
