// peer_test.go drives the route snapshot's peer copy: the code that
// answers the table, its guards and its frame bound, and a cold server
// that copies another's table before its port opens, or starts cold
// with the reason when no peer gives it one.

package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/routesnap"
)

// snapshotOf asks w for the route table.
func snapshotOf(w *remotingtest.Wire, opaque int32) *codec.Command {
	return w.Call(request(codec.GetRouteSnapshot, opaque))
}

func TestRouteSnapshotCodeAnswersTheTable(t *testing.T) {
	s, logs := startServer(t, warmConfig(t))
	registerTwo(t, s)
	resp := snapshotOf(dialWire(t, s.Addr()), 1)
	wantCode(t, "snapshot", resp, codec.Success)
	snap, h, err := routesnap.Decode(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Brokers) != 3 || len(snap.Topics) != 3 || h.TakenAt == 0 {
		t.Fatalf("%d brokers, %d topics, taken at %d", len(snap.Brokers), len(snap.Topics), h.TakenAt)
	}
	if !strings.Contains(logs.String(), "route table copied by a peer") {
		t.Fatalf("no log line for the copy:\n%s", logs.String())
	}
}

// With adminAllowCIDRs, only the admin networks may copy the table.
func TestRouteSnapshotCodeBehindAdminAllowCIDRs(t *testing.T) {
	cfg := warmConfig(t)
	cfg.AdminAllowCIDRs = "127.0.0.2"
	s, _ := startServer(t, cfg)
	resp := snapshotOf(dialFrom(t, "127.0.0.1", s.Addr()), 1)
	wantCode(t, "from outside", resp, codec.NoPermission)
	if !strings.Contains(resp.Remark, "adminAllowCIDRs") || len(resp.Body) != 0 {
		t.Fatalf("refusal %q with %d body bytes", resp.Remark, len(resp.Body))
	}
	wantCode(t, "from inside", snapshotOf(dialFrom(t, "127.0.0.2", s.Addr()), 2), codec.Success)
}

// With signatures on, a readonly or admin account may copy the table; an
// unsigned request or a broker account may not.
func TestRouteSnapshotCodeSigned(t *testing.T) {
	s, _ := startAuthServer(t, authConfig(t))
	w := dialWire(t, s.Addr())
	wantCode(t, "unsigned", snapshotOf(w, 1), codec.NoPermission)
	wantCode(t, "broker account", w.Call(signedBy(request(codec.GetRouteSnapshot, 2), "broker-key", "broker-secret")), codec.NoPermission)
	wantCode(t, "readonly account", w.Call(signedBy(request(codec.GetRouteSnapshot, 3), "reader-key", "reader-secret")), codec.Success)
	wantCode(t, "admin account", w.Call(signedBy(request(codec.GetRouteSnapshot, 4), "admin-key", "admin-secret")), codec.Success)
}

// A table whose encoding passes frameMaxLength is refused with the
// reason, in a small frame, never sent as a frame the peer would refuse.
func TestRouteSnapshotCodeOverFrameMaxLength(t *testing.T) {
	cfg := warmConfig(t)
	cfg.FrameMaxLength = topicListHeadroom + 512 // 512 bytes for the table
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())
	topics := make([]string, 100)
	for i := range topics {
		topics[i] = "a-topic-with-a-long-enough-name-" + string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	wantCode(t, "register", w.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, topics...)), codec.Success)
	w.Send(request(codec.GetRouteSnapshot, 2))
	resp, size, err := w.RecvSized()
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "snapshot", resp, codec.SystemError)
	if !strings.Contains(resp.Remark, "does not fit a") || !strings.Contains(resp.Remark, "frameMaxLength") || size > 1024 {
		t.Fatalf("refusal %q in a %d-byte frame", resp.Remark, size)
	}
	// The connection stays usable.
	wantCode(t, "route after", w.Call(request(codec.GetRouteInfoByTopic, 3, "topic", topics[0])), codec.Success)
}

