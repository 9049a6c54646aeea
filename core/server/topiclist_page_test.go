// topiclist_page_test.go checks GET_ALL_TOPIC_LIST_FROM_NAMESERVER with a
// list too large for one frame: a plain (Java) request is refused with a
// clear answer instead of a frame the peer must refuse, a paged one gets
// pages, and the client reads the whole list through them.

package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/route"
)

func TestAllTopicListPagesWhenTooLargeForAFrame(t *testing.T) {
	cfg := testConfig(t)
	cfg.FrameMaxLength = 256 << 10
	cfg.MaxPendingRequestBytes = 1 << 20
	s, _ := startServer(t, cfg)
	const topics = 30000 // about 330 KB of list
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1}}
	for i := 0; i < topics; i++ {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: fmt.Sprintf("T%06d", i), ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6})
	}
	if _, err := s.routes.Register(&route.Registration{Cluster: "c", BrokerName: "a", BrokerAddr: "10.0.0.1:10911", Body: rb}); err != nil {
		t.Fatal(err)
	}
	w := dialWire(t, s.Addr())
	r := w.Call(request(codec.GetAllTopicListFromNameServer, 1))
	if r.Code != codec.SystemError || !strings.Contains(r.Remark, "does not fit a 262144-byte frame") {
		t.Fatalf("plain request: code %d %q", r.Code, r.Remark)
	}
	r = w.Call(request(codec.GetAllTopicListFromNameServer, 2, "rocketnsPageSize", "1000", "rocketnsPageAfter", "T000499"))
	page, _, err := body.DecodeTopicList(r.Body)
	if err != nil || r.Code != codec.Success || len(page) != 1000 || page[0] != "T000500" {
		t.Fatalf("page: code %d %q, %d topics (%v) err %v", r.Code, r.Remark, len(page), page[:min(len(page), 1)], err)
	}
	if next, _ := r.ExtValue("rocketnsNextPageAfter"); next != "T001499" {
		t.Fatalf("next page after %q, want T001499", next)
	}
	c, err := client.Dial(context.Background(), s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	all, err := c.AllTopicList(context.Background())
	if err != nil || len(all) != topics || all[0] != "T000000" || all[topics-1] != fmt.Sprintf("T%06d", topics-1) {
		t.Fatalf("client: %d topics, err %v", len(all), err)
	}
	// A list that fits is answered as Java does.
	if r := w.Call(request(codec.GetTopicsByCluster, 3, "cluster", "nope")); r.Code != codec.Success {
		t.Fatalf("small list: code %d %q", r.Code, r.Remark)
	}
}
