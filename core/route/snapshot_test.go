// Tests of Export and Restore: a restored table answers every query as the
// original did, byte for byte; its brokers expire on their own timeouts
// from the snapshot's time and registrations replace them.

package route

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// richTable registers masters and slaves of three clusters, 4.x and 5.x
// brokers, a zone, filter servers, unit flags, a static topic, a short
// heartbeat timeout, then deletes a topic, wipes a broker's write
// permission and loses a master, so that every part of the state differs
// from its defaults somewhere.
func richTable(t *testing.T) (*Table, *clock) {
	t.Helper()
	tb, c := newTable(Options{})
	info := func(bname string) []byte {
		return []byte(fmt.Sprintf(`{"bname":%q,"currIdMap":{"0":0},"dirty":false,"epoch":1,"scope":"__global__","topic":"S","totalQueues":8}`, bname))
	}
	unit := tc("UNIT", 2, 6)
	unit.TopicSysFlag = FlagUnit | FlagUnitSub
	ra := reg5("a", "m:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 4, 6), tc("D", 1, 6), unit)
	ra.Cluster, ra.ZoneName, ra.Owner = "c1", "z1", "ak-a"
	ra.Body.FilterServerList = []string{"f:1", "f:2"}
	ra.Body.MappingInfo = map[string][]byte{"S": info("a")}
	ra.Body.DataVersion = body.DataVersion{StateVersion: 3, Timestamp: 7, Counter: 9}
	mustRegister(t, tb, ra)
	sa := reg5("a", "s:1", 1, 1, true, tc("T1", 4, 6), tc("T2", 8, 6))
	sa.Cluster, sa.ZoneName, sa.Owner = "c1", "z1", "ak-a"
	sa.HeartbeatTimeoutMillis = 10000
	mustRegister(t, tb, sa)
	rb := reg("b", "n:1", 0, 1, tc("T1", 4, 6), tc("T3", 2, 6), tc("S", 4, 6), tc("D", 1, 6))
	rb.Cluster = "c2"
	rb.Body.MappingInfo = map[string][]byte{"S": info("b"), "D": []byte(`{"bname":"b","topic":"D"}`)}
	mustRegister(t, tb, rb)
	// A group whose master leaves: its slave acts as master.
	mustRegister(t, tb, func() *Registration {
		r := reg5("d", "p:1", 0, 1, true, tc("T4", 4, 6), tc("T1", 4, 6))
		r.Cluster = "c2"
		return r
	}())
	mustRegister(t, tb, func() *Registration {
		r := reg5("d", "q:1", 1, 1, true, tc("T4", 4, 6), tc("T1", 4, 6))
		r.Cluster = "c2"
		return r
	}())
	tb.Unregister("c2", "p:1", "d", 0)
	// A registration naming another cluster for an existing group: the
	// group keeps c1, c3 lists it all the same.
	ra3 := reg5("a", "m:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6), tc("S", 4, 6), tc("D", 1, 6), unit)
	ra3.Cluster, ra3.ZoneName, ra3.Owner = "c3", "z1", "ak-a"
	ra3.Body.DataVersion = ra.Body.DataVersion
	ra3.Body.FilterServerList = []string{"f:3"}
	mustRegister(t, tb, ra3)
	tb.DeleteTopic("D", "")
	tb.WipeWritePerm("b")
	c.ms += 1234
	return tb, c
}

// answers prints every answer a client or an admin tool can get from tb,
// under both acting-master settings.
func answers(tb *Table) []string {
	var out []string
	topics := append(tb.TopicList(), "D", "missing")
	for _, acting := range []bool{false, true} {
		tb.SetSupportActingMaster(acting)
		for _, topic := range topics {
			for _, d := range []body.Dialect{body.Legacy, body.Standard} {
				b, ok := tb.RouteBody(topic, d)
				out = append(out, fmt.Sprintf("route %v %s %d %v %s", acting, topic, d, ok, b))
				b, ok = tb.RouteBodyOrdered(topic, d, "a:4")
				out = append(out, fmt.Sprintf("ordered %v %s %d %v %s", acting, topic, d, ok, b))
			}
			r, ok := tb.ZoneRoute(topic, "z1")
			out = append(out, fmt.Sprintf("zone %v %s %s", acting, topic, routeString(r, ok)))
		}
		out = append(out, fmt.Sprintf("status %v %+v", acting, tb.BrokerStatus()))
	}
	tb.SetSupportActingMaster(false)
	out = append(out, "clusterinfo "+string(tb.AppendClusterInfo(nil)))
	out = append(out, fmt.Sprintf("topics %q", tb.TopicList()))
	for _, c := range []string{"c1", "c2", "c3", "nope"} {
		out = append(out, fmt.Sprintf("bycluster %s %q", c, tb.TopicsByCluster(c)))
	}
	for _, k := range []UnitKind{UnitTopics, HasUnitSubTopics, HasUnitSubUnunitTopics} {
		out = append(out, fmt.Sprintf("unit %d %q", k, tb.UnitTopicList(k)))
	}
	sys, addr := tb.SystemTopicList()
	out = append(out, fmt.Sprintf("system %q %s", sys, addr))
	for _, n := range []string{"a", "b", "d", "x"} {
		out = append(out, fmt.Sprintf("members %s %v", n, tb.BrokerMemberGroup(n)))
	}
	out = append(out, fmt.Sprintf("stats %+v", tb.Stats()))
	return out
}

func TestSnapshotRestoreAnswersAlike(t *testing.T) {
	tb, c := richTable(t)
	// Restored brokers are heard at TakenAt, which the original's last
	// registration precedes by 1234 ms: align the original for the status
	// rows' LastUpdate.
	snap, _ := tb.Export()
	if snap.TakenAt != c.ms {
		t.Fatalf("TakenAt %d, clock %d", snap.TakenAt, c.ms)
	}
	for _, li := range tb.live {
		li.lastUpdate = snap.TakenAt
	}
	want := answers(tb)

	fresh, fc := newTable(Options{})
	fc.ms = snap.TakenAt
	if err := fresh.Restore(snap); err != nil {
		t.Fatal(err)
	}
	got := answers(fresh)
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("restored answer differs:\n got %s\nwant %s", got[i], want[i])
		}
	}
	// The state's parts a query only shows indirectly: data versions
	// and credentials.
	for _, b := range snap.Brokers {
		_, dv, known := fresh.QueryDataVersion(b.Cluster, b.Addr, nil)
		if !known || dv != b.DataVersion {
			t.Errorf("%s/%s: data version %+v known %v, want %+v", b.Cluster, b.Addr, dv, known, b.DataVersion)
		}
	}
	// A second export of the restored table is the first one, with every
	// broker heard at TakenAt.
	for i := range snap.Brokers {
		snap.Brokers[i].LastUpdate = snap.TakenAt
	}
	again, _ := fresh.Export()
	if a, b := fmt.Sprintf("%+v", again), fmt.Sprintf("%+v", snap); a != b {
		t.Fatalf("export after restore differs:\n%s\n%s", a, b)
	}
}