// peerConfig is a fresh server's configuration (no snapshot file) that
// copies from peers.
func peerConfig(t *testing.T, peers ...string) *config.Config {
	cfg := warmConfig(t)
	cfg.RouteSnapshotPeers = strings.Join(peers, ";")
	return cfg
}

// A fresh server B with A as its peer answers A's routes, byte for byte,
// before any broker registers with B, and says where its table came from.
func TestPeerCopyServesRoutesBeforeAnyRegistration(t *testing.T) {
	a, _ := startServer(t, warmConfig(t))
	want := registerTwo(t, a)

	logs := &remotingtest.Logs{}
	b, err := New(peerConfig(t, a.Addr()), logs.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Routes().Route("T1"); !ok {
		t.Fatal("no route for T1 before Start")
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, b)
	sameRoutes(t, routeBodies(t, b), want)
	ws := b.WarmStart()
	if !ws.Warm || ws.From != "peer "+a.Addr() || ws.Brokers != 3 || ws.Topics != 3 {
		t.Fatalf("start %+v", ws)
	}
	if !strings.HasPrefix(ws.String(), "warm from peer "+a.Addr()+" taken ") || !strings.HasSuffix(ws.String(), "3 brokers and 3 topics restored") {
		t.Fatalf("start says %q", ws.String())
	}
	if l := logs.String(); strings.Count(l, "starting warm: route table copied from a peer") != 1 || !strings.Contains(l, "brokers=3 topics=3") {
		t.Fatalf("start-up log:\n%s", l)
	}
	code, ready := httpGet(t, "http://"+b.AdminAddr()+"/readyz")
	if code != 200 || !strings.Contains(ready, "start: warm from peer "+a.Addr()) {
		t.Fatalf("readyz %d %q", code, ready)
	}
	// The copy is saved: the next restart is warm from its own file.
	remotingtest.WaitFor(t, "the copy's first background write", func() bool { return b.warm.writes.Load() > 0 })
}

// nsaddrList is the default list of peers; one that is down is skipped.
func TestPeerCopyFromNsaddrList(t *testing.T) {
	a, _ := startServer(t, warmConfig(t))
	registerTwo(t, a)
	down := remotingtest.FreeAddrs(t, 1)[0]
	cfg := warmConfig(t)
	cfg.NsaddrList = down + ";" + a.Addr()
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := b.WarmStart(); !ws.Warm || ws.From != "peer "+a.Addr() {
		t.Fatalf("start %+v", ws)
	}
	cfg.RouteSnapshotPeerCopy = false
	off, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := off.WarmStart(); ws.Warm || ws.Cold != "no route snapshot" {
		t.Fatalf("with routeSnapshotPeerCopy=false: %+v", ws)
	}
}

// A peer keeps its brokers' ages: one it had not heard from for 100 s
// expires 20 s after the copy, one heard just before it lives a full
// timeout. The clocks of the two servers need not agree.
func TestPeerCopyKeepsBrokersAges(t *testing.T) {
	var aNow, bNow atomic.Int64
	aNow.Store(1_800_000_000_000)
	bNow.Store(1_700_000_000_000)
	acfg := warmConfig(t)
	acfg.ScanNotActiveBrokerInterval = 3_600_000 // scans by hand
	a, err := New(acfg, nil, WithClock(aNow.Load))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, a)
	registerTwo(t, a)
	aNow.Add(100_000)
	w := dialWire(t, a.Addr())
	wantCode(t, "register broker-c", w.Call(registerFrame(t, 1, "c3", "broker-c", "127.0.0.1:10931", 0, "T4", "T5")), codec.Success)

	cfg := peerConfig(t, a.Addr())
	cfg.ScanNotActiveBrokerInterval = 3_600_000
	b, err := New(cfg, nil, WithClock(bNow.Load))
	if err != nil {
		t.Fatal(err)
	}
	if !b.WarmStart().Warm {
		t.Fatalf("start %+v", b.WarmStart())
	}
	start := bNow.Load()
	routed := func(at int64, topic string) bool {
		bNow.Store(at)
		b.scanExpired()
		_, ok := b.Routes().Route(topic)
		return ok
	}
	if !routed(start+20_000, "T1") {
		t.Fatal("T1 gone before its brokers' deadline at the peer")
	}
	if routed(start+20_001, "T1") {
		t.Fatal("T1's brokers, silent for 100 s at the peer, lived past their deadline")
	}
	if !routed(start+120_000, "T4") || routed(start+120_001, "T4") {
		t.Fatal("broker-c, heard just before the copy, did not live exactly a timeout")
	}
}

