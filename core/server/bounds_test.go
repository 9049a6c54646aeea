// bounds_test.go checks the size bounds at the wire: KV writes over the
// limits refused with a clear answer, replies that would not fit
// frameMaxLength answered with SYSTEM_ERROR instead, error answers that
// name no server path, and out-of-range run-time settings refused.

package server

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

// The attack: three 6 MiB values into ORDER_TOPIC_CONFIG, which every
// registration reply carries, made those replies 18.9 MB. With the default
// limits each is refused and the reply stays small. Any value over the
// default kvMaxValueBytes meets the same refusal: these are four times it,
// which a stored value would show in the reply as well as 6 MiB would.
func TestLargeKVValuesRefusedByDefault(t *testing.T) {
	cfg := testConfig(t)
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	big := strings.Repeat("broker-a:8;", (4*cfg.KVMaxValueBytes)/11)
	for i := int32(0); i < 3; i++ {
		resp := w.Call(request(codec.PutKVConfig, 1+i, "namespace", "ORDER_TOPIC_CONFIG", "key", "T"+string('0'+rune(i)), "value", big))
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "exceeds kvMaxValueBytes (65536)") {
			t.Fatalf("put %d: code %d remark %q", i, resp.Code, resp.Remark)
		}
	}
	resp, size, err := func() (*codec.Command, int, error) {
		w.Send(registerFrame(t, 9, "c1", "broker-a", "127.0.0.1:10911", 0, "T0", "T1"))
		return w.RecvSized()
	}()
	if err != nil || resp.Code != codec.Success || size > 1024 {
		t.Fatalf("registration reply: %v, %d bytes, err %v", resp, size, err)
	}
	if _, err := os.Stat(cfg.KVConfigPath); !os.IsNotExist(err) {
		t.Fatalf("refused puts wrote the KV file: %v", err)
	}
}

func TestKVKeyAndNamespaceLimits(t *testing.T) {
	cfg := testConfig(t)
	cfg.KVMaxKeyBytes = 16
	cfg.KVMaxValueBytes = 64
	cfg.KVMaxNamespaceBytes = 110
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	f := func(opaque int32, ns, key, value, want string) {
		t.Helper()
		resp := w.Call(request(codec.PutKVConfig, opaque, "namespace", ns, "key", key, "value", value))
		if want == "" {
			mustOK(t, resp, "put")
			return
		}
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, want) {
			t.Fatalf("put %q/%q: code %d remark %q, want %q", ns, key, resp.Code, resp.Remark, want)
		}
	}
	f(1, "ns", strings.Repeat("k", 17), "v", "key of 17 bytes exceeds kvMaxKeyBytes (16)")
	f(2, strings.Repeat("n", 17), "k", "v", "namespace name of 17 bytes exceeds kvMaxKeyBytes (16)")
	f(3, "ns", "k1", strings.Repeat("v", 40), "")
	f(4, "ns", "k2", strings.Repeat("v", 40), "")
	f(5, "ns", "k3", strings.Repeat("v", 40), "namespace ns would be")
	if resp := w.Call(request(codec.GetKVConfig, 6, "namespace", "ns", "key", "k3")); resp.Code != codec.QueryNotFound {
		t.Fatalf("refused put stored: %d", resp.Code)
	}
}

