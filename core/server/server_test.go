// server_test.go drives the NameServer over real loopback connections: its
// dispatch table and reply rules, oneway requests, header fields, KV, and
// the brokers a closed connection takes with it.

package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	return cfg
}

// newStarted creates a server, lets setup set its hooks and starts it; the
// caller arranges its shutdown.
func newStarted(t *testing.T, cfg *config.Config, log *slog.Logger, setup func(*Server)) *Server {
	t.Helper()
	s, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// startHooked starts a server after setup has set its hooks, so they are in
// place before any connection exists.
func startHooked(t *testing.T, cfg *config.Config, setup func(*Server)) (*Server, *remotingtest.Logs) {
	t.Helper()
	logs := &remotingtest.Logs{}
	s := newStarted(t, cfg, logs.Logger(), setup)
	t.Cleanup(func() {
		// The deadline bounds a hang, it is no timing assertion: a server
		// with many connections shuts down slowly on a loaded machine.
		ctx, cancel := context.WithTimeout(context.Background(), remotingtest.Hang)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, logs
}

func startServer(t *testing.T, cfg *config.Config) (*Server, *remotingtest.Logs) {
	t.Helper()
	return startHooked(t, cfg, nil)
}

// dialWire and request are remotingtest's.
func dialWire(t *testing.T, addr string) *remotingtest.Wire { return remotingtest.Dial(t, addr) }

var request = remotingtest.Request

func TestUnknownCodeAnswersNotSupported(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	resp := w.Call(request(9999, 7))
	if resp.Code != codec.RequestCodeNotSupported || resp.Remark != " request type 9999 not supported" {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	if !resp.IsResponse() || resp.Version != codec.ServerVersion {
		t.Fatalf("flag %d version %d", resp.Flag, resp.Version)
	}
}

func TestOnewayTakesEffectWithoutResponse(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	put := request(codec.PutKVConfig, 1, "namespace", "ns", "key", "k", "value", "v")
	put.Flag = codec.FlagOneway
	w.Send(put)
	// The next response on the connection must be the GET's, carrying the
	// value the oneway PUT stored.
	resp := w.Call(request(codec.GetKVConfig, 2, "namespace", "ns", "key", "k"))
	if v, _ := resp.ExtValue("value"); resp.Code != codec.Success || v != "v" {
		t.Fatalf("got code %d value %q", resp.Code, v)
	}
}

func TestBinaryRequestGetsBinaryResponse(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	req := request(codec.GetRouteInfoByTopic, 3, "topic", "Nope")
	req.SerializeType = codec.SerializeRocketMQ
	resp := w.Call(req)
	if resp.SerializeType != codec.SerializeRocketMQ {
		t.Fatalf("answered in serialize type %d", resp.SerializeType)
	}
	if resp.Code != codec.TopicNotExist || !strings.HasPrefix(resp.Remark, "No topic route info in name server for the topic: Nope\n") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestMissingHeaderFieldIsAClearError(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	resp := w.Call(request(codec.GetRouteInfoByTopic, 1))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "topic") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.Call(request(codec.RegisterBroker, 2, "brokerName", "b", "clusterName", "c", "brokerId", "0"))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "brokerAddr") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.Call(request(codec.RegisterBroker, 3, "brokerName", "b", "clusterName", "c", "brokerAddr", "1.2.3.4:5", "brokerId", "x"))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "brokerId") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.Call(request(codec.PutKVConfig, 4, "key", "k"))
	if resp.Code != codec.SystemError || resp.Remark != "namespace or key is null" {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
}

func registerFrame(t *testing.T, opaque int32, cluster, name, addr string, id int64, topics ...string) *codec.Command {
	t.Helper()
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1700000000000}}
	for _, tp := range topics {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: tp, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
	}
	b, err := body.EncodeRegisterBroker(rb, false, 479)
	if err != nil {
		t.Fatal(err)
	}
	req := request(codec.RegisterBroker, opaque, "brokerName", name, "brokerAddr", addr, "clusterName", cluster,
		"haServerAddr", "", "brokerId", "0", "enableActingMaster", "false", "compressed", "false", "bodyCrc32", "0")
	if id != 0 {
		req.SetExt("brokerId", "1")
	}
	req.Body = b
	return req
}

func TestConnectionCloseDropsEveryBrokerRegisteredOverIt(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	for i, name := range []string{"broker-a", "broker-b"} {
		resp := w.Call(registerFrame(t, int32(i+1), "c1", name, "127.0.0.1:1091"+string(rune('1'+i)), 0, "T1", "T2"))
		if resp.Code != codec.Success {
			t.Fatalf("register %s: %d %s", name, resp.Code, resp.Remark)
		}
	}
	r, ok := s.Routes().Route("T1")
	if !ok || len(r.BrokerDatas) != 2 {
		t.Fatalf("route before close: %+v", r)
	}
	w.NC.Close()
	// The close callback runs on netpoll's goroutine; wait for its effect.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := s.Routes().Route("T1"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("routes of the closed connection's brokers still served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRegisterCRCMismatchIsRefused(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	req := registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")
	req.SetExt("bodyCrc32", "12345")
	resp := w.Call(req)
	if resp.Code != codec.SystemError || resp.Remark != "crc32 not match" {
		t.Fatalf("got %d %q", resp.Code, resp.Remark)
	}
	if _, ok := s.Routes().Route("T1"); ok {
		t.Fatal("refused registration changed the routes")
	}
}

func TestKVOverTheWire(t *testing.T) {
	cfg := testConfig(t)
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	if resp := w.Call(request(codec.PutKVConfig, 1, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1", "value", "broker-a:4")); resp.Code != codec.Success || resp.HasExt {
		t.Fatalf("put: %d ext=%v", resp.Code, resp.HasExt)
	}
	resp := w.Call(request(codec.GetKVListByNamespace, 2, "namespace", "ORDER_TOPIC_CONFIG"))
	if resp.Code != codec.Success || string(resp.Body) != `{"table":{"T1":"broker-a:4"}}` {
		t.Fatalf("list: %d %s", resp.Code, resp.Body)
	}
	// The registration reply carries the order config table.
	resp = w.Call(registerFrame(t, 3, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"))
	if resp.Code != codec.Success || string(resp.Body) != `{"table":{"T1":"broker-a:4"}}` || !resp.HasExt || len(resp.Ext) != 0 {
		t.Fatalf("register: %d %s ext=%v %v", resp.Code, resp.Body, resp.HasExt, resp.Ext)
	}
	if resp := w.Call(request(codec.DeleteKVConfig, 4, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1")); resp.Code != codec.Success {
		t.Fatalf("delete: %d", resp.Code)
	}
	resp = w.Call(request(codec.GetKVConfig, 5, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1"))
	if resp.Code != codec.QueryNotFound || resp.Remark != "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T1" || !resp.HasExt {
		t.Fatalf("get after delete: %d %q", resp.Code, resp.Remark)
	}
	resp = w.Call(request(codec.GetKVListByNamespace, 6, "namespace", "nope"))
	if resp.Code != codec.QueryNotFound || resp.Remark != "No config item, Namespace: nope" {
		t.Fatalf("list missing: %d %q", resp.Code, resp.Remark)
	}
}