// fakePeer listens and hands every connection to serve; it returns the
// address and a count of the connections accepted.
func fakePeer(t *testing.T, serve func(net.Conn)) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			accepted.Add(1)
			go serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), &accepted
}

// answerWith reads one request frame and writes reply(request).
func answerWith(reply func(req *codec.Command) []byte) func(net.Conn) {
	return func(c net.Conn) {
		var prefix [4]byte
		if _, err := io.ReadFull(c, prefix[:]); err != nil {
			return
		}
		frame := make([]byte, binary.BigEndian.Uint32(prefix[:]))
		if _, err := io.ReadFull(c, frame); err != nil {
			return
		}
		var req codec.Command
		if codec.Decode(frame, &req) != nil {
			return
		}
		c.Write(reply(&req))
	}
}

// response is a SUCCESS response to req carrying body.
func response(req *codec.Command, code int32, body []byte) []byte {
	resp := &codec.Command{Code: code, Flag: codec.FlagResponse, Opaque: req.Opaque, Version: codec.ServerVersion, HasExt: true, Body: body}
	b, err := codec.EncodeFrame(nil, resp)
	if err != nil {
		panic(err)
	}
	return b
}

// A peer that is down, never answers (bounded by the timeout), answers
// garbage, a corrupt table or a refusal: the server starts cold, each
// reason in its start and in one log line; start-up never fails.
func TestPeerCopyFailuresStartCold(t *testing.T) {
	a, _ := startServer(t, warmConfig(t))
	registerTwo(t, a)
	good := snapshotOf(dialWire(t, a.Addr()), 1).Body
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-1] ^= 1

	silent, accepted := fakePeer(t, func(net.Conn) {}) // accepts, never answers
	garbage, _ := fakePeer(t, answerWith(func(*codec.Command) []byte { return []byte("HTTP/1.1 400 Bad Request\r\n\r\n") }))
	bad, _ := fakePeer(t, answerWith(func(req *codec.Command) []byte { return response(req, codec.Success, corrupt) }))
	java, _ := fakePeer(t, answerWith(func(req *codec.Command) []byte {
		resp := &codec.Command{Code: codec.RequestCodeNotSupported, Flag: codec.FlagResponse, Opaque: req.Opaque,
			Remark: " request type 30001 not supported"}
		b, _ := codec.EncodeFrame(nil, resp)
		return b
	}))
	other, _ := fakePeer(t, answerWith(func(req *codec.Command) []byte {
		req.Opaque++
		return response(req, codec.Success, good)
	}))
	empty, _ := startServer(t, warmConfig(t))
	down := remotingtest.FreeAddrs(t, 1)[0]

	f := func(peer, wantReason string) {
		t.Helper()
		cfg := peerConfig(t, peer)
		cfg.RouteSnapshotPeerTimeoutMs = 200
		logs := &remotingtest.Logs{}
		// Hang bounds a start-up the peer timeout failed to bound.
		type built struct {
			s   *Server
			err error
		}
		done := make(chan built, 1)
		go func() {
			s, err := New(cfg, logs.Logger())
			done <- built{s, err}
		}()
		var s *Server
		select {
		case b := <-done:
			if b.err != nil {
				t.Fatalf("%s: start-up failed: %v", wantReason, b.err)
			}
			s = b.s
		case <-time.After(remotingtest.Hang):
			t.Fatalf("%s: start-up still waiting on %s after %v: routeSnapshotPeerTimeoutMs does not bound it", wantReason, peer, remotingtest.Hang)
		}
		ws := s.WarmStart()
		if ws.Warm || !strings.HasPrefix(ws.Cold, "no route snapshot; no peer copy: "+peer+": ") || !strings.Contains(ws.Cold, wantReason) {
			t.Fatalf("%s: start %+v", wantReason, ws)
		}
		if st := s.Routes().Stats(); st.Topics != 0 || st.Live != 0 {
			t.Fatalf("%s: table %+v", wantReason, st)
		}
		if err := s.Start(); err != nil {
			t.Fatalf("%s: %v", wantReason, err)
		}
		defer shutdown(t, s)
		l := logs.String()
		if strings.Count(l, "starting cold") != 1 || !strings.Contains(l, "no peer copied its table") || !strings.Contains(l, wantReason) {
			t.Fatalf("%s: log:\n%s", wantReason, l)
		}
	}
	f(down, "connection refused")
	f(silent, "i/o timeout")
	if accepted.Load() == 0 {
		t.Fatal("the silent peer was never dialled")
	}
	f(garbage, "the answer")
	f(bad, "corrupt route snapshot")
	f(java, "not a rocketns NameServer")
	f(other, "not the response to the request")
	f(empty.Addr(), "its route table is empty")
}