// A reply that would be larger than frameMaxLength is one the peer must
// refuse (a 5.3.3 broker closes its connection on it): it is answered with
// a SYSTEM_ERROR that says why instead.
func TestReplyOverFrameMaxLengthIsAnError(t *testing.T) {
	cfg := testConfig(t)
	cfg.ConfigStorePath = filepath.Join(t.TempDir(), "namesrv.properties")
	cfg.FrameMaxLength = 64 << 10
	cfg.MaxPendingRequestBytes = 64 << 20
	cfg.KVMaxValueBytes = 32 << 10
	s, logs := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	v := strings.Repeat("x", 30<<10)
	for i := int32(0); i < 3; i++ {
		mustOK(t, w.Call(request(codec.PutKVConfig, 1+i, "namespace", "ORDER_TOPIC_CONFIG", "key", "T"+string('0'+rune(i)), "value", v)), "put")
	}
	check := func(req *codec.Command, what string) {
		t.Helper()
		w.Send(req)
		resp, size, err := w.RecvSized()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if size > cfg.FrameMaxLength {
			t.Fatalf("%s: a %d-byte frame, over frameMaxLength %d", what, size, cfg.FrameMaxLength)
		}
		if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "over frameMaxLength (65536)") || len(resp.Body) != 0 {
			t.Fatalf("%s: code %d remark %q body %d bytes", what, resp.Code, resp.Remark, len(resp.Body))
		}
	}
	check(request(codec.GetKVListByNamespace, 10, "namespace", "ORDER_TOPIC_CONFIG"), "kv list")
	check(registerFrame(t, 11, "c1", "broker-a", "127.0.0.1:10911", 0, "T0", "T1"), "registration")
	// The registration itself was applied: only its reply could not go.
	if resp := w.Call(request(codec.GetRouteInfoByTopic, 12, "topic", "T0")); resp.Code != codec.Success {
		t.Fatalf("route after the registration: %d %q", resp.Code, resp.Remark)
	}
	// A route carrying an order-topic configuration of control bytes: sent
	// in the binary header they are 12000 bytes, in the route's JSON six
	// times that, more than the frame.
	ctl := request(codec.PutKVConfig, 13, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1", "value", strings.Repeat("\x01", 12000))
	ctl.SerializeType = codec.SerializeRocketMQ
	mustOK(t, w.Call(ctl), "binary put")
	mustOK(t, w.Call(withBody(request(codec.UpdateNamesrvConfig, 14), "orderMessageEnable=true\n")), "orderMessageEnable")
	check(request(codec.GetRouteInfoByTopic, 15, "topic", "T1"), "route")
	check(request(codec.GetKVConfig, 16, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1"), "kv get")
	if resp := w.Call(request(codec.GetRouteInfoByTopic, 17, "topic", "T0")); resp.Code != codec.Success {
		t.Fatalf("a route that fits: %d %q", resp.Code, resp.Remark)
	}
	if !strings.Contains(logs.String(), "response over frameMaxLength") {
		t.Fatalf("no log line:\n%s", logs)
	}
}

// A persistence failure is answered without the server's paths: the peer
// learns that the write failed, the log says where.
func TestPersistErrorsNameNoPath(t *testing.T) {
	dir := t.TempDir()
	kvDir, cfgDir := filepath.Join(dir, "kvdir"), filepath.Join(dir, "cfgdir")
	cfg := testConfig(t)
	cfg.KVConfigPath = filepath.Join(kvDir, "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(cfgDir, "namesrv.properties")
	s, logs := startServer(t, cfg)
	// Directories replaced by files: no write can succeed, even as root.
	for _, d := range []string{kvDir, cfgDir} {
		if err := os.WriteFile(d, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // before the shutdown, which flushes the store
			_ = os.Remove(d)
			_ = os.Mkdir(d, 0o755)
		})
	}
	w := dialWire(t, s.Addr())
	for i, req := range []*codec.Command{
		request(codec.PutKVConfig, 1, "namespace", "ns", "key", "k", "value", "v"),
		request(codec.DeleteKVConfig, 2, "namespace", "ns", "key", "k"),
		withBody(request(codec.UpdateNamesrvConfig, 3), "orderMessageEnable=true\n"),
	} {
		resp := w.Call(req)
		if resp.Code != codec.SystemError {
			t.Fatalf("request %d: code %d remark %q", i, resp.Code, resp.Remark)
		}
		if strings.Contains(resp.Remark, dir) || strings.Contains(resp.Remark, "/") {
			t.Fatalf("request %d: remark %q names a path", i, resp.Remark)
		}
	}
	if !strings.Contains(logs.String(), kvDir) || !strings.Contains(logs.String(), cfgDir) {
		t.Fatalf("the log does not say where:\n%s", logs)
	}
}

func withBody(c *codec.Command, b string) *codec.Command {
	c.Body = []byte(b)
	return c
}

// The update that made every route query answer "not ready" forever, and
// persisted it: refused, nothing applied, nothing written.
func TestUpdateConfigOutOfRangeRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.ConfigStorePath = filepath.Join(t.TempDir(), "namesrv.properties")
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	resp := w.Call(withBody(request(codec.UpdateNamesrvConfig, 1), "needWaitForService=true\nwaitSecondsForService=2147483647\n"))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "waitSecondsForService") || !strings.Contains(resp.Remark, "want 0..600") {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
	if _, err := os.Stat(cfg.ConfigStorePath); !os.IsNotExist(err) {
		t.Fatalf("refused update written: %v", err)
	}
	if c := s.conf(); c.NeedWaitForService || c.WaitSecondsForService != 45 {
		t.Fatalf("refused update applied: %v %d", c.NeedWaitForService, c.WaitSecondsForService)
	}
}

// heartbeatTimeoutMillis near 2^63 overflowed the expiry and the broker
// was evicted at the next scan, connected or not; now it is capped at
// maxHeartbeatTimeoutMillis.
func TestHugeHeartbeatTimeoutIsCapped(t *testing.T) {
	var now atomic.Int64
	now.Store(1_700_000_000_000)
	s, _ := startClocked(t, now.Load, nil)
	w := dialWire(t, s.Addr())
	req := registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")
	req.SetExt("heartbeatTimeoutMillis", "9223372036854775807")
	mustOK(t, w.Call(req), "register")
	now.Add(1000)
	s.scanExpired()
	if resp := w.Call(request(codec.GetRouteInfoByTopic, 2, "topic", "T1")); resp.Code != codec.Success {
		t.Fatalf("evicted at once: %d %q", resp.Code, resp.Remark)
	}
	now.Add(s.cfg.MaxHeartbeatTimeoutMillis)
	s.scanExpired()
	// The expired broker's connection is closed with it: ask on another.
	if resp := dialWire(t, s.Addr()).Call(request(codec.GetRouteInfoByTopic, 3, "topic", "T1")); resp.Code != codec.TopicNotExist {
		t.Fatalf("not expired after maxHeartbeatTimeoutMillis: %d", resp.Code)
	}
}

// A KV file over the limits (written by Java, or under larger limits)
// loads whole, with a warning: refusing to start or dropping entries would
// lose the operator's data.
func TestKVFileOverLimitsLoads(t *testing.T) {
	cfg := testConfig(t)
	big := strings.Repeat("b", 100<<10)
	if err := os.WriteFile(cfg.KVConfigPath, []byte(`{"configTable":{"ns":{"big":"`+big+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, logs := startServer(t, cfg)
	if !strings.Contains(logs.String(), "kv config loaded over its limits") || !strings.Contains(logs.String(), "kvMaxValueBytes") {
		t.Fatalf("no warning:\n%s", logs)
	}
	w := dialWire(t, s.Addr())
	if resp := w.Call(request(codec.GetKVConfig, 1, "namespace", "ns", "key", "big")); resp.Code != codec.Success {
		t.Fatalf("get: %d %q", resp.Code, resp.Remark)
	}
	mustOK(t, w.Call(request(codec.DeleteKVConfig, 2, "namespace", "ns", "key", "big")), "delete")
}

// Request strings reach the log capped whatever logger the server is
// given: one 15.7 MB frame made a single 60 MiB line.
func TestLoggedRequestStringsAreCapped(t *testing.T) {
	s, logs := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	key := strings.Repeat("k", 1<<20)
	resp := w.Call(request(codec.PutKVConfig, 1, "namespace", "ns", "key", key, "value", "v"))
	if resp.Code != codec.SystemError {
		t.Fatalf("a 1 MiB key: %d", resp.Code)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 8<<10 {
			t.Fatalf("a %d-byte log line: %.300s", len(line), line)
		}
	}
	if !strings.Contains(logs.String(), "...(1048576 bytes)") {
		t.Fatalf("the key is not in the log, capped:\n%.2000s", logs)
	}
}
