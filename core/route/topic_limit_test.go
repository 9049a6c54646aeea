// topic_limit_test.go checks Options.MaxTopics: a registration that would
// take the table past it is refused and changes nothing.

package route

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func TestMaxTopicsRefusesBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{MaxTopics: 3})
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	// b shares T1 and T2 with a: only T3 is new, within the bound.
	mustRegister(t, tb, reg("b", "10.0.0.2:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6), tc("T3", 4, 6)))
	// c would add T4 and T5.
	_, err := tb.Register(reg("c", "10.0.0.3:10911", 0, 1, tc("T1", 4, 6), tc("T4", 4, 6), tc("T5", 4, 6)))
	if !errors.Is(err, ErrTooManyTopics) {
		t.Fatalf("registration past the bound: err %v", err)
	}
	if got := len(tb.TopicList()); got != 3 {
		t.Fatalf("%d topics after the refusal, want 3", got)
	}
	if _, ok := tb.Route("T4"); ok {
		t.Fatal("a refused registration added a topic")
	}
	checkRoute(t, tb, "T1", routeString(tb.Route("T1")))
	if info := string(tb.AppendClusterInfo(nil)); strings.Contains(info, "10.0.0.3") {
		t.Fatalf("a refused broker is in the cluster info: %s", info)
	}
	// Re-registering what is held always passes.
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 2, tc("T1", 4, 6), tc("T2", 4, 6), tc("T3", 4, 6)))
}

// A registration refused for its topics still tells that the broker is
// alive: its liveness is refreshed as by a heartbeat, so a broker whose
// new topics do not fit keeps its routes instead of expiring while it
// retries. What it holds stays as it was.
func TestTopicRefusalRefreshesLiveness(t *testing.T) {
	tb, clk := newTable(Options{MaxTopics: 4})
	legit := reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6))
	legit.HeartbeatTimeoutMillis = 10000
	mustRegister(t, tb, legit)
	mustRegister(t, tb, reg("x", "10.0.0.9:10911", 0, 1, tc("X1", 4, 6), tc("X2", 4, 6)))
	want := routeString(tb.Route("T1"))
	for i := range 5 {
		clk.ms += 6000
		grown := reg("a", "10.0.0.1:10911", 0, int64(2+i), tc("T1", 4, 6), tc("T2", 4, 6), tc("T3", 4, 6))
		grown.HeartbeatTimeoutMillis = 10000
		if _, err := tb.Register(grown); !errors.Is(err, ErrTooManyTopics) {
			t.Fatalf("round %d: a's new topic past the bound: %v", i, err)
		}
		if evs := tb.ScanExpired(); len(evs) != 0 {
			t.Fatalf("round %d, %d s after a's last accepted registration: evicted %+v", i, 6*(i+1), evs)
		}
		checkRoute(t, tb, "T1", want)
		if _, ok := tb.Route("T3"); ok {
			t.Fatalf("round %d: the refused topic was added", i)
		}
	}
	// The data version stays the last accepted one, so a 5.x broker's
	// QUERY_DATA_VERSION keeps asking it to register again.
	if changed, _, known := tb.QueryDataVersion("c", "10.0.0.1:10911", &legit.Body.DataVersion); changed || !known {
		t.Fatalf("data version changed by a refusal: changed %v known %v", changed, known)
	}
	// Only the registration's own entry: not another broker's at the
	// address, not one a registration with other credentials names.
	clk.ms += 6000
	other := reg("b", "10.0.0.1:10911", 0, 9, tc("T1", 4, 6), tc("T9", 4, 6))
	if _, err := tb.Register(other); !errors.Is(err, ErrTooManyTopics) {
		t.Fatalf("another broker at a's address: %v", err)
	}
	if tb.KeepAlive(other) {
		t.Fatal("another brokerName refreshed a's liveness")
	}
	thief := reg("a", "10.0.0.1:10911", 0, 9)
	thief.Owner = "kt"
	if tb.KeepAlive(thief) {
		t.Fatal("other credentials refreshed a's liveness")
	}
	clk.ms += 5000
	if evs := tb.ScanExpired(); len(evs) != 1 || evs[0].BrokerName != "a" {
		t.Fatalf("a after 11 s without a refresh of its own: evicted %+v", evs)
	}
}

// One peer cannot take all of MaxTopics. The finding: two registrations
// from one host (100,000 + 99,998 topics) filled a fresh table's 200,000,
// after which a legitimate broker adding one topic was refused. With the
// per-source quota the second registration is refused instead, and the
// legitimate broker's new topic is accepted beside its routes. make test
// runs it at a hundredth of the finding's size, the same rule at every
// size; make soak (ROCKETNS_SOAK) at the finding's.
func TestTopicQuotaPerSource(t *testing.T) {
	quota := 1000
	if os.Getenv("ROCKETNS_SOAK") != "" {
		quota = 100000
	}
	tb, _ := newTable(Options{MaxTopics: 2 * quota, MaxTopicsPerSource: quota})
	legit := reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6))
	legit.Source = "10.0.0.1"
	mustRegister(t, tb, legit)
	want := routeString(tb.Route("T1"))

	squat := func(name string, n int, prefix string) error {
		topics := make([]body.TopicConfig, n)
		for i := range topics {
			topics[i] = tc(prefix+strconv.Itoa(i), 1, 6)
		}
		r := reg(name, "10.9.9.9:"+name, 0, 1, topics...)
		r.Source = "10.9.9.9"
		_, err := tb.Register(r)
		return err
	}
	// What is left of MaxTopics after the first squat and the legitimate
	// broker's two topics: refused by the quota alone.
	rest := quota - 2
	if err := squat("s1", quota, "S1_"); err != nil {
		t.Fatalf("the first %d topics of one source, within its quota: %v", quota, err)
	}
	err := squat("s2", rest, "S2_")
	if !errors.Is(err, ErrTopicQuota) || !strings.Contains(err.Error(), "10.9.9.9") {
		t.Fatalf("%d more topics from the same source: %v, want ErrTopicQuota naming the source", rest, err)
	}
	if got := len(tb.TopicList()); got != quota+2 {
		t.Fatalf("%d topics after the refusal, want %d", got, quota+2)
	}
	// Another registration of the squatter's that shares its topics costs
	// nothing.
	if err := squat("s3", quota, "S1_"); err != nil {
		t.Fatalf("a registration of topics the source already brought: %v", err)
	}

	grown := reg("a", "10.0.0.1:10911", 0, 2, tc("T1", 4, 6), tc("T2", 4, 6), tc("T3", 4, 6))
	grown.Source = "10.0.0.1"
	mustRegister(t, tb, grown)
	checkRoute(t, tb, "T1", want)
	checkRoute(t, tb, "T3", "a{0:10.0.0.1:10911} | a:4/4/6")

	// The quota follows the topics: once they leave the table, the
	// source may bring others.
	tb.Unregister("c", "10.9.9.9:s1", "s1", 0)
	tb.Unregister("c", "10.9.9.9:s3", "s3", 0)
	if err := squat("s2", rest, "S2_"); err != nil {
		t.Fatalf("the source's topics gone, %d new ones: %v", rest, err)
	}
}
