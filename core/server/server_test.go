// server_test.go drives the server over real loopback connections: dispatch,
// response rules, oneway, broken frames, panics, idle and closing
// connections.
package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/config"
)

func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	return cfg
}

// lockedBuffer collects log output so tests can assert on the lines a
// refusal writes; netpoll goroutines write while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
func startHooked(t *testing.T, cfg *config.Config, setup func(*Server)) (*Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	s := newStarted(t, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, logs
}

func startServer(t *testing.T, cfg *config.Config, extra map[int32]handler) (*Server, *lockedBuffer) {
	t.Helper()
	return startHooked(t, cfg, func(s *Server) { s.extraHandlers = extra })
}

// wire is a bare connection speaking frames, so tests control every byte.
type wire struct {
	t  *testing.T
	nc net.Conn
}

func dialWire(t *testing.T, addr string) *wire {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &wire{t: t, nc: nc}
}

func (w *wire) sendRaw(b []byte) {
	w.t.Helper()
	if _, err := w.nc.Write(b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func (w *wire) send(c *codec.Command) {
	w.t.Helper()
	w.sendRaw(codec.AppendFrame(nil, c))
}

// recv reads one frame; the returned command owns its memory.
func (w *wire) recv() (*codec.Command, error) {
	w.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var prefix [4]byte
	if _, err := io.ReadFull(w.nc, prefix[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(prefix[:])
	frame := make([]byte, n)
	if _, err := io.ReadFull(w.nc, frame); err != nil {
		return nil, err
	}
	c := new(codec.Command)
	if err := codec.Decode(frame, c); err != nil {
		return nil, err
	}
	return c, nil
}

func (w *wire) mustRecv() *codec.Command {
	w.t.Helper()
	c, err := w.recv()
	if err != nil {
		w.t.Fatalf("recv: %v", err)
	}
	return c
}

// call sends req and returns the response with the same opaque.
func (w *wire) call(req *codec.Command) *codec.Command {
	w.t.Helper()
	w.send(req)
	resp := w.mustRecv()
	if resp.Opaque != req.Opaque {
		w.t.Fatalf("response opaque %d, want %d", resp.Opaque, req.Opaque)
	}
	return resp
}

// closedByPeer reports whether the server closed the connection.
func (w *wire) closedByPeer() bool {
	w.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := w.nc.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

func request(code, opaque int32, ext ...string) *codec.Command {
	c := &codec.Command{Code: code, Opaque: opaque, Version: 479, Language: 9}
	c.HasExt = true
	for i := 0; i+1 < len(ext); i += 2 {
		c.SetExt(ext[i], ext[i+1])
	}
	return c
}

func TestUnknownCodeAnswersNotSupported(t *testing.T) {
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	resp := w.call(request(9999, 7))
	if resp.Code != codec.RequestCodeNotSupported || resp.Remark != " request type 9999 not supported" {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	if !resp.IsResponse() || resp.Version != codec.ServerVersion {
		t.Fatalf("flag %d version %d", resp.Flag, resp.Version)
	}
}

func TestHandlerPanicBecomesSystemErrorAndServerKeepsServing(t *testing.T) {
	extra := map[int32]handler{7777: func(*Server, *conn, *codec.Command, *codec.Command) error { panic("boom") }}
	s, logs := startServer(t, testConfig(t), extra)
	w := dialWire(t, s.Addr())
	resp := w.call(request(7777, 1))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "boom") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	// Same connection still works.
	resp = w.call(request(codec.GetBrokerClusterInfo, 2))
	if resp.Code != codec.Success || string(resp.Body) != `{"brokerAddrTable":{},"clusterAddrTable":{}}` {
		t.Fatalf("after panic: code %d body %s", resp.Code, resp.Body)
	}
	if !strings.Contains(logs.String(), "handler panic") {
		t.Fatalf("no log line for the panic: %s", logs.String())
	}
}

func TestOnewayTakesEffectWithoutResponse(t *testing.T) {
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	put := request(codec.PutKVConfig, 1, "namespace", "ns", "key", "k", "value", "v")
	put.Flag = codec.FlagOneway
	w.send(put)
	// The next response on the connection must be the GET's, carrying the
	// value the oneway PUT stored.
	resp := w.call(request(codec.GetKVConfig, 2, "namespace", "ns", "key", "k"))
	if v, _ := resp.ExtValue("value"); resp.Code != codec.Success || v != "v" {
		t.Fatalf("got code %d value %q", resp.Code, v)
	}
}

func TestResponseFlaggedFrameIsIgnored(t *testing.T) {
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	stray := request(codec.GetBrokerClusterInfo, 1)
	stray.Flag = codec.FlagResponse
	w.send(stray)
	resp := w.call(request(codec.GetBrokerClusterInfo, 2))
	if resp.Code != codec.Success {
		t.Fatalf("code %d", resp.Code)
	}
}

func TestBinaryRequestGetsBinaryResponse(t *testing.T) {
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	req := request(codec.GetRouteInfoByTopic, 3, "topic", "Nope")
	req.SerializeType = codec.SerializeRocketMQ
	resp := w.call(req)
	if resp.SerializeType != codec.SerializeRocketMQ {
		t.Fatalf("answered in serialize type %d", resp.SerializeType)
	}
	if resp.Code != codec.TopicNotExist || !strings.HasPrefix(resp.Remark, "No topic route info in name server for the topic: Nope\n") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestMissingHeaderFieldIsAClearError(t *testing.T) {
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	resp := w.call(request(codec.GetRouteInfoByTopic, 1))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "topic") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.call(request(codec.RegisterBroker, 2, "brokerName", "b", "clusterName", "c", "brokerId", "0"))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "brokerAddr") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.call(request(codec.RegisterBroker, 3, "brokerName", "b", "clusterName", "c", "brokerAddr", "1.2.3.4:5", "brokerId", "x"))
	if resp.Code != codec.SystemError || !strings.Contains(resp.Remark, "brokerId") {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
	resp = w.call(request(codec.PutKVConfig, 4, "key", "k"))
	if resp.Code != codec.SystemError || resp.Remark != "namespace or key is null" {
		t.Fatalf("got code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestBrokenFramesCloseOnlyThatConnection(t *testing.T) {
	s, logs := startServer(t, testConfig(t), nil)
	good := dialWire(t, s.Addr())
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	json := []byte(`{"code":106,"flag":0,"opaque":1}`)
	f := func(name string, frame []byte, reason string) {
		t.Run(name, func(t *testing.T) {
			w := dialWire(t, s.Addr())
			w.sendRaw(frame)
			if !w.closedByPeer() {
				t.Fatalf("connection left open")
			}
			if !strings.Contains(logs.String(), reason) {
				t.Fatalf("no log line with reason %q:\n%s", reason, logs.String())
			}
			// Another connection does not notice.
			if resp := good.call(request(codec.GetBrokerClusterInfo, 5)); resp.Code != codec.Success {
				t.Fatalf("good connection got %d", resp.Code)
			}
		})
	}
	f("length over the frame limit", cat(be32(1<<30), be32(4)), "frame_too_large")
	f("length shorter than the header word", cat(be32(2), []byte{0, 0}), "frame_too_short")
	f("header length beyond the frame", cat(be32(4+uint32(len(json))), be32(uint32(len(json))+10), json), "bad_header_length")
	f("unknown serialize type", cat(be32(4+uint32(len(json))), be32(7<<24|uint32(len(json))), json), "unknown_serialize_type")
	bad := []byte(`{"code":106,"flag":`)
	f("truncated json header", cat(be32(4+uint32(len(bad))), be32(uint32(len(bad))), bad), "bad_json_header")
	bin := []byte{0, 106, 0, 1, 223, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0, 0}
	f("binary remark length beyond header", cat(be32(4+uint32(len(bin))), be32(1<<24|uint32(len(bin))), bin), "bad_binary_header")
}

// A frame announced at the limit but never completed must not pin the
// connection's goroutine forever: the read gives up at the idle timeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	cfg := testConfig(t)
	s, _ := startServer(t, cfg, nil)
	w := dialWire(t, s.Addr())
	w.call(request(codec.GetBrokerClusterInfo, 1))
	// Age every connection past the idle limit, then run the check the
	// one-second ticker runs.
	for _, c := range s.snapshotConns() {
		c.lastActive.Store(s.now.Load() - int64(cfg.ServerChannelMaxIdleTimeSeconds)*1000 - 1)
	}
	s.tick()
	if !w.closedByPeer() {
		t.Fatal("idle connection left open")
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
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	for i, name := range []string{"broker-a", "broker-b"} {
		resp := w.call(registerFrame(t, int32(i+1), "c1", name, "127.0.0.1:1091"+string(rune('1'+i)), 0, "T1", "T2"))
		if resp.Code != codec.Success {
			t.Fatalf("register %s: %d %s", name, resp.Code, resp.Remark)
		}
	}
	r, ok := s.Routes().Route("T1")
	if !ok || len(r.BrokerDatas) != 2 {
		t.Fatalf("route before close: %+v", r)
	}
	w.nc.Close()
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
	s, _ := startServer(t, testConfig(t), nil)
	w := dialWire(t, s.Addr())
	req := registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")
	req.SetExt("bodyCrc32", "12345")
	resp := w.call(req)
	if resp.Code != codec.SystemError || resp.Remark != "crc32 not match" {
		t.Fatalf("got %d %q", resp.Code, resp.Remark)
	}
	if _, ok := s.Routes().Route("T1"); ok {
		t.Fatal("refused registration changed the routes")
	}
}

func TestKVOverTheWire(t *testing.T) {
	cfg := testConfig(t)
	s, _ := startServer(t, cfg, nil)
	w := dialWire(t, s.Addr())
	if resp := w.call(request(codec.PutKVConfig, 1, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1", "value", "broker-a:4")); resp.Code != codec.Success || resp.HasExt {
		t.Fatalf("put: %d ext=%v", resp.Code, resp.HasExt)
	}
	resp := w.call(request(codec.GetKVListByNamespace, 2, "namespace", "ORDER_TOPIC_CONFIG"))
	if resp.Code != codec.Success || string(resp.Body) != `{"table":{"T1":"broker-a:4"}}` {
		t.Fatalf("list: %d %s", resp.Code, resp.Body)
	}
	// The registration reply carries the order config table.
	resp = w.call(registerFrame(t, 3, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"))
	if resp.Code != codec.Success || string(resp.Body) != `{"table":{"T1":"broker-a:4"}}` || !resp.HasExt || len(resp.Ext) != 0 {
		t.Fatalf("register: %d %s ext=%v %v", resp.Code, resp.Body, resp.HasExt, resp.Ext)
	}
	if resp := w.call(request(codec.DeleteKVConfig, 4, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1")); resp.Code != codec.Success {
		t.Fatalf("delete: %d", resp.Code)
	}
	resp = w.call(request(codec.GetKVConfig, 5, "namespace", "ORDER_TOPIC_CONFIG", "key", "T1"))
	if resp.Code != codec.QueryNotFound || resp.Remark != "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T1" || !resp.HasExt {
		t.Fatalf("get after delete: %d %q", resp.Code, resp.Remark)
	}
	resp = w.call(request(codec.GetKVListByNamespace, 6, "namespace", "nope"))
	if resp.Code != codec.QueryNotFound || resp.Remark != "No config item, Namespace: nope" {
		t.Fatalf("list missing: %d %q", resp.Code, resp.Remark)
	}
}
