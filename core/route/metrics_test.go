// Tests of the metrics figures: cached route bytes follow fills and drops,
// topic-broker entries follow registrations.

package route

import (
	"sync"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func TestCachedRouteBytes(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	if got := tb.CachedRouteBytes(); got != 0 {
		t.Fatalf("empty table: %d cached bytes", got)
	}
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	if got := tb.CachedRouteBytes(); got != 0 {
		t.Fatalf("before any query: %d cached bytes", got)
	}
	b1, _ := tb.RouteBody("T1", body.Standard)
	b2, _ := tb.RouteBody("T1", body.Legacy)
	b3, _ := tb.RouteBody("T2", body.Standard)
	want := int64(len(b1) + len(b2) + len(b3))
	f := func(step string, want int64) {
		t.Helper()
		if got := tb.CachedRouteBytes(); got != want {
			t.Fatalf("%s: %d cached bytes, want %d", step, got, want)
		}
	}
	f("three bodies", want)
	tb.RouteBody("T1", body.Standard) // a hit adds nothing
	tb.RouteBody("missing", body.Standard)
	f("after hits", want)

	tb.DeleteTopic("T2", "")
	f("T2 deleted", want-int64(len(b3)))

	// A new queue count replaces T1's entry: its two bodies go.
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 2, tc("T1", 8, 6), tc("X", 1, 6)))
	f("T1 changed", 0)
	nb, _ := tb.RouteBody("T1", body.Standard)
	f("T1 queried again", int64(len(nb)))

	// A broker group change refreshes every topic of the group.
	mustRegister(t, tb, reg("a", "10.0.0.2:10911", 1, 2, tc("T1", 8, 6), tc("X", 1, 6)))
	f("slave joined", 0)
}

// A query that filled the cache of an entry a writer had already replaced
// must not leave its bytes counted.
func TestCachedRouteBytesFillAfterDrop(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("X", 1, 6)))
	old := entryOf(tb, "T1")
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 2, tc("T1", 8, 6), tc("X", 1, 6)))
	tb.cacheFilled(old, 100)
	if got := tb.CachedRouteBytes(); got != 0 {
		t.Fatalf("fill of a replaced entry counted: %d bytes", got)
	}
}

// Queries and registrations racing leave the count equal to what the live
// entries hold (run under -race).
func TestCachedRouteBytesConcurrent(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				tb.RouteBody("T1", body.Standard)
				tb.RouteBody("T2", body.Legacy)
			}
		}()
	}
	for i := int64(0); i < 200; i++ {
		mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, i+2, tc("T1", int32(4+i%2), 6), tc("T2", 4, 6)))
	}
	wg.Wait()
	var want int64
	for _, topic := range []string{"T1", "T2"} {
		e := entryOf(tb, topic)
		for i := range e.bodies {
			if c := e.bodies[i].Load(); c != nil {
				want += int64(len(c.b))
			}
		}
	}
	if got := tb.CachedRouteBytes(); got != want {
		t.Fatalf("%d cached bytes counted, the live entries hold %d", got, want)
	}
}

func TestTopicBrokerEntries(t *testing.T) {
	t.Parallel()
	tb, _ := newTable(Options{})
	f := func(step string, want int) {
		t.Helper()
		if got := tb.TopicBrokerEntries(); got != want {
			t.Fatalf("%s: %d topic-broker entries, want %d", step, got, want)
		}
	}
	f("empty", 0)
	mustRegister(t, tb, reg("a", "10.0.0.1:10911", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	f("a with two topics", 2)
	mustRegister(t, tb, reg("b", "10.0.0.3:10911", 0, 1, tc("T1", 4, 6), tc("T3", 4, 6)))
	f("b joins T1", 4)
	// A slave adds an address, not an entry.
	mustRegister(t, tb, reg("a", "10.0.0.2:10911", 1, 1, tc("T1", 4, 6), tc("T2", 4, 6)))
	f("slave of a", 4)
	tb.DeleteTopic("T1", "")
	f("T1 deleted", 2)
}
