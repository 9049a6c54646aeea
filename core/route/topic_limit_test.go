// topic_limit_test.go checks Options.MaxTopics: a registration that would
// take the table past it is refused and changes nothing.

package route

import (
	"errors"
	"strings"
	"testing"
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
