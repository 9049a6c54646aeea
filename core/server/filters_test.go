// What a re-registration does to the broker's filter servers, as Java's
// processor decides it: RegisterBrokerBody starts with an empty list, so a
// body without filterServerList, and a registration without a body, clear
// them; only an explicit null, or a pre-3.0.11 broker (whose bare topic
// wrapper Java registers with a null list), leaves them as they were.

package server

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestReregistrationFilterServers(t *testing.T) {
	const wrapper = `{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"T1":{"perm":6,"readQueueNums":4,"topicName":"T1","writeQueueNums":4},"T2":{"perm":6,"readQueueNums":4,"topicName":"T2","writeQueueNums":4}}}`
	f := func(name string, version int32, second []byte, want string) {
		t.Helper()
		s, _ := startServer(t, testConfig(t))
		w := dialWire(t, s.Addr())
		reg := func(opaque, version int32, b []byte) {
			t.Helper()
			req := request(codec.RegisterBroker, opaque, "brokerName", "b1", "brokerAddr", "127.0.0.1:10911", "clusterName", "c1",
				"haServerAddr", "127.0.0.1:10912", "brokerId", "0", "enableActingMaster", "false")
			req.Version = version
			req.Body = b
			mustOK(t, w.Call(req), name)
		}
		reg(1, 479, []byte(`{"filterServerList":["127.0.0.1:40001"],"topicConfigSerializeWrapper":`+wrapper+`}`))
		reg(2, version, second)
		resp := mustOK(t, w.Call(request(codec.GetRouteInfoByTopic, 3, "topic", "T1")), name+": route")
		r, err := body.DecodeTopicRoute(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := "{}"
		if fs := r.FilterServerTable["127.0.0.1:10911"]; len(fs) > 0 {
			got = fs[0]
		}
		if got != want {
			t.Errorf("%s: filter servers %s after the re-registration, want %s (route %s)", name, got, want, resp.Body)
		}
	}
	f("no filterServerList key", 479, []byte(`{"topicConfigSerializeWrapper":`+wrapper+`}`), "{}")
	f("empty list", 479, []byte(`{"filterServerList":[],"topicConfigSerializeWrapper":`+wrapper+`}`), "{}")
	f("no body", 479, nil, "{}")
	f("a new list", 479, []byte(`{"filterServerList":["127.0.0.1:40002"],"topicConfigSerializeWrapper":`+wrapper+`}`), "127.0.0.1:40002")
	f("explicit null", 479, []byte(`{"filterServerList":null,"topicConfigSerializeWrapper":`+wrapper+`}`), "127.0.0.1:40001")
	f("pre-3.0.11 broker, bare wrapper", 36, []byte(wrapper), "127.0.0.1:40001")
	f("pre-3.0.11 broker, no body", 36, nil, "127.0.0.1:40001")
}