func TestSnapshotRestoredBrokersExpireOnTheirTimeout(t *testing.T) {
	tb, _ := richTable(t)
	snap, _ := tb.Export()
	fresh, c := newTable(Options{})
	c.ms = snap.TakenAt + 5000 // the restart took 5 s
	if err := fresh.Restore(snap); err != nil {
		t.Fatal(err)
	}
	expired := func(at int64) []string {
		t.Helper()
		c.ms = at
		var out []string
		for _, ev := range fresh.ScanExpired() {
			out = append(out, fmt.Sprintf("%s/%s/%s", ev.Cluster, ev.BrokerName, ev.BrokerAddr))
		}
		slices.Sort(out)
		return out
	}
	// s:1 registered with a 10 s timeout, the others with the default.
	if got := expired(snap.TakenAt + 10000); got != nil {
		t.Fatalf("expired at its deadline: %v", got)
	}
	if got := fmt.Sprint(expired(snap.TakenAt + 10001)); got != "[c1/a/s:1]" {
		t.Fatalf("expired after 10 s: %s", got)
	}
	if got := expired(snap.TakenAt + DefaultBrokerTimeout); got != nil {
		t.Fatalf("expired at the default deadline: %v", got)
	}
	if got := fmt.Sprint(expired(snap.TakenAt + DefaultBrokerTimeout + 1)); got != "[c1/a/m:1 c2/b/n:1 c2/d/q:1 c3/a/m:1]" {
		t.Fatalf("expired after the default timeout: %s", got)
	}
	if _, ok := fresh.RouteBody("T1", body.Standard); ok {
		t.Fatal("T1 still routed once every broker expired")
	}
	if s := fresh.Stats(); s.Live != 0 || s.BrokerGroups != 0 || s.Topics != 0 {
		t.Fatalf("left after expiry: %+v", s)
	}
}

