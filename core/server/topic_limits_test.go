// topic_limits_test.go checks maxTopicsPerBroker and maxTopics over the
// wire: a registration past either is refused with a remark naming the
// setting, and the routes already held are untouched.

package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestRegistrationTopicLimits(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxTopicsPerBroker = 1000
	cfg.MaxTopics = 1500
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	register := func(broker, prefix string, topics int, compressed bool, opaque int32) *codec.Command {
		t.Helper()
		rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1700000000000}}
		for i := 0; i < topics; i++ {
			rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: fmt.Sprintf("%s%05d", prefix, i), ReadQueueNums: 4,
				WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
		}
		b, err := body.EncodeRegisterBroker(rb, compressed, 479)
		if err != nil {
			t.Fatal(err)
		}
		req := request(codec.RegisterBroker, opaque, "brokerName", broker, "brokerAddr", "10.0.0.1:1"+broker, "clusterName", "c",
			"haServerAddr", "", "brokerId", "0", "enableActingMaster", "false", "compressed", fmt.Sprint(compressed), "bodyCrc32", "0")
		req.Body = b
		return w.Call(req)
	}
	route := func(topic string) int32 {
		return w.Call(request(codec.GetRouteInfoByTopic, 99, "topic", topic)).Code
	}
	for i, compressed := range []bool{true, false} {
		r := register("9", "X", 1001, compressed, int32(10+i))
		if r.Code != codec.SystemError || !strings.Contains(r.Remark, "1001 topics") || !strings.Contains(r.Remark, "maxTopicsPerBroker") {
			t.Fatalf("1001 topics, compressed %v: code %d %q", compressed, r.Code, r.Remark)
		}
	}
	if r := register("1", "A", 1000, true, 1); r.Code != codec.Success {
		t.Fatalf("1000 topics: code %d %q", r.Code, r.Remark)
	}
	r := register("2", "B", 1000, true, 2)
	if r.Code != codec.SystemError || !strings.Contains(r.Remark, "at most 1500 topics (maxTopics)") {
		t.Fatalf("past maxTopics: code %d %q", r.Code, r.Remark)
	}
	if route("B00000") != codec.TopicNotExist || route("A00999") != codec.Success {
		t.Fatal("a refused registration changed the routes")
	}
	// Topics the table holds cost nothing: b may serve a's.
	if r := register("2", "A", 1000, false, 3); r.Code != codec.Success {
		t.Fatalf("shared topics: code %d %q", r.Code, r.Remark)
	}
}

// A broker whose registration is refused for its topics (past
// maxTopicsPerBroker, or past maxTopics) is still alive: the refusal
// refreshes its liveness as a heartbeat does, so it keeps its routes while
// it retries. The answer stays the refusal it was (SYSTEM_ERROR naming the
// setting), which a Java broker logs before it registers again.
func TestTopicRefusalKeepsTheBrokerAlive(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxTopicsPerBroker = 3
	cfg.MaxTopics = 4
	var now atomic.Int64
	now.Store(1_700_000_000_000)
	s, _ := startClockedWith(t, cfg, now.Load, nil)
	w, q := dialWire(t, s.Addr()), dialWire(t, s.Addr()) // q asks for routes
	register := func(opaque int32, name, addr string, topics ...string) *codec.Command {
		req := registerFrame(t, opaque, "c1", name, addr, 0, topics...)
		req.SetExt("heartbeatTimeoutMillis", "10000")
		return w.Call(req)
	}
	mustOK(t, register(1, "broker-a", "127.0.0.1:10911", "T1", "T2"), "register broker-a")
	mustOK(t, w.Call(registerFrame(t, 2, "c1", "broker-x", "127.0.0.1:10921", 0, "X1", "X2")), "register broker-x") // 120 s
	for i, c := range []struct {
		topics []string
		remark string
	}{
		{[]string{"T1", "T2", "T3"}, "(maxTopics)"},
		{[]string{"T1", "T2", "T3", "T4"}, "(maxTopicsPerBroker)"},
		{[]string{"T1", "T2", "T3", "T4"}, "(maxTopicsPerBroker)"},
		{[]string{"T1", "T2", "T3"}, "(maxTopics)"},
	} {
		now.Add(6000)
		r := register(int32(10+i), "broker-a", "127.0.0.1:10911", c.topics...)
		if r.Code != codec.SystemError || !strings.Contains(r.Remark, c.remark) {
			t.Fatalf("%v: code %d %q, want SYSTEM_ERROR naming %s", c.topics, r.Code, r.Remark, c.remark)
		}
		s.scanExpired()
		got := q.Call(request(codec.GetRouteInfoByTopic, int32(20+i), "topic", "T1"))
		if got.Code != codec.Success || !strings.Contains(string(got.Body), "127.0.0.1:10911") {
			t.Fatalf("%d s after broker-a's last accepted registration: route T1 code %d %q %s", 6*(i+1), got.Code, got.Remark, got.Body)
		}
	}
}

// One host cannot take all of maxTopics: registrations from 127.0.0.2
// bring topics up to its maxTopicsPerSource and are refused past it, with a
// remark naming the setting and a count in the metrics, while a broker on
// another host still adds a topic beside its routes.
func TestTopicQuotaPerSourceOverTheWire(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxTopicsPerBroker = 1000
	cfg.MaxTopics = 2000
	cfg.MaxTopicsPerSource = 1000
	cfg.AdminListen = "127.0.0.1:0"
	s, _ := startServer(t, cfg)
	squatter, legit := dialFrom(t, "127.0.0.2", s.Addr()), dialFrom(t, "127.0.0.1", s.Addr())
	topics := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%05d", prefix, i)
		}
		return out
	}
	mustOK(t, legit.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")), "register broker-a")
	mustOK(t, squatter.Call(registerFrame(t, 2, "c1", "s1", "127.0.0.2:1", 0, topics("S1_", 1000)...)), "1000 topics from one host")
	r := squatter.Call(registerFrame(t, 3, "c1", "s2", "127.0.0.2:2", 0, topics("S2_", 998)...))
	if r.Code != codec.SystemError || !strings.Contains(r.Remark, "(maxTopicsPerSource)") || !strings.Contains(r.Remark, "127.0.0.2") {
		t.Fatalf("998 more topics from the same host: code %d %q", r.Code, r.Remark)
	}
	mustOK(t, legit.Call(registerFrame(t, 4, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2", "T3")), "broker-a adds T3")
	for _, topic := range []string{"T1", "T3"} {
		if got := legit.Call(request(codec.GetRouteInfoByTopic, 5, "topic", topic)); got.Code != codec.Success {
			t.Fatalf("route %s: code %d %q", topic, got.Code, got.Remark)
		}
	}
	if got := scrape(t, s)[`rocketns_registrations_refused_total{reason="topic_quota"}`]; got != 1 {
		t.Fatalf("topic quota refusals counted: %v, want 1", got)
	}
}