// A usable snapshot of its own wins: the server does not ask its peers.
func TestPeerCopyLocalSnapshotWins(t *testing.T) {
	a, alogs := startServer(t, warmConfig(t))
	registerTwo(t, a)

	cfg := warmConfig(t)
	first := newStarted(t, cfg, nil, nil)
	w := dialWire(t, first.Addr())
	wantCode(t, "register", w.Call(registerFrame(t, 1, "c9", "broker-z", "127.0.0.1:10991", 0, "Z1", "Z2")), codec.Success)
	shutdown(t, first)

	cfg.RouteSnapshotPeers = a.Addr()
	second, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := second.WarmStart(); !ws.Warm || ws.From != first.WarmStart().From || ws.Brokers != 1 {
		t.Fatalf("start %+v", ws)
	}
	if _, ok := second.Routes().Route("T1"); ok {
		t.Fatal("T1, the peer's, is routed: the peer was asked")
	}
	if strings.Contains(alogs.String(), "route table copied by a peer") {
		t.Fatal("the peer was asked for its table")
	}
}

// With signatures on at the peer, the copy is signed with the account
// routeSnapshotPeerAccessKey names in this server's aclFile; unsigned, it
// is refused and the server starts cold.
func TestPeerCopySigned(t *testing.T) {
	acfg := authConfig(t)
	a, _ := startAuthServer(t, acfg)
	w := dialWire(t, a.Addr())
	wantCode(t, "register", w.Call(signedBy(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"), "broker-key", "broker-secret")), codec.Success)

	cfg := peerConfig(t, a.Addr())
	cfg.ACLFile = acfg.ACLFile
	unsigned, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ws := unsigned.WarmStart(); ws.Warm || !strings.Contains(ws.Cold, "refused: code 16") {
		t.Fatalf("unsigned: %+v", ws)
	}
	for _, strict := range []bool{false, true} {
		cfg := peerConfig(t, a.Addr())
		cfg.ACLFile = acfg.ACLFile
		cfg.RouteSnapshotPeerAccessKey = "reader-key"
		cfg.ACLStrictSignature = strict
		signed, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ws := signed.WarmStart(); !ws.Warm || ws.Brokers != 1 || ws.Topics != 2 {
			t.Fatalf("signed (strict %v): %+v", strict, ws)
		}
	}
}
