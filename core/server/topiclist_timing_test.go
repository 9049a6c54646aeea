// topiclist_timing_test.go measures and guards the topic lists (206, 224,
// 304, 311-313) in process: a list is encoded once per change of the route
// table and shared by every answer, so asking for it again allocates
// nothing however many topics it holds.

package server

import (
	"fmt"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

// topicListWalk is a server holding one broker with topics topics (the
// first tenth flagged as unit topics), asked code over one in-process
// connection.
func topicListWalk(tb testing.TB, topics int, code int32, ext ...string) *routeWalk {
	tb.Helper()
	s, err := New(testConfig(tb), quietLog)
	if err != nil {
		tb.Fatal(err)
	}
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1}}
	for i := range topics {
		var flag int32
		if i%10 == 0 {
			flag = route.FlagUnit | route.FlagUnitSub
		}
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: fmt.Sprintf("BenchmarkTopic-%06d", i), ReadQueueNums: 8,
			WriteQueueNums: 8, Perm: 6, TopicSysFlag: flag, TopicFilterType: "SINGLE_TAG"})
	}
	if _, err := s.routes.Register(&route.Registration{Cluster: "DefaultCluster", BrokerName: "broker-a",
		BrokerAddr: "10.0.0.1:10911", Body: rb}); err != nil {
		tb.Fatal(err)
	}
	req := &codec.Command{Code: code, Version: 479, Opaque: 1, Language: 9, HasExt: true}
	for i := 0; i+1 < len(ext); i += 2 {
		req.SetExt(ext[i], ext[i+1])
	}
	return &routeWalk{s: s, p: pipe(tb, s), frame: codec.AppendFrame(nil, req)}
}

// topicListCodes are the topic list requests, with the header a request
// carries.
var topicListCodes = []struct {
	name string
	code int32
	ext  []string
}{
	{"206", codec.GetAllTopicListFromNameServer, nil},
	{"224", codec.GetTopicsByCluster, []string{"cluster", "DefaultCluster"}},
	{"304", codec.GetSystemTopicListFromNS, nil},
	{"311", codec.GetUnitTopicList, nil},
	{"312", codec.GetHasUnitSubTopicList, nil},
	{"313", codec.GetHasUnitSubUnUnitTopicList, nil},
}

// Asking for a topic list again, the table unchanged, allocates nothing:
// the encoded list is shared, as route bodies are.
func TestTopicListsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, c := range topicListCodes {
		w := topicListWalk(t, 5000, c.code, c.ext...)
		if n := w.once(t, w.frame); n < 30 {
			t.Fatalf("%s: answer of %d bytes is not a list", c.name, n)
		}
		if allocs := testing.AllocsPerRun(200, func() { w.once(t, w.frame) }); allocs != 0 {
			t.Fatalf("%s: %.1f allocations per request, want 0", c.name, allocs)
		}
	}
}

// BenchmarkTopicListInProcess is GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206)
// over one in-process connection, against a broker holding 5,000 topics
// (an answer of about 130 KB), the table unchanged between requests.
func BenchmarkTopicListInProcess(b *testing.B) {
	w := topicListWalk(b, 5000, codec.GetAllTopicListFromNameServer)
	b.SetBytes(int64(w.once(b, w.frame)))
	b.ReportAllocs()
	for b.Loop() {
		w.once(b, w.frame)
	}
}
