// Tests of the admin operations and topic lists, and of lock-free readers
// racing writers.

package route

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func twoBrokers(t *testing.T, opts Options) *Table {
	tb, _ := newTable(opts)
	unit := tc("UNIT", 4, 6)
	unit.TopicSysFlag = FlagUnit
	sub := tc("SUB", 4, 6)
	sub.TopicSysFlag = FlagUnitSub
	both := tc("BOTH", 4, 6)
	both.TopicSysFlag = FlagUnit | FlagUnitSub
	mustRegister(t, tb, reg("a", "m:1", 0, 1, tc("T", 4, 7), tc("A", 4, 6), unit, sub, both))
	rb := reg("b", "n:1", 0, 1, tc("T", 8, 6), tc("B", 4, 6))
	rb.Cluster = "c2"
	mustRegister(t, tb, rb)
	return tb
}

func TestWritePerm(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	pb := bodyPtr(t, tb, "B")
	if n := tb.WipeWritePerm("a"); n != 5 {
		t.Fatalf("wiped %d", n)
	}
	checkRoute(t, tb, "T", "a{0:m:1} b{0:n:1} | a:4/4/5 b:8/8/6")
	if bodyPtr(t, tb, "B") != pb {
		t.Fatalf("b's topic re-encoded")
	}
	if n := tb.AddWritePerm("a"); n != 5 {
		t.Fatalf("added %d", n)
	}
	checkRoute(t, tb, "T", "a{0:m:1} b{0:n:1} | a:4/4/6 b:8/8/6")
	if n := tb.WipeWritePerm("nope"); n != 0 {
		t.Fatalf("unknown broker: %d", n)
	}
}

func TestDeleteTopic(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	tb.DeleteTopic("T", "c2")
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/7")
	tb.DeleteTopic("T", "nosuch")
	checkRoute(t, tb, "T", "a{0:m:1} | a:4/4/7")
	tb.DeleteTopic("T", "c")
	checkRoute(t, tb, "T", "none")
	tb.DeleteTopic("A", "")
	checkRoute(t, tb, "A", "none")
	// The index forgot the deleted topics: evicting a touches what is left.
	tb.Unregister("c", "m:1", "a", 0)
	if got := fmt.Sprint(sorted(tb.TopicList())); got != "[B]" {
		t.Fatalf("topics %s", got)
	}
}

func TestRegisterTopic(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	q := func(name string, n int32) body.QueueData {
		return body.QueueData{BrokerName: name, ReadQueueNums: n, WriteQueueNums: n, Perm: 6}
	}
	tb.RegisterTopic("N", []body.QueueData{q("a", 2), q("zz", 2)})
	checkRoute(t, tb, "N", "none") // new topic: all brokers must be known
	tb.RegisterTopic("N", []body.QueueData{q("b", 2), q("a", 3)})
	checkRoute(t, tb, "N", "a{0:m:1} b{0:n:1} | a:3/3/6 b:2/2/6")
	tb.RegisterTopic("N", []body.QueueData{q("a", 5), q("zz", 1), q("b", 9)})
	checkRoute(t, tb, "N", "a{0:m:1} b{0:n:1} | a:5/5/6 b:2/2/6")
	tb.Unregister("c2", "n:1", "b", 0)
	checkRoute(t, tb, "N", "a{0:m:1} | a:5/5/6")
}

