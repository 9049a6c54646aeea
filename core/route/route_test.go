// Scenario tests of registration, route assembly and cache invalidation,
// driven by a fake clock.

package route

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/rocketns/rocketns/codec/body"
)

func TestRegisterMaster(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	res := mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 8, 7)))
	if !res.BrokerChanged || res.TopicsChanged != 2 || res.MasterAddr != "" {
		t.Fatalf("result %+v", res)
	}
	checkRoute(t, tb, "T1", "a{0:10.0.0.1:10911} | a:4/4/6")
	checkRoute(t, tb, "T2", "a{0:10.0.0.1:10911} | a:8/8/7")
	checkRoute(t, tb, "nope", "none")
	if _, ok := tb.RouteBody("nope", body.Legacy); ok {
		t.Fatalf("body for unknown topic")
	}
	want := `{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"a","cluster":"c","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	if b, _ := tb.RouteBody("T1", body.Legacy); string(b) != want {
		t.Fatalf("legacy body\n got %s\nwant %s", b, want)
	}
	if b, _ := tb.RouteBody("T1", body.Standard); !strings.Contains(string(b), `{"0":"10.0.0.1:10911"}`) {
		t.Fatalf("standard body %s", b)
	}
	if s := tb.Stats(); s != (Stats{Clusters: 1, BrokerGroups: 1, BrokerAddrs: 1, Topics: 2, Live: 1}) {
		t.Fatalf("stats %+v", s)
	}
	if got := fmt.Sprint(sorted(tb.TopicList())); got != "[T1 T2]" {
		t.Fatalf("topic list %s", got)
	}
}

func TestReregistration(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "x:1", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	p1, p2 := bodyPtr(t, tb, "T1"), bodyPtr(t, tb, "T2")
	e1 := entryOf(tb, "T1")

	// Same DataVersion: perm and queue changes are ignored, nothing is
	// republished or re-encoded.
	res := mustRegister(t, tb, reg("a", "x:1", 0, 1, tc("T1", 16, 2), tc("T2", 4, 6)))
	if res.BrokerChanged || res.TopicsChanged != 0 {
		t.Fatalf("unchanged re-registration: %+v", res)
	}
	checkRoute(t, tb, "T1", "a{0:x:1} | a:4/4/6")
	if entryOf(tb, "T1") != e1 || bodyPtr(t, tb, "T1") != p1 {
		t.Fatalf("unchanged re-registration re-encoded T1")
	}

	// Same DataVersion with a new topic: only the missing topic is added.
	res = mustRegister(t, tb, reg("a", "x:1", 0, 1, tc("T1", 16, 2), tc("T2", 4, 6), tc("T3", 2, 6)))
	if res.TopicsChanged != 1 {
		t.Fatalf("new topic on same version: %+v", res)
	}
	checkRoute(t, tb, "T1", "a{0:x:1} | a:4/4/6")
	checkRoute(t, tb, "T3", "a{0:x:1} | a:2/2/6")

	// New DataVersion: changes apply; an unchanged topic keeps its body.
	res = mustRegister(t, tb, reg("a", "x:1", 0, 2, tc("T1", 16, 2), tc("T2", 4, 6), tc("T3", 2, 6)))
	if res.TopicsChanged != 1 {
		t.Fatalf("new version: %+v", res)
	}
	checkRoute(t, tb, "T1", "a{0:x:1} | a:16/16/2")
	if bodyPtr(t, tb, "T1") == p1 {
		t.Fatalf("T1 body not re-encoded after its change")
	}
	if bodyPtr(t, tb, "T2") != p2 {
		t.Fatalf("T2 re-encoded though nothing about it changed")
	}
}

func TestSlave4x(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg("b", "n:1", 0, 1, tc("V", 4, 6), tc("W", 4, 6)))
	pa, pb := bodyPtr(t, tb, "T"), bodyPtr(t, tb, "V")

	s := reg("a", "s:1", 1, 7, tc("T", 1, 2), tc("Z", 1, 6))
	res := mustRegister(t, tb, s)
	if res.MasterAddr != "m:1" || res.HAServerAddr != "ha-m:1" || !res.BrokerChanged || res.TopicsChanged != 0 {
		t.Fatalf("slave result %+v", res)
	}
	// The slave shows up in routes, its topic data is ignored.
	checkRoute(t, tb, "T", "a{0:m:1,1:s:1} | a:4/4/6")
	checkRoute(t, tb, "Z", "none")
	if bodyPtr(t, tb, "T") == pa {
		t.Fatalf("cached body of T still the one without the slave")
	}
	if b, _ := tb.RouteBody("T", body.Legacy); !bytes.Contains(b, []byte(`1:"s:1"`)) {
		t.Fatalf("legacy body lacks the slave: %s", b)
	}
	if bodyPtr(t, tb, "V") != pb {
		t.Fatalf("broker b's topic re-encoded by a's slave")
	}
	// Master gone: a slave learns no master.
	tb.Unregister("c", "m:1", "a", 0)
	if res := mustRegister(t, tb, s); res.MasterAddr != "" || res.HAServerAddr != "" {
		t.Fatalf("slave without master: %+v", res)
	}
}

func TestPrimeSlave5x(t *testing.T) {
	t.Parallel()
	f := func(acting bool, wantPerm string) {
		t.Helper()
		tb, _ := newTable(Options{})
		mustRegister(t, tb, reg5("a", "s2:1", 2, 1, acting, tc("T", 4, 7), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("a", "s1:1", 1, 1, acting, tc("T", 4, 7), tc("U", 4, 6)))
		star := ""
		if acting {
			star = "*"
		}
		checkRoute(t, tb, "T", "a{1:s1:1,2:s2:1}"+star+" | a:4/4/"+wantPerm)
		// A master makes slaves non-prime: their data no longer counts.
		mustRegister(t, tb, reg5("a", "m:1", 0, 1, acting, tc("T", 8, 6), tc("U", 8, 6)))
		mustRegister(t, tb, reg5("a", "s1:1", 1, 2, acting, tc("T", 1, 7), tc("U", 1, 6)))
		checkRoute(t, tb, "T", "a{0:m:1,1:s1:1,2:s2:1}"+star+" | a:8/8/6")
	}
	f(true, "5")  // acting master: write bit cleared
	f(false, "7") // not acting: the prime slave's perms as sent
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	f := func(timeout, wantAfter int64) {
		t.Helper()
		tb, c := newTable(Options{})
		start := c.ms
		r := reg("a", "x:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
		r.HeartbeatTimeoutMillis = timeout
		r.Conn = 9
		mustRegister(t, tb, r)
		c.ms = start + wantAfter
		if evs := tb.ScanExpired(); len(evs) != 0 {
			t.Fatalf("timeout %d: evicted at the deadline: %+v", timeout, evs)
		}
		c.ms++
		evs := tb.ScanExpired()
		want := []Eviction{{Cluster: "c", BrokerAddr: "x:1", BrokerName: "a", BrokerID: 0, Reason: ReasonTimeout, Conn: 9, CloseConn: true}}
		if fmt.Sprint(evs) != fmt.Sprint(want) {
			t.Fatalf("timeout %d: evictions %+v, want %+v", timeout, evs, want)
		}
		checkRoute(t, tb, "T", "none")
		if s := tb.Stats(); s != (Stats{}) {
			t.Fatalf("stats after expiry %+v", s)
		}
		if evs := tb.ScanExpired(); len(evs) != 0 {
			t.Fatalf("second scan %+v", evs)
		}
	}
	f(0, DefaultBrokerTimeout)
	f(10000, 10000)
	f(-5, DefaultBrokerTimeout)
}

// An expired broker's connection is to be closed, as Java closes its
// channel, so a broker that is stuck but connected sees the close and
// reconnects to register again; unless another broker's live registration
// came over the same connection, which closing would drop as well.
func TestExpiryClosesTheConnection(t *testing.T) {
	t.Parallel()
	tb, c := newTable(Options{})
	at := func(r *Registration, conn ConnID, timeout int64) *Registration {
		r.Conn, r.HeartbeatTimeoutMillis = conn, timeout
		return r
	}
	mustRegister(t, tb, at(reg("a", "a:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 1, 1000))  // expires alone
	mustRegister(t, tb, at(reg("b", "b:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 2, 1000))  // expires, shares 2 with c
	mustRegister(t, tb, at(reg("c", "c:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 2, 60000)) // stays
	mustRegister(t, tb, at(reg("d", "d:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 3, 1000))  // both of 3 expire
	mustRegister(t, tb, at(reg("e", "e:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 3, 1000))
	mustRegister(t, tb, at(reg("f", "f:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 0, 1000)) // no connection
	c.ms += 1001
	got := map[string]bool{}
	for _, ev := range tb.ScanExpired() {
		got[ev.BrokerName] = ev.CloseConn
		if ev.CloseConn && ev.Conn == 0 {
			t.Fatalf("%s: close asked for no connection", ev.BrokerName)
		}
	}
	want := map[string]bool{"a": true, "b": false, "d": true, "e": true, "f": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("evictions and their CloseConn %v, want %v", got, want)
	}
	// Closing and unregistering are separate: neither a connection close
	// nor an unregistration asks for a close.
	mustRegister(t, tb, at(reg("x", "x:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)), 4, 0))
	unreg, _ := tb.Unregister("c", "x:1", "x", 0)
	for _, ev := range append(tb.ConnClosed(2), unreg...) {
		if ev.CloseConn {
			t.Fatalf("%+v asks for a close", ev)
		}
	}
}

func TestExpiryDefaultFromOptions(t *testing.T) {
	t.Parallel()
	tb, c := newTable(Options{DefaultBrokerTimeout: 5000})
	mustRegister(t, tb, reg("a", "x:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	c.ms += 5000
	if evs := tb.ScanExpired(); len(evs) != 0 {
		t.Fatalf("evicted at deadline")
	}
	c.ms++
	if evs := tb.ScanExpired(); len(evs) != 1 {
		t.Fatalf("not evicted after deadline: %+v", evs)
	}
}

func TestLivenessRefresh(t *testing.T) {
	t.Parallel()
	tb, c := newTable(Options{})
	mustRegister(t, tb, reg("a", "x:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg("b", "y:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	c.ms += 100000
	changed, stored, known := tb.QueryDataVersion("c", "x:1", &body.DataVersion{Timestamp: 1, Counter: 1})
	if changed || !known || stored != (body.DataVersion{Timestamp: 1, Counter: 1}) {
		t.Fatalf("query current: %v %+v %v", changed, stored, known)
	}
	if changed, _, _ := tb.QueryDataVersion("c", "x:1", &body.DataVersion{Timestamp: 1, Counter: 2}); !changed {
		t.Fatalf("query stale: not changed")
	}
	if changed, _, _ := tb.QueryDataVersion("c", "x:1", nil); !changed {
		t.Fatalf("query nil: not changed")
	}
	if changed, _, known := tb.QueryDataVersion("c", "nope:1", nil); !changed || known {
		t.Fatalf("query unknown: %v %v", changed, known)
	}
	if !tb.Heartbeat("c", "y:1") || tb.Heartbeat("c", "nope:1") || tb.Heartbeat("other", "y:1") {
		t.Fatalf("heartbeat results")
	}
	if tb.Stats().Live != 2 {
		t.Fatalf("heartbeat registered something")
	}
	c.ms += 100000 // 200 s after registering, 100 s after the refresh
	if evs := tb.ScanExpired(); len(evs) != 0 {
		t.Fatalf("refreshed brokers evicted: %+v", evs)
	}
	c.ms += 20001
	if evs := tb.ScanExpired(); len(evs) != 2 {
		t.Fatalf("want both evicted, got %+v", evs)
	}
}

func TestConnClosed(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	at := func(r *Registration, conn ConnID) *Registration { r.Conn = conn; return r }
	mustRegister(t, tb, at(reg("a", "a:1", 0, 1, tc("TA", 4, 6), tc("X", 4, 6)), 1))
	mustRegister(t, tb, at(reg("b", "b:1", 0, 1, tc("TB", 4, 6), tc("X", 4, 6)), 1))
	mustRegister(t, tb, at(reg("b", "b:2", 1, 1, tc("TB", 4, 6), tc("X", 4, 6)), 1))
	mustRegister(t, tb, at(reg("c", "c:1", 0, 1, tc("TC", 4, 6), tc("X", 4, 6)), 2))
	// a's latest registration moved to conn 3.
	mustRegister(t, tb, at(reg("a", "a:1", 0, 1, tc("TA", 4, 6), tc("X", 4, 6)), 3))
	pa := bodyPtr(t, tb, "TA")

	evs := tb.ConnClosed(1)
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s/%s/%d/%s", e.BrokerName, e.BrokerAddr, e.BrokerID, e.Reason))
	}
	if fmt.Sprint(sorted(got)) != "[b/b:1/0/conn_closed b/b:2/1/conn_closed]" {
		t.Fatalf("evictions %v", got)
	}
	checkRoute(t, tb, "TB", "none")
	checkRoute(t, tb, "X", "a{0:a:1} c{0:c:1} | a:4/4/6 c:4/4/6")
	if bodyPtr(t, tb, "TA") != pa {
		t.Fatalf("a's own topic re-encoded by b's eviction")
	}
	if evs := tb.ConnClosed(1); evs != nil {
		t.Fatalf("second close: %+v", evs)
	}
	if evs := tb.ConnClosed(0); evs != nil {
		t.Fatalf("conn 0: %+v", evs)
	}
	if evs := tb.ConnClosed(2); len(evs) != 1 || evs[0].BrokerName != "c" {
		t.Fatalf("close 2: %+v", evs)
	}
	checkRoute(t, tb, "X", "a{0:a:1} | a:4/4/6")
	if s := tb.Stats(); s != (Stats{Clusters: 1, BrokerGroups: 1, BrokerAddrs: 1, Topics: 2, Live: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestUnregister(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg("a", "s:1", 1, 1, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg("b", "n:1", 0, 1, tc("T", 8, 6), tc("V", 4, 6)))

	// An id other than the registered one is an older generation: fenced.
	if evs, fenced := tb.Unregister("c", "s:1", "a", 7); evs != nil || !fenced {
		t.Fatalf("stale id: evictions %+v fenced %v", evs, fenced)
	}
	checkRoute(t, tb, "T", "a{0:m:1,1:s:1} b{0:n:1} | a:4/4/6 b:8/8/6")
	evs, fenced := tb.Unregister("c", "s:1", "a", 1)
	if fenced || len(evs) != 1 || evs[0].Reason != ReasonUnregistered || evs[0].BrokerAddr != "s:1" {
		t.Fatalf("evictions %+v fenced %v", evs, fenced)
	}
	checkRoute(t, tb, "T", "a{0:m:1} b{0:n:1} | a:4/4/6 b:8/8/6")
	if evs, fenced := tb.Unregister("c", "s:1", "a", 1); evs != nil || fenced {
		t.Fatalf("repeat unregister: %+v %v", evs, fenced)
	}
	tb.Unregister("c", "m:1", "a", 0)
	checkRoute(t, tb, "T", "b{0:n:1} | b:8/8/6")
	checkRoute(t, tb, "U", "none")
	if got := fmt.Sprint(sorted(tb.TopicList())); got != "[T V]" {
		t.Fatalf("topics %s", got)
	}
	tb.Unregister("c", "n:1", "b", 0)
	if s := tb.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
	if got := string(tb.AppendClusterInfo(nil)); got != `{"brokerAddrTable":{},"clusterAddrTable":{}}` {
		t.Fatalf("cluster info %s", got)
	}
}

func TestFirstSingleTopicGuard(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	_, err := tb.Register(reg("a", "m:1", 0, 1, tc("T", 4, 6)))
	if !errors.Is(err, ErrFirstSingleTopic) {
		t.Fatalf("err = %v", err)
	}
	checkRoute(t, tb, "T", "none")
	if s := tb.Stats(); s.Live != 0 || s.BrokerAddrs != 0 || s.Topics != 0 {
		t.Fatalf("stats %+v", s)
	}
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	// Once registered, incremental single-topic registrations are fine.
	res := mustRegister(t, tb, reg("a", "m:1", 0, 2, tc("N", 2, 6)))
	if res.TopicsChanged != 1 {
		t.Fatalf("incremental: %+v", res)
	}
	checkRoute(t, tb, "N", "a{0:m:1} | a:2/2/6")
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/6")
}

// Duplicate topicConfigTable keys: the decoder keeps them in order and
// Java's map keeps the last, on every path that writes queue data.
func TestRegisterDuplicateTopicLastWins(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	checkBodies(t, tb, "T", "N")
	// A new DataVersion: the first T differs from the stored queue, the
	// last equals it.
	res := mustRegister(t, tb, reg("a", "m:1", 0, 2, tc("T", 4, 7), tc("T", 4, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/6")
	if res.TopicsChanged != 0 {
		t.Fatalf("changed %d", res.TopicsChanged)
	}
	// And the other way round.
	mustRegister(t, tb, reg("a", "m:1", 0, 3, tc("T", 4, 6), tc("T", 8, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:m:1} | a:8/8/6")
	checkBodies(t, tb, "T", "N")
	// The same DataVersion only adds missing topics, also with the last
	// value, counted once.
	res = mustRegister(t, tb, reg("a", "m:1", 0, 3, tc("T", 4, 7), tc("N", 2, 6), tc("N", 3, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:m:1} | a:8/8/6")
	checkRoute(t, tb, "N", "a{0:m:1} | a:3/3/6")
	if res.TopicsChanged != 1 {
		t.Fatalf("changed %d", res.TopicsChanged)
	}
	checkBodies(t, tb, "T", "N")
	// A first registration, duplicates included.
	mustRegister(t, tb, reg("b", "n:1", 0, 1, tc("T", 1, 6), tc("U", 4, 6), tc("T", 2, 6)))
	checkRoute(t, tb, "T", "a{0:m:1} b{0:n:1} | a:8/8/6 b:2/2/6")
	checkBodies(t, tb, "T", "N")
}

// The single-topic guard (step 7) counts topics as Java's map does:
// duplicates of one topic are one topic.
func TestFirstSingleTopicGuardCountsDistinctTopics(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	if _, err := tb.Register(reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("T", 8, 6))); !errors.Is(err, ErrFirstSingleTopic) {
		t.Fatalf("err = %v", err)
	}
	checkRoute(t, tb, "T", "none")
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6), tc("T", 8, 6)))
	checkRoute(t, tb, "T", "a{0:m:1} | a:8/8/6")
}

// Brokers send 0 for the master and a slave's id from 1; a negative id is
// refused before anything changes.
func TestRegisterNegativeBrokerID(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	_, err := tb.Register(reg5("a", "m:1", -1, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	if !errors.Is(err, ErrNegativeBrokerID) || !strings.Contains(err.Error(), "brokerId -1") {
		t.Fatalf("err = %v", err)
	}
	if s := tb.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
	mustRegister(t, tb, reg5("a", "m:1", 0, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	if _, err := tb.Register(reg5("a", "s:1", -2, 1, true, tc("T", 4, 6), tc("U", 4, 6))); !errors.Is(err, ErrNegativeBrokerID) {
		t.Fatalf("err = %v", err)
	}
	checkRoute(t, tb, "T", "a{0:m:1}* | a:4/4/6")
}

func TestStaleRegistrationGuard(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	withState := func(r *Registration, sv int64) *Registration { r.Body.DataVersion.StateVersion = sv; return r }
	mustRegister(t, tb, withState(reg5("a", "new:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6)), 5))
	res := mustRegister(t, tb, withState(reg5("a", "old:1", 0, 1, false, tc("T", 1, 2), tc("U", 1, 6)), 3))
	if res != (RegisterResult{}) {
		t.Fatalf("stale result %+v", res)
	}
	checkRoute(t, tb, "T", "a{0:new:1} | a:4/4/6")
	if _, _, known := tb.QueryDataVersion("c", "old:1", nil); known {
		t.Fatalf("stale address kept alive")
	}
	// A newer state version takes the id over.
	mustRegister(t, tb, withState(reg5("a", "old:1", 0, 1, false, tc("T", 1, 2), tc("U", 1, 6)), 6))
	checkRoute(t, tb, "T", "a{0:old:1} | a:1/1/2")
}

func TestSameAddressOtherID(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	mustRegister(t, tb, reg("a", "s:1", 1, 1, tc("T", 4, 6), tc("U", 4, 6)))
	// s:1 becomes the master: its id-1 entry goes, the old master's id 0 is
	// replaced.
	mustRegister(t, tb, reg("a", "s:1", 0, 2, tc("T", 2, 6), tc("U", 2, 6)))
	checkRoute(t, tb, "T", "a{0:s:1} | a:2/2/6")
}

func TestFilterServers(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	r := reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6))
	r.Body.FilterServerList = []string{"m:30000"}
	mustRegister(t, tb, r)
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/6 | fs{m:1:[m:30000]}")
	if b, _ := tb.RouteBody("T", body.Legacy); !bytes.Contains(b, []byte(`"filterServerTable":{"m:1":["m:30000"]}`)) {
		t.Fatalf("body %s", b)
	}
	p := bodyPtr(t, tb, "T")
	r.Body.FilterServerList = nil // pre-3.0.11 body: table untouched
	mustRegister(t, tb, r)
	if bodyPtr(t, tb, "T") != p {
		t.Fatalf("re-encoded without a change")
	}
	r.Body.FilterServerList = []string{}
	mustRegister(t, tb, r)
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/6")
}

// An address shared by two groups of one cluster, with filter servers: the
// unregistration of one group refreshes the other's view (the filter
// servers went) but only the request's own group counts as reduced and may
// lose the write bit (spec 3.5 step 4, Java's reducedBroker).
func TestUnregisterLeavesBystanderPerms(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg5("b", "m:1", 0, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
	mustRegister(t, tb, reg5("b", "x:1", 1, 1, true, tc("T", 4, 6), tc("T2", 4, 6)))
	ra := reg5("a", "x:1", 0, 1, false, tc("U", 4, 6), tc("U2", 4, 6))
	ra.Body.FilterServerList = []string{"f1"}
	mustRegister(t, tb, ra)
	tb.Unregister("c", "m:1", "b", 0) // b is reduced and master-less: read-only
	checkRoute(t, tb, "T", "b{1:x:1}* | b:4/4/4 | fs{x:1:[f1]}")
	tb.AddWritePerm("b")
	checkRoute(t, tb, "T", "b{1:x:1}* | b:4/4/6 | fs{x:1:[f1]}")
	checkBodies(t, tb, "T", "U")
	if evs, fenced := tb.Unregister("c", "x:1", "a", 0); fenced || len(evs) != 1 {
		t.Fatalf("evictions %+v fenced %v", evs, fenced)
	}
	checkRoute(t, tb, "T", "b{1:x:1}* | b:4/4/6")
	checkRoute(t, tb, "U", "none")
	checkBodies(t, tb, "T", "U")
}

func TestDeleteTopicWithBrokerRegistration(t *testing.T) {
	t.Parallel()
	f := func(enabled bool, wantT string) {
		t.Helper()
		tb, _ := newTable(Options{DeleteTopicWithBrokerRegistration: enabled})
		mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6), tc("S", 4, 6)))
		mustRegister(t, tb, reg("b", "n:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("U", 4, 6), tc("V", 4, 6)))
		checkRoute(t, tb, "T", wantT)
		checkRoute(t, tb, "U", "a{0:m:1} b{0:n:1} | a:4/4/6 b:4/4/6")
		if enabled {
			checkRoute(t, tb, "S", "none")
			if got := fmt.Sprint(sorted(tb.TopicList())); got != "[T U V]" {
				t.Fatalf("topics %s", got)
			}
			// The index forgot T for a: b's eviction drops T entirely.
			tb.Unregister("c", "n:1", "b", 0)
			checkRoute(t, tb, "T", "none")
		}
	}
	f(true, "b{0:n:1} | b:4/4/6")
	f(false, "a{0:m:1} b{0:n:1} | a:4/4/6 b:4/4/6")
}

func TestSupportActingMaster(t *testing.T) {
	t.Parallel()
	f := func(support bool, topic, want string) {
		t.Helper()
		tb, _ := newTable(Options{SupportActingMaster: support})
		mustRegister(t, tb, reg5("a", "m:1", 0, 1, true, tc(topic, 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("a", "s1:1", 1, 1, true, tc(topic, 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("a", "s2:1", 2, 1, true, tc(topic, 4, 6), tc("U", 4, 6)))
		mustRegister(t, tb, reg5("b", "n:1", 0, 1, false, tc(topic, 4, 6), tc("U", 4, 6)))
		// The master leaves: the group keeps serving reads, its queues lose
		// the write bit.
		tb.Unregister("c", "m:1", "a", 0)
		checkRoute(t, tb, topic, want)
	}
	f(false, "T", "a{1:s1:1,2:s2:1}* b{0:n:1} | a:4/4/4 b:4/4/6")
	f(true, "T", "a{0:s1:1,2:s2:1}* b{0:n:1} | a:4/4/4 b:4/4/6")
	f(true, syncBrokerMemberPrefix+"a", "a{1:s1:1,2:s2:1}* b{0:n:1} | a:4/4/4 b:4/4/6")
}

func TestActingMasterRewriteNeedsReadOnlyQueue(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{SupportActingMaster: true})
	// A prime slave of a master-less acting group registers writable
	// topics; they are stored read-only, so the rewrite applies.
	mustRegister(t, tb, reg5("a", "s1:1", 1, 1, true, tc("T", 4, 6), tc("U", 4, 6)))
	checkRoute(t, tb, "T", "a{0:s1:1}* | a:4/4/4")
	// Make the queue writable again: no rewrite.
	tb.AddWritePerm("a")
	checkRoute(t, tb, "T", "a{1:s1:1}* | a:4/4/6")
}

func TestZoneAndActingFlagInvalidateCache(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	r := reg5("a", "m:1", 0, 1, false, tc("T", 4, 6), tc("U", 4, 6))
	mustRegister(t, tb, r)
	p := bodyPtr(t, tb, "T")
	r.ZoneName = "z1"
	mustRegister(t, tb, r)
	checkRoute(t, tb, "T", "a{0:m:1}@z1 | a:4/4/6")
	if bodyPtr(t, tb, "T") == p {
		t.Fatalf("zone change kept the old body")
	}
	p = bodyPtr(t, tb, "T")
	r.EnableActingMaster = boolp(true)
	mustRegister(t, tb, r)
	checkRoute(t, tb, "T", "a{0:m:1}*@z1 | a:4/4/6")
	if bodyPtr(t, tb, "T") == p {
		t.Fatalf("acting flag change kept the old body")
	}
}

// The header's strings alias the request's buffer, which is reused: the
// table keeps clones of them. The body is the decoder's own and is kept as
// it is (Registration's ownership rules).
func TestRegisterClonesHeaderStrings(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	buf := []byte("cluster1broker-a10.0.0.1:10911ha:1z")
	s := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	r := &Registration{
		Cluster: s(0, 8), BrokerName: s(8, 16), BrokerAddr: s(16, 30), HAServerAddr: s(30, 34), ZoneName: s(34, 35),
		Body: &body.RegisterBroker{
			FilterServerList: []string{"ha:1"},
			Topics:           []body.TopicConfig{tc("TopicX", 4, 6), tc("TopicY", 4, 6)},
		},
	}
	mustRegister(t, tb, r)
	mustRegister(t, tb, &Registration{Cluster: s(0, 8), BrokerName: s(8, 16), BrokerAddr: "s:1", BrokerID: 1, ZoneName: s(34, 35),
		Body: &body.RegisterBroker{}})
	for i := range buf {
		buf[i] = '#'
	}
	checkRoute(t, tb, "TopicX", "broker-a{0:10.0.0.1:10911,1:s:1}@z | broker-a:4/4/6 | fs{10.0.0.1:10911:[ha:1]}")
	if got := fmt.Sprint(sorted(tb.TopicList())); got != "[TopicX TopicY]" {
		t.Fatalf("topics %s", got)
	}
	if _, _, known := tb.QueryDataVersion("cluster1", "10.0.0.1:10911", nil); !known {
		t.Fatalf("live key aliases the buffer")
	}
	if got := string(tb.AppendClusterInfo(nil)); !strings.Contains(got, `"clusterAddrTable":{"cluster1":["broker-a"]}`) {
		t.Fatalf("cluster info %s", got)
	}
}

func TestStaticTopicMapping(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	r := reg5("a", "m:1", 0, 1, false, tc("S", 4, 6), tc("U", 4, 6))
	info := `{"bname":"a","currIdMap":{"0":0},"dirty":false,"epoch":1,"scope":"__global__","topic":"S","totalQueues":8}`
	r.Body.MappingInfo = map[string][]byte{"S": []byte(info), "Nowhere": []byte(info)}
	mustRegister(t, tb, r)
	mapping := func(topic string) string {
		t.Helper()
		rt, ok := tb.Route(topic)
		if !ok {
			return "none"
		}
		return fmt.Sprintf("%q", rt.MappingByBroker)
	}
	want := fmt.Sprintf("%q", map[string][]byte{"a": []byte(info)})
	if got := mapping("S"); got != want {
		t.Fatalf("mapping %s", got)
	}
	if b, _ := tb.RouteBody("S", body.Legacy); !bytes.Contains(b, []byte(`"topicQueueMappingByBroker":{"a":{"bname":"a","currIdMap":{0:0}`)) {
		t.Fatalf("body %s", b)
	}
	if got := mapping("U"); got != "map[]" {
		t.Fatalf("U has a mapping: %s", got)
	}
	checkBodies(t, tb, "S", "U", "Nowhere")

	// Java keeps mappings in a table of their own that neither
	// DELETE_TOPIC_IN_NAMESRV nor unregistration cleans: the broker's next
	// registration, with the same DataVersion, re-creates S's queue data
	// (its queue is missing) and the route carries the mapping again.
	tb.DeleteTopic("S", "")
	checkBodies(t, tb, "S")
	mustRegister(t, tb, r)
	if got := mapping("S"); got != want {
		t.Fatalf("mapping after delete and re-registration %s", got)
	}
	checkBodies(t, tb, "S")
	tb.DeleteTopic("S", "c")
	tb.RegisterTopic("S", []body.QueueData{{BrokerName: "a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}})
	if got := mapping("S"); got != want {
		t.Fatalf("mapping after delete and REGISTER_TOPIC %s", got)
	}
	tb.Unregister("c", "m:1", "a", 0)
	r.Body.DataVersion.Counter++
	mustRegister(t, tb, r)
	if got := mapping("S"); got != want {
		t.Fatalf("mapping after unregistration and re-registration %s", got)
	}
	// A mapping for a topic without queue data is kept too, and shows once
	// the topic has some.
	if got := mapping("Nowhere"); got != "none" {
		t.Fatalf("Nowhere routes: %s", got)
	}
	tb.RegisterTopic("Nowhere", []body.QueueData{{BrokerName: "a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}})
	if got := mapping("Nowhere"); got != want {
		t.Fatalf("Nowhere mapping %s", got)
	}
	checkBodies(t, tb, "S", "U", "Nowhere")
	// Brokers without static topics leave the mapping table alone.
	tb2, _ := newTable(Options{})
	mustRegister(t, tb2, reg5("a", "m:1", 0, 1, false, tc("S", 4, 6), tc("U", 4, 6)))
	if len(tb2.mappings) != 0 {
		t.Fatalf("mapping table %v", tb2.mappings)
	}
}

func TestRouteIsACopy(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 6), tc("U", 4, 6)))
	rt, _ := tb.Route("T")
	rt.BrokerDatas[0].Addrs[0].Addr = "evil"
	rt.QueueDatas[0].Perm = 0
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/6")
}
