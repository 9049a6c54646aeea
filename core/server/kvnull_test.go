// PUT_KV_CONFIG without a value, found by the wire differential suite.

package server

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
)

// Java stores a null value: the namespace exists from then on, so 219
// lists it empty and registration replies carry its (empty) table. rocketns
// used to treat the put as a delete, which creates nothing: 219 answered 22
// and registrations got no body.
func TestPutKVWithoutValueCreatesTheNamespace(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	mustOK(t, w.Call(request(codec.PutKVConfig, 1, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1")), "put without value")
	if resp := w.Call(request(codec.GetKVConfig, 2, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1")); resp.Code != codec.QueryNotFound {
		t.Fatalf("get: %d %q", resp.Code, resp.Remark)
	}
	if resp := mustOK(t, w.Call(request(codec.GetKVListByNamespace, 3, "namespace", "ORDER_TOPIC_CONFIG")), "list"); string(resp.Body) != `{"table":{}}` {
		t.Fatalf("list body %s", resp.Body)
	}
	resp := mustOK(t, w.Call(registerFrame(t, 4, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")), "register")
	if string(resp.Body) != `{"table":{}}` {
		t.Fatalf("registration reply body %q, want the empty ORDER_TOPIC_CONFIG table", resp.Body)
	}
}
