package routetest

import (
	"slices"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

// small: 6 groups (12 brokers), 10 topics on 3 groups each, stride 2.
var small = Layout{Groups: 6, Topics: 10, Replicas: 3}

func TestTopicGroups(t *testing.T) {
	t.Parallel()
	if got := small.TopicGroups(5); !slices.Equal(got, []int{1, 3, 5}) {
		t.Fatalf("topic 5 on groups %v, want [1 3 5]", got)
	}
	if got := small.TopicGroups(0); !slices.Equal(got, []int{0, 2, 4}) {
		t.Fatalf("topic 0 on groups %v, want [0 2 4]", got)
	}
	// Every group registers the topics placed on it, each once.
	m := NewModel(small)
	for g, topics := range m.GroupTopics {
		if len(topics) != small.Topics*small.Replicas/small.Groups {
			t.Fatalf("group %d holds topics %v", g, topics)
		}
		for _, i := range topics {
			if !slices.Contains(small.TopicGroups(i), g) {
				t.Fatalf("group %d holds topic %d, which lives on %v", g, i, small.TopicGroups(i))
			}
		}
	}
	if g, ok := GroupOf(GroupName(42)); !ok || g != 42 {
		t.Fatalf("GroupOf(%q) = %d, %v", GroupName(42), g, ok)
	}
}

func TestRouteOfOneMaster(t *testing.T) {
	t.Parallel()
	m := NewModel(small)
	m.Register(2*1, 2)   // master of group 1
	m.Register(2*3+1, 2) // a slave alone writes no queue data
	b := m.Route(5)
	if b == nil {
		t.Fatal("topic 5: no route with its group 1 master registered")
	}
	r, err := body.DecodeTopicRoute(b)
	if err != nil {
		t.Fatal(err)
	}
	n := Queues(5, 2)
	if n != 8 {
		t.Fatalf("Queues(5, 2) = %d, want 8", n)
	}
	if len(r.QueueDatas) != 1 || r.QueueDatas[0] != (body.QueueData{BrokerName: "broker-001", ReadQueueNums: n, WriteQueueNums: n, Perm: 6}) {
		t.Fatalf("queue datas %+v", r.QueueDatas)
	}
	if len(r.BrokerDatas) != 1 || !slices.Equal(r.BrokerDatas[0].Addrs, []body.BrokerAddr{{ID: 0, Addr: "10.1.0.1:10911"}}) {
		t.Fatalf("broker datas %+v", r.BrokerDatas)
	}
	if m.Route(0) != nil {
		t.Fatalf("topic 0 (groups 0 2 4): route %s, want none", m.Route(0))
	}
	if got, want := m.Counts(), (Counts{BrokerGroups: 2, BrokerAddrs: 2, Clusters: 2, Topics: 5}); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
}

func TestRemoveLastMemberDropsQueues(t *testing.T) {
	t.Parallel()
	m := NewModel(small)
	m.Register(2*1, 1)
	m.Register(2*1+1, 1)
	m.Remove(2 * 1)
	// The slave keeps the group, and with it the queue data its master wrote.
	if m.Route(5) == nil {
		t.Fatal("topic 5 lost its route while the slave of group 1 is still there")
	}
	ci, err := body.DecodeClusterInfo(m.ClusterInfo())
	if err != nil {
		t.Fatal(err)
	}
	if Listed(ci, 2*1) || !Listed(ci, 2*1+1) {
		t.Fatalf("cluster info %+v: want the slave of group 1 alone", ci.Brokers)
	}
	m.Remove(2*1 + 1)
	if b := m.Route(5); b != nil {
		t.Fatalf("topic 5: route %s after group 1's last member left", b)
	}
	// Registering the slave again must not bring the old queue data back.
	m.Register(2*1+1, 1)
	if b := m.Route(5); b != nil {
		t.Fatalf("topic 5: route %s with only a slave registered", b)
	}
	if got := m.LiveAddrs(); len(got) != 1 || !got[Addr(1, 1)] {
		t.Fatalf("live %v, want only %s", got, Addr(1, 1))
	}
}
