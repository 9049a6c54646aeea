// Tests of the encoded topic lists: shared while the table does not change,
// encoded afresh after every write that changes a topic or a broker group,
// never stale, also under concurrent readers.

package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func TestTopicListsAreSharedUntilTheTableChanges(t *testing.T) {
	tb, clk := newTable(Options{})
	r := reg("a", "a0:1", 0, 1, tc("T1", 4, 6), tc("T2", 4, 6))
	mustRegister(t, tb, r)
	all, byCluster, system := tb.TopicListBody(), tb.TopicsByClusterBody("c"), tb.SystemTopicListBody()
	if string(all.Body) != `{"topicList":["T1","T2"]}` || all.Topics != 2 {
		t.Fatalf("206 body %s (%d topics)", all.Body, all.Topics)
	}
	// Re-registering the same topics, a heartbeat or an expiry scan with
	// nothing due change no list: the same bodies are served.
	clk.ms += 1000
	mustRegister(t, tb, r)
	tb.Heartbeat("c", "a0:1")
	tb.ScanExpired()
	if tb.TopicListBody() != all || tb.TopicsByClusterBody("c") != byCluster || tb.SystemTopicListBody() != system {
		t.Fatal("a write that changed no topic and no broker group encoded the lists again")
	}
	// A cluster the table does not know is answered, empty, and not kept.
	if e := tb.TopicsByClusterBody("nope"); string(e.Body) != `{"topicList":[]}` || tb.TopicsByClusterBody("nope") == e {
		t.Fatalf("unknown cluster: %s, or kept", e.Body)
	}
	if l := tb.currentLists(); len(l.byCluster) != 1 {
		t.Fatalf("lists kept for %d clusters, want 1", len(l.byCluster))
	}
	mustRegister(t, tb, reg("a", "a0:1", 0, 2, tc("T1", 4, 6), tc("T2", 4, 6), tc("T3", 4, 6)))
	if got := tb.TopicListBody(); string(got.Body) != `{"topicList":["T1","T2","T3"]}` {
		t.Fatalf("after a new topic: %s", got.Body)
	}
	if got := tb.TopicsByClusterBody("c"); string(got.Body) != `{"topicList":["T1","T2","T3"]}` {
		t.Fatalf("224 after a new topic: %s", got.Body)
	}
	tb.Unregister("c", "a0:1", "a", 0)
	if got := tb.TopicListBody(); string(got.Body) != `{"topicList":[]}` {
		t.Fatalf("after the last broker left: %s", got.Body)
	}
	if got := tb.SystemTopicListBody(); !bytes.Equal(got.Body, body.AppendTopicList(nil, []string{}, "")) {
		t.Fatalf("304 after the last broker left: %s", got.Body)
	}
}

// Readers ask for every list while a writer registers a new topic per
// round and unregisters some; after each write the writer's own next
// request shows it, whatever the readers encoded meanwhile (a list encoded
// from part of a commit must never outlive it).
func TestTopicListsFollowConcurrentWrites(t *testing.T) {
	tb, _ := newTable(Options{Shards: 8})
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, l := range []*EncodedList{tb.TopicListBody(), tb.TopicsByClusterBody("c"), tb.UnitTopicListBody(UnitTopics)} {
					var v struct{ TopicList []string }
					if err := json.Unmarshal(l.Body, &v); err != nil || len(v.TopicList) != l.Topics {
						errs <- fmt.Errorf("list %s (%d topics): %v", l.Body, l.Topics, err)
						return
					}
				}
			}
		}()
	}
	base := []body.TopicConfig{tc("S1", 1, 6), tc("S2", 1, 6)} // past the one-topic guard
	topics := base
	for round := range 300 {
		topics = append(slices.Clip(topics), tc("R"+strconv.Itoa(round), 1, 6))
		name := "b" + strconv.Itoa(round%3)
		mustRegister(t, tb, reg(name, name+":1", 0, int64(round), topics...))
		want := body.AppendTopicList(nil, tb.TopicList(), "")
		if got := tb.TopicListBody(); !bytes.Equal(got.Body, want) {
			t.Fatalf("round %d: 206 %s, want %s", round, got.Body, want)
		}
		if got := tb.TopicsByClusterBody("c"); !bytes.Equal(got.Body, want) {
			t.Fatalf("round %d: 224 %s, want %s", round, got.Body, want)
		}
		if round%50 == 49 {
			for _, n := range []string{"b0", "b1", "b2"} {
				tb.Unregister("c", n+":1", n, 0)
			}
			topics = base
			if got := tb.TopicListBody(); got.Topics != 0 {
				t.Fatalf("round %d: every broker gone, 206 names %d topics", round, got.Topics)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
