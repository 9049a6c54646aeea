// Scenario tests of the 5.x behaviours, each a short script over a fake
// clock following the reference's rules: acting master, zone filtering,
// static topics, split registration, min-broker-id changes, the
// unregistration fence, run-time switches, and topic lists at 100k topics.

package route

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// Acting master (3.4 step 6, 3.5 step 4): the master of an acting group
// leaves; its queues lose the write bit; with supportActingMaster the
// smallest slave is shown as id 0. The switch applies at run time, and a
// flip back serves the earlier body again, never a stale one.
func TestScenarioActingMaster(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg5("a", "m:1", 0, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg5("a", "s1:1", 1, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg5("a", "s2:1", 2, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:m:1,1:s1:1,2:s2:1}* | a:4/4/6")

	tb.Unregister("c", "m:1", "a", 0)
	checkRoute(t, tb, "T", "a{1:s1:1,2:s2:1}* | a:4/4/4")
	off := string(mustBody(t, tb, "T"))

	tb.SetSupportActingMaster(true)
	checkRoute(t, tb, "T", "a{0:s1:1,2:s2:1}* | a:4/4/4")
	on := string(mustBody(t, tb, "T"))
	if on == off || !strings.Contains(on, `"brokerAddrs":{"0":"s1:1","2":"s2:1"}`) {
		t.Fatalf("body after switching on: %s", on)
	}
	// The member-group topic of acting brokers is never rewritten.
	mustRegister(t, tb, reg5("a", "s1:1", 1, 2, true, tc("T", 4, 6), tc(syncBrokerMemberPrefix+"a", 1, 6)))
	checkRoute(t, tb, syncBrokerMemberPrefix+"a", "a{1:s1:1,2:s2:1}* | a:1/1/4")

	tb.SetSupportActingMaster(false)
	checkRoute(t, tb, "T", "a{1:s1:1,2:s2:1}* | a:4/4/4")

	// The prime slave's next registration keeps the queues read-only; the
	// master's return makes them writable again.
	tb.SetSupportActingMaster(true)
	mustRegister(t, tb, reg5("a", "s1:1", 1, 3, true, tc("T", 4, 6)))
	checkRoute(t, tb, "T", "a{0:s1:1,2:s2:1}* | a:4/4/4")
	mustRegister(t, tb, reg5("a", "m:1", 0, 4, true, tc("T", 4, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:m:1,1:s1:1,2:s2:1}* | a:4/4/6")

	// A group without enableActingMaster keeps its write bit when the
	// master leaves, and is never rewritten.
	mustRegister(t, tb, reg5("b", "n:1", 0, 1, false, tc("V", 4, 6), tc("W", 4, 6)))
	mustRegister(t, tb, reg5("b", "n2:1", 1, 1, false, tc("V", 4, 6), tc("W", 4, 6)))
	tb.Unregister("c", "n:1", "b", 0)
	checkRoute(t, tb, "V", "b{1:n2:1} | b:4/4/6")
}

func mustBody(t *testing.T, tb *Table, topic string) []byte {
	t.Helper()
	b, ok := tb.RouteBody(topic, body.Standard)
	if !ok {
		t.Fatalf("no route for %s", topic)
	}
	return b
}

// Zone mode (8.4): groups with a master in another zone go, with their
// queues and filter servers; master-less groups and same-zone groups stay
// (case-insensitive).
func TestScenarioZone(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	za := reg5("a", "m:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6))
	za.ZoneName = "Zone-1"
	za.Body.FilterServerList = []string{"fa:1"}
	mustRegister(t, tb, za)
	zb := reg5("b", "n:1", 0, 1, false, tc("T", 8, 6), tc("U", 4, 6))
	zb.ZoneName = "zone-2"
	zb.Body.FilterServerList = []string{"fb:1"}
	mustRegister(t, tb, zb)
	zc := reg5("c", "s:1", 1, 1, true, tc("T", 2, 6), tc("U", 4, 6)) // no master
	zc.ZoneName = "zone-2"
	mustRegister(t, tb, zc)

	f := func(zone, want string) {
		t.Helper()
		if got := routeString(tb.ZoneRoute("T", zone)); got != want {
			t.Fatalf("zone %s:\n got %s\nwant %s", zone, got, want)
		}
	}
	f("zone-1", "a{0:m:1}@Zone-1 c{1:s:1}*@zone-2 | a:4/4/6 c:2/2/4 | fs{m:1:[fa:1]}")
	f("ZONE-2", "b{0:n:1}@zone-2 c{1:s:1}*@zone-2 | b:8/8/6 c:2/2/4 | fs{n:1:[fb:1]}")
	f("nowhere", "c{1:s:1}*@zone-2 | c:2/2/4")
	if _, ok := tb.ZoneRoute("nope", "zone-1"); ok {
		t.Fatal("route for an unknown topic")
	}
	// The filter works on the acting-master-rewritten route, like Java's
	// hook on the answer: c now has an id 0 and is filtered by zone.
	tb.SetSupportActingMaster(true)
	f("zone-1", "a{0:m:1}@Zone-1 | a:4/4/6 | fs{m:1:[fa:1]}")
	// The table's own route is untouched.
	checkRoute(t, tb, "T", "a{0:m:1}@Zone-1 b{0:n:1}@zone-2 c{0:s:1}*@zone-2 | a:4/4/6 b:8/8/6 c:2/2/4 | fs{m:1:[fa:1],n:1:[fb:1]}")
}

// Static topics (3.3 step 10d): mappings come with a new DataVersion or a
// first registration, keyed by the mapping's bname, and are kept like
// Java's topicQueueMappingInfoTable, never cleaned.
func TestScenarioStaticTopic(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	info := func(bname string, epoch int) []byte {
		return []byte(fmt.Sprintf(`{"bname":%q,"currIdMap":{"0":0},"dirty":false,"epoch":%d,"scope":"__global__","topic":"S","totalQueues":8}`, bname, epoch))
	}
	ra := reg5("a", "m:1", 0, 1, false, tc("S", 4, 6), tc("U", 4, 6))
	ra.Body.MappingInfo = map[string][]byte{"S": info("a", 1)}
	mustRegister(t, tb, ra)
	rb := reg5("b", "n:1", 0, 1, false, tc("S", 4, 6), tc("U", 4, 6))
	rb.Body.MappingInfo = map[string][]byte{"S": info("b", 1)}
	mustRegister(t, tb, rb)
	mapping := func() string {
		t.Helper()
		r, ok := tb.Route("S")
		if !ok {
			return "none"
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(r.MappingByBroker)) {
			out = append(out, k+"="+string(r.MappingByBroker[k]))
		}
		return fmt.Sprint(out)
	}
	want := fmt.Sprint([]string{"a=" + string(info("a", 1)), "b=" + string(info("b", 1))})
	if got := mapping(); got != want {
		t.Fatalf("mapping %s", got)
	}
	// Same DataVersion: a changed mapping is not taken (Java's rule).
	ra.Body.MappingInfo = map[string][]byte{"S": info("a", 2)}
	mustRegister(t, tb, ra)
	if got := mapping(); got != want {
		t.Fatalf("mapping changed on the same DataVersion: %s", got)
	}
	ra.Body.DataVersion.Counter++
	mustRegister(t, tb, ra)
	want = fmt.Sprint([]string{"a=" + string(info("a", 2)), "b=" + string(info("b", 1))})
	if got := mapping(); got != want {
		t.Fatalf("mapping after a new DataVersion: %s", got)
	}
	// deleteTopicWithBrokerRegistration does not apply to a registration
	// that carries mappings.
	tb.SetDeleteTopicWithBrokerRegistration(true)
	ra.Body.Topics = ra.Body.Topics[:1]
	ra.Body.DataVersion.Counter++
	mustRegister(t, tb, ra)
	checkRoute(t, tb, "U", "a{0:m:1} b{0:n:1} | a:4/4/6 b:4/4/6")
	// The encoded body carries the mappings in both dialects.
	if b, _ := tb.RouteBody("S", body.Legacy); !strings.Contains(string(b), `"topicQueueMappingByBroker":{"a":{"bname":"a","currIdMap":{0:0}`) {
		t.Fatalf("legacy body %s", b)
	}
}

// Split registration (3.3, 8.3): every chunk carries the same DataVersion;
// the first chunk of a new version rewrites its topics, later chunks only
// add topics missing for the broker, so a perm change inside a later chunk
// waits for the next version. Combined with deleteTopicWithBrokerRegistration
// each chunk looks like the whole set and deletes the others' topics: the
// reference's caveat, reproduced.
func TestScenarioSplitRegistration(t *testing.T) {
	t.Parallel()
	chunk := func(counter int64, topics ...body.TopicConfig) *Registration {
		return reg5("a", "m:1", 0, counter, false, topics...)
	}
	tb, _ := newTable(Options{})
	mustRegister(t, tb, chunk(1, tc("T1", 4, 6), tc("T2", 4, 6)))
	mustRegister(t, tb, chunk(1, tc("T3", 4, 6), tc("T4", 4, 6)))
	if got := fmt.Sprint(tb.TopicList()); got != "[T1 T2 T3 T4]" {
		t.Fatalf("topics %s", got)
	}
	// Same version again, T3 now read-only in the second chunk: not applied.
	mustRegister(t, tb, chunk(1, tc("T1", 4, 6), tc("T2", 4, 6)))
	mustRegister(t, tb, chunk(1, tc("T3", 4, 4), tc("T4", 4, 6), tc("T5", 4, 6)))
	checkRoute(t, tb, "T3", "a{0:m:1} | a:4/4/6")
	checkRoute(t, tb, "T5", "a{0:m:1} | a:4/4/6")
	// A new version: the chunk holding T3 is now the first of its version.
	mustRegister(t, tb, chunk(2, tc("T3", 4, 4), tc("T4", 4, 6)))
	checkRoute(t, tb, "T3", "a{0:m:1} | a:4/4/4")

	tb.SetDeleteTopicWithBrokerRegistration(true)
	mustRegister(t, tb, chunk(2, tc("T1", 4, 6), tc("T2", 4, 6)))
	if got := fmt.Sprint(tb.TopicList()); got != "[T1 T2]" {
		t.Fatalf("with deleteTopicWithBrokerRegistration the second chunk deleted the first's topics: %s", got)
	}
}

// NOTIFY_MIN_BROKER_ID_CHANGE data (3.3 steps 4/14, 3.5 step 5, 3.8).
func TestScenarioMinBrokerIDChange(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	str := func(c *MinBrokerIDChange) string {
		if c == nil {
			return "none"
		}
		return fmt.Sprintf("%s min=%d@%s off=%q ha=%q to=%v", c.BrokerName, c.MinBrokerID, c.MinBrokerAddr, c.OfflineBrokerAddr, c.HABrokerAddr, c.Targets)
	}
	f := func(r *Registration, want string) {
		t.Helper()
		if got := str(mustRegister(t, tb, r).MinIDChange); got != want {
			t.Fatalf("register %s/%d: %s, want %s", r.BrokerName, r.BrokerID, got, want)
		}
	}
	f(reg5("a", "s2:1", 2, 1, true, tc("T", 4, 6), tc("U", 4, 6)), "none") // first member: min of an empty group is 0
	f(reg5("a", "s3:1", 3, 1, true), "none")
	f(reg5("a", "s1:1", 1, 1, true), `a min=1@s1:1 off="" ha="ha-s1:1" to=[s2:1 s3:1]`)
	f(reg5("a", "s1:1", 1, 1, true), "none")
	f(reg5("a", "m:1", 0, 1, true), `a min=0@m:1 off="" ha="ha-m:1" to=[s1:1 s2:1 s3:1]`)

	// The minimum leaves an acting group: everyone left is told.
	evs, _ := tb.Unregister("c", "m:1", "a", 0)
	if len(evs) != 1 || str(evs[0].MinIDChange) != `a min=1@s1:1 off="m:1" ha="" to=[s1:1 s2:1 s3:1]` {
		t.Fatalf("unregister min: %+v %s", evs, str(evs[0].MinIDChange))
	}
	// Not the minimum: nothing.
	if evs, _ := tb.Unregister("c", "s3:1", "a", 3); len(evs) != 1 || evs[0].MinIDChange != nil {
		t.Fatalf("unregister non-min: %+v", evs)
	}
	// Expiry of the minimum counts too.
	c := &clock{ms: 0}
	tb2 := New(Options{}, c.now)
	mustRegister(t, tb2, reg5("b", "n:1", 0, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	r := reg5("b", "n2:1", 1, 1, true)
	r.HeartbeatTimeoutMillis = 1_000_000
	mustRegister(t, tb2, r)
	c.ms = 200_000
	evs = tb2.ScanExpired()
	if len(evs) != 1 || str(evs[0].MinIDChange) != `b min=1@n2:1 off="n:1" ha="" to=[n2:1]` {
		t.Fatalf("expiry: %+v", evs)
	}
	// A group without enableActingMaster is not told on unregistration.
	mustRegister(t, tb2, reg5("d", "x:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb2, reg5("d", "y:1", 1, 1, false))
	if evs, _ := tb2.Unregister("c", "x:1", "d", 0); len(evs) != 1 || evs[0].MinIDChange != nil {
		t.Fatalf("non-acting group: %+v", evs)
	}
}

// The unregistration fence: an UNREGISTER_BROKER for an older registration
// of an address cannot remove the address's newer registration.
func TestScenarioUnregisterFence(t *testing.T) {
	t.Parallel()
	t.Run("slave became master, then the slave's delayed unregistration", func(t *testing.T) {
		tb, _ := newTable(Options{})
		mustRegister(t, tb, reg5("a", "m:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("a", "x:1", 1, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
		tb.Unregister("c", "m:1", "a", 0)
		mustRegister(t, tb, reg5("a", "x:1", 0, 2, false, tc("T", 4, 6), tc("U", 4, 6)))
		checkRoute(t, tb, "T", "a{0:x:1} | a:4/4/6")
		// Java removes by address: the group would lose its new master.
		if evs, fenced := tb.Unregister("c", "x:1", "a", 1); !fenced || evs != nil {
			t.Fatalf("not fenced: %+v", evs)
		}
		checkRoute(t, tb, "T", "a{0:x:1} | a:4/4/6")
		// The current generation's own unregistration applies.
		if evs, fenced := tb.Unregister("c", "x:1", "a", 0); fenced || len(evs) != 1 {
			t.Fatalf("current generation: %+v %v", evs, fenced)
		}
		checkRoute(t, tb, "T", "none")
	})
	t.Run("address moved to another group", func(t *testing.T) {
		tb, _ := newTable(Options{})
		mustRegister(t, tb, reg5("a", "x:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
		tb.Unregister("c", "x:1", "a", 0)
		mustRegister(t, tb, reg5("b", "x:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6)))
		if _, fenced := tb.Unregister("c", "x:1", "a", 0); !fenced {
			t.Fatal("unregistration of the old group not fenced")
		}
		checkRoute(t, tb, "T", "b{0:x:1} | b:4/4/6")
	})
	t.Run("the old group's unregistration arrives after the move", func(t *testing.T) {
		tb, clk := newTable(Options{})
		mustRegister(t, tb, reg5("a", "x:1", 0, 1, false, tc("T", 4, 6), tc("T2", 4, 6)))
		rb := reg5("b", "x:1", 0, 1, false, tc("U", 4, 6), tc("U2", 4, 6))
		rb.Body.FilterServerList = []string{"f1"}
		rb.Conn = 7
		mustRegister(t, tb, rb)
		checkRoute(t, tb, "T", "a{0:x:1} | a:4/4/6 | fs{x:1:[f1]}")
		checkBodies(t, tb, "T", "U")
		// Java removes x:1 from a by address. The live entry, the filter
		// servers and b's entry are the newer registration's and stay.
		evs, fenced := tb.Unregister("c", "x:1", "a", 0)
		want := []Eviction{{Cluster: "c", BrokerAddr: "x:1", BrokerName: "a", BrokerID: 0, Reason: ReasonUnregistered}}
		if !fenced || fmt.Sprint(evs) != fmt.Sprint(want) {
			t.Fatalf("evictions %+v fenced %v", evs, fenced)
		}
		checkRoute(t, tb, "T", "none")
		checkRoute(t, tb, "U", "b{0:x:1} | b:4/4/6 | fs{x:1:[f1]}")
		checkBodies(t, tb, "T", "U")
		if s := tb.Stats(); s != (Stats{Clusters: 1, BrokerGroups: 1, BrokerAddrs: 1, Topics: 2, Live: 1}) {
			t.Fatalf("stats %+v", s)
		}
		// The newer registration still expires, and then nothing is left.
		clk.ms += DefaultBrokerTimeout + 1
		if evs := tb.ScanExpired(); len(evs) != 1 || evs[0].BrokerName != "b" || evs[0].Conn != 7 {
			t.Fatalf("expiry %+v", evs)
		}
		if s := tb.Stats(); s != (Stats{}) {
			t.Fatalf("stats after expiry %+v", s)
		}
	})
	t.Run("the old group lives on without its master", func(t *testing.T) {
		tb, _ := newTable(Options{})
		mustRegister(t, tb, reg5("a", "x:1", 0, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
		mustRegister(t, tb, reg5("a", "s:1", 1, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
		mustRegister(t, tb, reg5("b", "x:1", 0, 1, false, tc("U", 4, 6), tc("U2", 4, 6)))
		checkBodies(t, tb, "T")
		// a is reduced as in Java: master-less with acting master on, its
		// queues lose the write bit, and its slaves learn the new minimum.
		evs, fenced := tb.Unregister("c", "x:1", "a", 0)
		if !fenced || len(evs) != 1 || evs[0].MinIDChange == nil || evs[0].MinIDChange.MinBrokerID != 1 {
			t.Fatalf("evictions %+v fenced %v", evs, fenced)
		}
		checkRoute(t, tb, "T", "a{1:s:1}* | a:4/4/4")
		checkRoute(t, tb, "U", "b{0:x:1} | b:4/4/6")
		checkBodies(t, tb, "T")
	})
	t.Run("a fenced request that removes nothing changes nothing", func(t *testing.T) {
		tb, _ := newTable(Options{})
		mustRegister(t, tb, reg5("a", "x:1", 1, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
		mustRegister(t, tb, reg5("a", "x:1", 2, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
		tb.AddWritePerm("a") // an admin re-enables writes on the prime slave's queues
		checkRoute(t, tb, "T", "a{2:x:1}* | a:4/4/6")
		// The id-1 registration of x:1 is gone already (one id per address
		// in a group); Java would remove x:1 and wipe the write bit.
		if evs, fenced := tb.Unregister("c", "x:1", "a", 1); !fenced || evs != nil {
			t.Fatalf("evictions %+v fenced %v", evs, fenced)
		}
		checkRoute(t, tb, "T", "a{2:x:1}* | a:4/4/6")
	})
	t.Run("re-registered in another cluster", func(t *testing.T) {
		tb, _ := newTable(Options{})
		old := reg5("a", "x:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6))
		mustRegister(t, tb, old)
		nr := reg5("b", "x:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6))
		nr.Cluster = "c2"
		mustRegister(t, tb, nr)
		// The old cluster's registration is its own live entry: its
		// unregistration applies, and only to its group.
		if evs, fenced := tb.Unregister("c", "x:1", "a", 0); fenced || len(evs) != 1 {
			t.Fatalf("old cluster: %+v %v", evs, fenced)
		}
		checkRoute(t, tb, "T", "b{0:x:1} | b:4/4/6")
	})
}

// WIPE/ADD_WRITE_PERM count every topic holding a queue of the broker,
// whether or not its perm changes, as Java does.
func TestWritePermCountsUnchangedTopics(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("R", 4, 4), tc("W", 4, 6), tc("X", 4, 7)))
	if n := tb.WipeWritePerm("a"); n != 3 {
		t.Fatalf("wiped %d", n)
	}
	if n := tb.WipeWritePerm("a"); n != 3 {
		t.Fatalf("wiped again %d", n)
	}
	checkRoute(t, tb, "X", "a{0:m:1} | a:4/4/5")
	if n := tb.AddWritePerm("a"); n != 3 {
		t.Fatalf("added %d", n)
	}
	checkRoute(t, tb, "X", "a{0:m:1} | a:4/4/6")
	checkRoute(t, tb, "R", "a{0:m:1} | a:4/4/6")
}

func TestSystemTopicListDedupes(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	if topics, addr := tb.SystemTopicList(); len(topics) != 0 || topics == nil || addr != "" {
		t.Fatalf("empty table: %v %q", topics, addr)
	}
	// A broker named like its cluster appears once.
	r := reg("c", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
	mustRegister(t, tb, r)
	mustRegister(t, tb, reg("b", "n:1", 1, 1, tc("T", 4, 6), tc("U", 4, 6)))
	topics, addr := tb.SystemTopicList()
	if fmt.Sprint(topics) != "[c b]" || addr != "n:1" {
		t.Fatalf("%v %q", topics, addr)
	}
}

// Many topics (20k, 100k under ROCKETNS_SOAK): the lists come from the
// shard snapshots, complete and sorted, with no lock held against
// registrations.
func TestTopicListsLarge(t *testing.T) {
	t.Parallel()
	n := 20_000
	if os.Getenv("ROCKETNS_SOAK") != "" {
		n = 100_000
	}
	tb, _ := newTable(Options{})
	names := make([]string, 0, n)
	var ta, tbb []body.TopicConfig
	for i := 0; i < n; i++ {
		name := "Topic-" + strconv.Itoa(i)
		names = append(names, name)
		cfg := tc(name, 4, 6)
		if i%10 == 0 {
			cfg.TopicSysFlag = FlagUnit
		}
		if i%2 == 0 {
			ta = append(ta, cfg)
		} else {
			tbb = append(tbb, cfg)
		}
	}
	mustRegister(t, tb, reg("a", "m:1", 0, 1, ta...))
	rb := reg("b", "n:1", 0, 1, tbb...)
	rb.Cluster = "c2"
	mustRegister(t, tb, rb)
	slices.Sort(names)

	all := tb.TopicList()
	if !slices.Equal(all, names) {
		t.Fatalf("TopicList: %d topics, first %v", len(all), all[:3])
	}
	c2 := tb.TopicsByCluster("c2")
	if len(c2) != n/2 || !slices.IsSorted(c2) {
		t.Fatalf("TopicsByCluster(c2): %d topics", len(c2))
	}
	for _, topic := range c2 {
		i, _ := strconv.Atoi(topic[len("Topic-"):])
		if i%2 != 1 {
			t.Fatalf("%s listed for c2", topic)
		}
	}
	unit := tb.UnitTopicList(UnitTopics)
	if len(unit) != n/10 {
		t.Fatalf("unit topics: %d", len(unit))
	}
	b := body.AppendTopicList(nil, all, "")
	topics, _, err := body.DecodeTopicList(b)
	if err != nil || len(topics) != n {
		t.Fatalf("encoded list: %d topics, %v", len(topics), err)
	}
}
