// bounds_test.go checks that no string longer than MaxFieldBytes reaches
// the replicated state or the liveness table.

package controller

import (
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

func TestLongFieldsAreNotStored(t *testing.T) {
	s := NewState()
	long := strings.Repeat("x", MaxFieldBytes+1)
	fits := strings.Repeat("y", MaxFieldBytes)
	apply := func(cluster, name, code string) Decision {
		id := int64(1)
		return s.ApplyBrokerID(ApplyBrokerIDRequest{ClusterName: &cluster, BrokerName: &name, BrokerID: &id, CheckCode: &code}, Env{})
	}
	for _, d := range []Decision{
		apply(long, "b", "127.0.0.1:1;1"),
		apply("c", long, "127.0.0.1:1;1"),
		apply("c", "b", long),
	} {
		if d.Reply.Code != codec.SystemError || d.Bound != BoundFieldSize || len(d.Events) != 0 ||
			!strings.Contains(d.Reply.Remark, "bytes, at most 256") {
			t.Fatalf("a long field: %+v", d)
		}
	}
	d := apply("c", fits, "127.0.0.1:1;1")
	if d.Reply.Code != codec.Success || len(d.Events) != 1 {
		t.Fatalf("a name of MaxFieldBytes: %+v", d)
	}
	s.Apply(d.Events...)
	cluster, id := "c", int64(1)
	d = s.RegisterBroker(RegisterBrokerRequest{ClusterName: &cluster, BrokerName: &fits, BrokerID: &id, BrokerAddress: &long}, Env{})
	if d.Reply.Code != codec.SystemError || d.Bound != BoundFieldSize || len(d.Events) != 0 {
		t.Fatalf("1003 to a long address: %+v", d)
	}

	l := NewLiveness()
	for _, hb := range []Heartbeat{
		{ClusterName: long, BrokerName: "b", BrokerID: 1, HasBrokerID: true},
		{ClusterName: "c", BrokerName: long, BrokerID: 1, HasBrokerID: true},
		{ClusterName: "c", BrokerName: "b", BrokerAddr: long, BrokerID: 1, HasBrokerID: true},
	} {
		if r := l.Record(&hb, Origin{Conn: 1}, 1000); r != HeartbeatTooLong {
			t.Fatalf("a heartbeat with a long field: %v", r)
		}
	}
	if l.Len() != 0 {
		t.Fatalf("%d entries recorded", l.Len())
	}
}