func TestTopicLists(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	f := func(name string, got []string, want string) {
		t.Helper()
		if g := fmt.Sprint(sorted(got)); g != want {
			t.Fatalf("%s: %s, want %s", name, g, want)
		}
	}
	f("all", tb.TopicList(), "[A B BOTH SUB T UNIT]")
	f("c", tb.TopicsByCluster("c"), "[A BOTH SUB T UNIT]")
	f("c2", tb.TopicsByCluster("c2"), "[B T]")
	f("unknown", tb.TopicsByCluster("x"), "[]")
	f("unit", tb.UnitTopicList(UnitTopics), "[BOTH UNIT]")
	f("unit sub", tb.UnitTopicList(HasUnitSubTopics), "[BOTH SUB]")
	f("unit sub ununit", tb.UnitTopicList(HasUnitSubUnunitTopics), "[SUB]")
	topics, addr := tb.SystemTopicList()
	if fmt.Sprint(topics) != "[c c2 a b]" || addr != "m:1" {
		t.Fatalf("system list %v %q", topics, addr)
	}
	if got := tb.BrokerMemberGroup("a"); len(got) != 1 || got[0] != (body.BrokerAddr{ID: 0, Addr: "m:1"}) {
		t.Fatalf("member group %v", got)
	}
	if got := tb.BrokerMemberGroup("nope"); got != nil {
		t.Fatalf("unknown member group %v", got)
	}
}

func TestClusterInfo(t *testing.T) {
	t.Parallel()
	tb := twoBrokers(t, Options{})
	mustRegister(t, tb, reg("a", "s:1", 1, 1, tc("T", 4, 6), tc("A", 4, 6)))
	want := `{"brokerAddrTable":{"a":{"brokerAddrs":{0:"m:1",1:"s:1"},"brokerName":"a","cluster":"c","enableActingMaster":false},"b":{"brokerAddrs":{0:"n:1"},"brokerName":"b","cluster":"c2","enableActingMaster":false}},"clusterAddrTable":{"c":["a"],"c2":["b"]}}`
	if got := string(tb.AppendClusterInfo(nil)); got != want {
		t.Fatalf("cluster info\n got %s\nwant %s", got, want)
	}
	// Cached: a second call appends the same bytes after dst.
	if got := string(tb.AppendClusterInfo([]byte("x"))); got != "x"+want {
		t.Fatalf("second call %s", got)
	}
	tb.Unregister("c", "s:1", "a", 1)
	if got := string(tb.AppendClusterInfo(nil)); strings.Contains(got, "s:1") {
		t.Fatalf("stale cluster info %s", got)
	}
}

// Readers query routes and cluster info while writers register, expire and
// unregister; every body must parse and name only brokers that own queues.
// -race checks the publication protocol.
func TestConcurrentReadersAndWriters(t *testing.T) {
	t.Parallel()
	tb, c := newTable(Options{SupportActingMaster: true})
	topics := make([]body.TopicConfig, 50)
	for i := range topics {
		topics[i] = tc("T"+strconv.Itoa(i), 4, 6)
	}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				topic := topics[(i*7+r)%len(topics)].TopicName
				b, ok := tb.RouteBody(topic, body.Dialect(i&1))
				if !ok {
					continue
				}
				rt, err := body.DecodeTopicRoute(b)
				if err != nil {
					errs <- fmt.Errorf("%s: %v: %s", topic, err, b)
					return
				}
				if len(rt.BrokerDatas) != len(rt.QueueDatas) {
					errs <- fmt.Errorf("%s: %d brokers for %d queues: %s", topic, len(rt.BrokerDatas), len(rt.QueueDatas), b)
					return
				}
				_ = tb.AppendClusterInfo(nil)
			}
		}(r)
	}
	for round := 0; round < 300; round++ {
		name := "b" + strconv.Itoa(round%4)
		addr := name + ":" + strconv.Itoa(round%3)
		r := reg5(name, addr, int64(round%3), int64(round/5), round%2 == 0, topics[round%10:round%10+20]...)
		r.Conn = ConnID(round%5 + 1)
		if _, err := tb.Register(r); err != nil {
			t.Fatal(err)
		}
		switch round % 7 {
		case 3:
			tb.ConnClosed(ConnID(round%5 + 1))
		case 5:
			tb.Unregister("c", addr, name, 0)
		case 6:
			c.ms += 130000
			tb.ScanExpired()
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