// RestoreAged keeps each broker's age at the snapshot's source: one last
// heard long before TakenAt expires that much sooner, whatever the two
// clocks read.
func TestSnapshotRestoreAgedKeepsEachBrokersAge(t *testing.T) {
	tb, c := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T1", 4, 6), tc("T3", 4, 6)))
	c.ms += 100_000 // a stopped reporting 100 s ago
	mustRegister(t, tb, reg("b", "n:1", 0, 1, tc("T2", 4, 6), tc("T3", 4, 6)))
	c.ms += 1000
	snap, _ := tb.Export()

	fresh, fc := newTable(Options{})
	fc.ms = snap.TakenAt + 3_600_000 // this server's clock is an hour ahead of the source's
	if err := fresh.RestoreAged(snap); err != nil {
		t.Fatal(err)
	}
	start := fc.ms
	expired := func(at int64) string {
		t.Helper()
		fc.ms = at
		var out []string
		for _, ev := range fresh.ScanExpired() {
			out = append(out, ev.BrokerName)
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	}
	// a: 101 s old at the copy, 19 s left; b: 1 s old, 119 s left.
	if got := expired(start + 19_000); got != "[]" {
		t.Fatalf("expired at a's deadline: %s", got)
	}
	if got := expired(start + 19_001); got != "[a]" {
		t.Fatalf("after a's deadline: %s", got)
	}
	if got := expired(start + 119_000); got != "[]" {
		t.Fatalf("expired at b's deadline: %s", got)
	}
	if got := expired(start + 119_001); got != "[b]" {
		t.Fatalf("after b's deadline: %s", got)
	}

	// A LastUpdate after TakenAt (the source's clock stepped back) counts
	// as heard at the copy, never in the future.
	snap.Brokers[1].LastUpdate = snap.TakenAt + 50_000
	again, ac := newTable(Options{})
	if err := again.RestoreAged(snap); err != nil {
		t.Fatal(err)
	}
	ac.ms += DefaultBrokerTimeout + 1
	if n := len(again.ScanExpired()); n != 2 {
		t.Fatalf("%d brokers expired a timeout after the copy, want both", n)
	}
}

func TestSnapshotRegistrationReplacesRestoredBroker(t *testing.T) {
	tb, _ := richTable(t)
	snap, _ := tb.Export()
	fresh, c := newTable(Options{})
	c.ms = snap.TakenAt + 60000
	if err := fresh.Restore(snap); err != nil {
		t.Fatal(err)
	}
	// b comes back with the same credentials ("", as before), another
	// data version and one topic less; the old entry is replaced.
	rb := reg("b", "n:1", 0, 2, tc("T1", 4, 6), tc("S", 4, 6))
	rb.Cluster, rb.Conn = "c2", 7
	fresh.SetDeleteTopicWithBrokerRegistration(true)
	if _, err := fresh.Register(rb); err != nil {
		t.Fatal(err)
	}
	checkRoute(t, fresh, "T3", "none")
	// a comes back with its credentials: not a takeover.
	ra := reg5("a", "m:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6))
	ra.Cluster, ra.Owner = "c1", "ak-a"
	if _, err := fresh.Register(ra); err != nil {
		t.Fatalf("a restored broker registering again with its credentials: %v", err)
	}
	other := reg5("a", "m:1", 0, 1, true, tc("T1", 4, 6), tc("T2", 8, 6))
	other.Cluster, other.Owner = "c1", "ak-other"
	if _, err := fresh.Register(other); !errors.Is(err, ErrTakeover) {
		t.Fatalf("another account taking a restored broker over: %v", err)
	}
	// Past the snapshot's deadlines only the re-registered brokers live;
	// b's is tied to its new connection.
	c.ms = snap.TakenAt + DefaultBrokerTimeout + 1
	fresh.ScanExpired()
	var live []string
	for _, s := range fresh.BrokerStatus() {
		live = append(live, fmt.Sprintf("%s/%d/%s/%v", s.BrokerName, s.ID, s.Addr, s.Live))
	}
	if got := fmt.Sprint(live); got != "[a/0/m:1/true b/0/n:1/true]" {
		t.Fatalf("after the restored deadlines: %s", got)
	}
	if evs := fresh.ConnClosed(7); len(evs) != 1 || evs[0].BrokerAddr != "n:1" {
		t.Fatalf("closing b's new connection: %+v", evs)
	}
}

func TestSnapshotGeneration(t *testing.T) {
	tb, c := newTable(Options{})
	g0 := tb.Generation()
	mustRegister(t, tb, reg("a", "a:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	g1 := tb.Generation()
	if g1 == g0 {
		t.Fatal("a registration left the generation")
	}
	tb.Heartbeat("c", "a:1")
	tb.ScanExpired()
	tb.DeleteTopic("none", "")
	if g := tb.Generation(); g != g1 {
		t.Fatalf("a heartbeat, an empty scan or a no-op delete moved the generation %d -> %d", g1, g)
	}
	_, gen := tb.Export()
	if gen != g1 {
		t.Fatalf("export reflects generation %d, want %d", gen, g1)
	}
	// A registration that changes nothing but liveness still counts: a
	// snapshot writer refreshes its file's time from it.
	mustRegister(t, tb, reg("a", "a:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	if tb.Generation() == g1 {
		t.Fatal("a repeated registration left the generation")
	}
	c.ms += DefaultBrokerTimeout + 1
	g2 := tb.Generation()
	tb.ScanExpired()
	if tb.Generation() == g2 {
		t.Fatal("an expiry left the generation")
	}
}

func TestSnapshotRestoreRefuses(t *testing.T) {
	tb, _ := richTable(t)
	good, _ := tb.Export()
	if err := tb.Restore(good); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a full table: %v", err)
	}
	f := func(name string, spoil func(s *Snapshot)) {
		t.Helper()
		s, _ := tb.Export()
		// Deep enough copies of what spoil changes.
		s.Groups = slices.Clone(s.Groups)
		s.Topics = slices.Clone(s.Topics)
		for i := range s.Groups {
			s.Groups[i].Addrs = slices.Clone(s.Groups[i].Addrs)
		}
		for i := range s.Topics {
			s.Topics[i].Queues = slices.Clone(s.Topics[i].Queues)
		}
		spoil(s)
		fresh, _ := newTable(Options{})
		if err := fresh.Restore(s); err == nil {
			t.Errorf("%s: restored", name)
		}
		if st := fresh.Stats(); st != (Stats{}) {
			t.Errorf("%s: refused restore left %+v", name, st)
		}
	}
	f("group without address", func(s *Snapshot) { s.Groups[0].Addrs = nil })
	f("repeated group", func(s *Snapshot) { s.Groups = append(s.Groups, s.Groups[0]) })
	f("unsorted ids", func(s *Snapshot) { slices.Reverse(s.Groups[0].Addrs) })
	f("negative id", func(s *Snapshot) { s.Groups[1].Addrs[0].ID = -1 })
	f("queue of unknown group", func(s *Snapshot) { s.Topics[0].Queues[0].BrokerName = "zz" })
	f("topic without queues", func(s *Snapshot) { s.Topics[0].Queues = nil })
	f("unsorted topics", func(s *Snapshot) { slices.Reverse(s.Topics) })
	f("repeated live entry", func(s *Snapshot) { s.Brokers = append(s.Brokers, s.Brokers[0]) })
	f("empty filter list", func(s *Snapshot) { s.Filters[0].Servers = nil })
}

// The snapshot keeps the bodies' bytes identical: the mappings are shared
// maps, not re-encoded.
func TestSnapshotKeepsMappingBytes(t *testing.T) {
	tb, _ := richTable(t)
	snap, _ := tb.Export()
	fresh, _ := newTable(Options{})
	if err := fresh.Restore(snap); err != nil {
		t.Fatal(err)
	}
	a, _ := tb.RouteBody("S", body.Legacy)
	b, _ := fresh.RouteBody("S", body.Legacy)
	if !bytes.Contains(b, []byte(`"topicQueueMappingByBroker"`)) || !bytes.Equal(a, b) {
		t.Fatalf("static topic body:\n%s\n%s", a, b)
	}
	// The deleted static topic keeps its mappings for its re-creation.
	if len(snap.Mappings) != 2 || snap.Mappings[0].Topic != "D" {
		t.Fatalf("mappings %+v", snap.Mappings)
	}
	rb := reg("b", "n:1", 0, 2, tc("D", 1, 6), tc("T1", 4, 6))
	rb.Cluster = "c2"
	mustRegister(t, fresh, rb)
	if b, _ := fresh.RouteBody("D", body.Legacy); !bytes.Contains(b, []byte(`"topicQueueMappingByBroker":{"b":{"bname":"b","topic":"D"}}`)) {
		t.Fatalf("re-created static topic %s", b)
	}
}
