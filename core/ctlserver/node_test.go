// One node over the wire: writes waiting on raft while the connection's
// heartbeats go on, a full queue, raft errors, bad input, the expiry and
// inactive-master scans with their elections and notices, processReadEvent,
// and the config codes.

package ctlserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// gate stalls the FSM: while closed is false, each Apply waits for open.
type gate struct {
	stalled atomic.Bool
	open    chan struct{}
	waiting chan uint64
}

func newGate() *gate { return &gate{open: make(chan struct{}), waiting: make(chan uint64, 16)} }

func (g *gate) hook(s *Server) {
	s.fsm.before = func(index uint64) {
		if g.stalled.Load() {
			g.waiting <- index
			<-g.open
		}
	}
}

// rawBroker speaks to a node over one connection, frame by frame.
type rawBroker struct {
	t      *testing.T
	w      *remotingtest.Wire
	name   string
	id     int64
	addr   string
	opaque int32
}

func newRawBroker(t *testing.T, s *Server, name string, id int64, addr string) *rawBroker {
	return &rawBroker{t: t, w: remotingtest.Dial(t, s.Addr().String()), name: name, id: id, addr: addr}
}

func (b *rawBroker) req(code int32, ext ...string) *codec.Command {
	b.opaque++
	return request(code, b.opaque, ext...)
}

func (b *rawBroker) call(code int32, ext ...string) *codec.Command {
	b.t.Helper()
	return b.w.Call(b.req(code, ext...))
}

func (b *rawBroker) ids() []string {
	return []string{"clusterName", "DefaultCluster", "brokerName", b.name}
}

// register is 1013 and 1003 for the broker's id.
func (b *rawBroker) register() {
	b.t.Helper()
	id := strconv.FormatInt(b.id, 10)
	if r := b.call(codec.ControllerApplyBrokerID, append(b.ids(), "appliedBrokerId", id, "registerCheckCode", b.addr+";1")...); r.Code != 0 {
		b.t.Fatalf("1013: %d %q", r.Code, r.Remark)
	}
	if r := b.call(codec.ControllerRegisterBroker, append(b.ids(), "brokerId", id, "brokerAddress", b.addr)...); r.Code != 0 {
		b.t.Fatalf("1003: %d %q", r.Code, r.Remark)
	}
}

// heartbeat sends a oneway 904, then a 1005 so that it is known served.
func (b *rawBroker) heartbeat() {
	b.t.Helper()
	hb := b.req(codec.BrokerHeartbeat, append(b.ids(), "brokerId", strconv.FormatInt(b.id, 10), "brokerAddr", b.addr,
		"heartbeatTimeoutMills", "10000", "epoch", "1", "maxOffset", "0")...)
	hb.Flag = codec.FlagOneway
	b.w.Send(hb)
	if r := b.call(codec.ControllerGetMetadataInfo); r.Code != 0 {
		b.t.Fatalf("1005: %d", r.Code)
	}
}

func (b *rawBroker) elect() *codec.Command {
	b.t.Helper()
	return b.call(codec.ControllerElectMaster, append(b.ids(), "brokerId", strconv.FormatInt(b.id, 10), "designateElect", "false")...)
}

// noticeSink is a broker port that records the 1008s it receives and
// the connection each came on.
type noticeSink struct {
	srv     *remoting.Server
	notices chan sunk
}

type sunk struct {
	conn remoting.ConnID
	cmd  codec.Command
}

func newSink(t *testing.T) *noticeSink {
	k := &noticeSink{notices: make(chan sunk, 64)}
	srv, err := remoting.New(remoting.Options{Addr: "127.0.0.1:0", Log: testLogger(t), Routes: []remoting.Route{{
		Code: codec.NotifyBrokerRoleChanged,
		Handler: func(c *remoting.Conn, req, _ *codec.Command) error {
			cmd := codec.Command{Code: req.Code, Flag: req.Flag, Version: req.Version, Remark: req.Remark,
				Body: bytes.Clone(req.Body), HasExt: req.HasExt}
			for _, f := range req.Ext {
				cmd.Ext = append(cmd.Ext, codec.Field{Key: strings.Clone(f.Key), Value: strings.Clone(f.Value)})
			}
			k.notices <- sunk{conn: c.ID(), cmd: cmd}
			return nil
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	k.srv = srv
	return k
}

func (k *noticeSink) addr() string { return k.srv.Addr().String() }

func (k *noticeSink) next(t *testing.T) sunk {
	t.Helper()
	select {
	case n := <-k.notices:
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("no 1008 arrived")
		return sunk{}
	}
}

func ext(c *codec.Command, key string) string {
	v, _ := c.ExtValue(key)
	return v
}

// A write waiting for its commit does not hold up its connection: the
// heartbeats and reads sent after it are answered first, the write once
// its entry is applied, and a second write queues behind the first.
func TestHeartbeatsFlowWhileAWriteWaits(t *testing.T) {
	g := newGate()
	s := single(t, nil, g.hook)
	w := remotingtest.Dial(t, s.Addr().String())
	other := remotingtest.Dial(t, s.Addr().String())
	g.stalled.Store(true)
	w.Send(request(codec.ControllerApplyBrokerID, 1, "clusterName", "C", "brokerName", "b1", "appliedBrokerId", "1", "registerCheckCode", "127.0.0.1:1;1"))
	<-g.waiting
	other.Send(request(codec.ControllerApplyBrokerID, 1, "clusterName", "C", "brokerName", "b2", "appliedBrokerId", "1", "registerCheckCode", "127.0.0.1:2;1"))
	for i := int32(2); i <= 6; i++ {
		w.Send(request(codec.BrokerHeartbeat, i, "clusterName", "C", "brokerName", "b1", "brokerId", "1", "brokerAddr", "127.0.0.1:1"))
		r := w.MustRecv()
		if r.Opaque != i || r.Code != 0 || r.Remark != "Heart beat success" {
			t.Fatalf("heartbeat %d behind a waiting write: opaque %d code %d %q", i, r.Opaque, r.Code, r.Remark)
		}
	}
	if r := w.Call(request(codec.ControllerGetMetadataInfo, 7)); r.Code != 0 {
		t.Fatalf("1005 behind a waiting write: %d", r.Code)
	}
	if n := s.Stats().BrokersAlive; n != 1 {
		t.Fatalf("%d brokers alive after the heartbeats, want 1", n)
	}
	g.stalled.Store(false)
	close(g.open)
	if r := w.MustRecv(); r.Opaque != 1 || r.Code != 0 {
		t.Fatalf("the write's answer: opaque %d code %d %q", r.Opaque, r.Code, r.Remark)
	}
	if r := other.MustRecv(); r.Opaque != 1 || r.Code != 0 {
		t.Fatalf("the queued write's answer: opaque %d code %d %q", r.Opaque, r.Code, r.Remark)
	}
	if gs := s.Groups(); len(gs) != 2 || gs[0].BrokerName != "b1" || gs[1].BrokerName != "b2" {
		t.Fatalf("sets %+v", gs)
	}
}

// Beyond the queue's capacity a write is refused at once with Java's
// overload answer; a write whose commit times out is answered 1 with its
// outcome unknown (here it did commit: the retry is idempotent).
func TestQueueFullAndCommitTimeout(t *testing.T) {
	g := newGate()
	s := single(t, func(c *Config) {
		c.RequestQueueCapacity = 1
		c.Raft.ApplyTimeout = 300 * time.Millisecond
	}, g.hook)
	w := remotingtest.Dial(t, s.Addr().String())
	apply := func(opaque int32, name string) *codec.Command {
		return request(codec.ControllerApplyBrokerID, opaque, "clusterName", "C", "brokerName", name, "appliedBrokerId", "1", "registerCheckCode", "a;1")
	}
	g.stalled.Store(true)
	w.Send(apply(1, "x1"))
	<-g.waiting // the writer is in the first commit
	w.Send(apply(2, "x2"))
	remotingtest.WaitFor(t, "the second write queued", func() bool { return s.Stats().QueuedRequests == 1 })
	r := w.Call(apply(3, "x3"))
	if r.Code != codec.SystemBusy || r.Remark != "[OVERLOAD]system busy, start flow control for a while" || r.HasExt {
		t.Fatalf("full queue: %d %q ext %v", r.Code, r.Remark, r.HasExt)
	}
	r = w.MustRecv()
	if r.Opaque != 1 || r.Code != codec.SystemError || !strings.Contains(r.Remark, "may or may not take effect") || r.HasExt {
		t.Fatalf("timed-out commit: opaque %d %d %q", r.Opaque, r.Code, r.Remark)
	}
	g.stalled.Store(false)
	close(g.open)
	// The second write waited for a barrier behind the unknown outcome,
	// then went through.
	if r = w.MustRecv(); r.Opaque != 2 || r.Code != 0 {
		t.Fatalf("queued write: opaque %d %d %q", r.Opaque, r.Code, r.Remark)
	}
	if r = w.Call(apply(4, "x1")); r.Code != 0 {
		t.Fatalf("retry of the timed-out write: %d %q", r.Code, r.Remark)
	}
	if gs := s.Groups(); len(gs) != 2 || gs[0].NextID != 2 {
		t.Fatalf("sets %+v", gs)
	}
	if st := s.Stats(); st.Overloaded != 1 {
		t.Fatalf("overloaded %d", st.Overloaded)
	}
}

// Broken input gets Java's answer or a closed connection, never a panic,
// and the node goes on serving.
func TestBadInput(t *testing.T) {
	s := single(t, nil)
	w := remotingtest.Dial(t, s.Addr().String())
	f := func(req *codec.Command, code int32, remark string) {
		t.Helper()
		r := w.Call(req)
		if r.Code != code || !strings.HasPrefix(r.Remark, remark) || r.HasExt || r.Version != 0 || r.SerializeType != codec.SerializeJSON {
			t.Errorf("code %d: got %d %q ext %v version %d serialize %d, want %d %q", req.Code, r.Code, r.Remark, r.HasExt,
				r.Version, r.SerializeType, code, remark)
		}
	}
	npe := func(text string) string {
		return "java.util.concurrent.ExecutionException: java.lang.NullPointerException: " + text +
			", java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)"
	}
	b := newRawBroker(t, s, "broker-a", 1, "127.0.0.1:1")
	b.register()
	if r := b.elect(); r.Code != 0 {
		t.Fatalf("1002: %d %q", r.Code, r.Remark)
	}
	f(request(codec.ControllerAlterSyncStateSet, 1, "brokerName", "broker-a", "masterBrokerId", "1", "masterEpoch", "1"),
		codec.SystemError, npe(`Cannot invoke "org.apache.rocketmq.remoting.protocol.body.SyncStateSet.getSyncStateSet()" because "syncStateSet" is null`))
	for i, b := range []string{`["broker-a"`, `{"a":1}`, `[1,2]`, "\x00\xff"} {
		req := request(codec.ControllerGetSyncStateData, int32(10+i))
		req.Body = []byte(b)
		f(req, codec.SystemError, "com.alibaba.fastjson.JSONException: ")
	}
	f(request(codec.ControllerGetSyncStateData, 20), codec.SystemError, "not set any response code")
	bad := request(codec.ControllerAlterSyncStateSet, 21, "brokerName", "broker-a", "masterBrokerId", "1", "masterEpoch", "1")
	bad.Body = []byte(`{"syncStateSet":"x"}`)
	f(bad, codec.SystemError, "com.alibaba.fastjson.JSONException: ")
	f(request(codec.ControllerApplyBrokerID, 22, "clusterName", "C", "brokerName", "junk", "appliedBrokerId", "abc", "registerCheckCode", "a;1"),
		codec.SystemError, npe(`Cannot invoke "java.lang.Long.longValue()" because "brokerId" is null`))
	f(request(4242, 23), codec.RequestCodeNotSupported, " request type 4242 not supported")
	f(request(codec.GetBrokerEpochCache, 24), codec.RequestCodeNotSupported, " request type 1007 not supported")
	f(request(codec.NotifyBrokerRoleChanged, 25), codec.RequestCodeNotSupported, " request type 1008 not supported")
	cfg := request(codec.UpdateControllerConfig, 26)
	cfg.Body = []byte(`notifyBrokerRoleChanged=\uZZZZ`)
	f(cfg, codec.SystemError, "string2Properties error")
	f(request(codec.BrokerHeartbeat, 27, "clusterName", "C", "brokerName", "b"), codec.ControllerInvalidRequest, "Heart beat with empty brokerId")

	// A binary header is answered in JSON, as Java does.
	bin := request(codec.ControllerGetNextBrokerID, 30, "clusterName", "C", "brokerName", "bin")
	bin.SerializeType = codec.SerializeRocketMQ
	if r := w.Call(bin); r.Code != 0 || r.SerializeType != codec.SerializeJSON || ext(r, "nextBrokerId") != "1" {
		t.Errorf("binary 1012: %d serialize %d %v", r.Code, r.SerializeType, r.Ext)
	}
	// Oneway leader requests are served and not answered.
	for i, code := range []int32{codec.ControllerGetNextBrokerID, codec.ControllerApplyBrokerID, 4242} {
		ow := request(code, int32(40+i), "clusterName", "C", "brokerName", "ow", "appliedBrokerId", "1", "registerCheckCode", "o;1")
		ow.Flag = codec.FlagOneway
		w.Send(ow)
	}
	if r := w.Call(request(codec.ControllerGetMetadataInfo, 50)); r.Code != 0 {
		t.Fatalf("1005 after oneway requests: %d", r.Code)
	}
	remotingtest.WaitFor(t, "the oneway 1013 applied", func() bool { return len(s.Groups()) == 2 && s.Groups()[1].BrokerName == "ow" })

	// A frame whose length lies closes that connection only.
	liar := remotingtest.Dial(t, s.Addr().String())
	frame := codec.AppendFrame(nil, request(codec.ControllerGetMetadataInfo, 60))
	binary.BigEndian.PutUint32(frame[4:], 1<<20) // header length beyond the frame
	liar.SendRaw(frame)
	if !liar.ClosedByPeer() {
		t.Error("a lying frame did not close its connection")
	}
	if r := w.Call(request(codec.ControllerGetMetadataInfo, 61)); r.Code != 0 {
		t.Fatalf("1005 after a broken frame elsewhere: %d", r.Code)
	}
}

// The expiry scan closes an expired master's connection and the leader
// elects the live slave and notifies it; the inactive-master scan elects
// when a master's heartbeats stopped while its connection stays open; a
// slave's loss elects nothing.
func TestScansElect(t *testing.T) {
	clock := &fakeClock{}
	clock.Set(time.UnixMilli(1_700_000_000_000))
	s := single(t, func(c *Config) {
		c.Clock = clock.Now
		c.ScanNotActiveBrokerInterval = time.Hour
		c.ScanInactiveMasterInterval = time.Hour
	})
	sinks := []*noticeSink{newSink(t), newSink(t), newSink(t)}
	var bs []*rawBroker
	for i, k := range sinks {
		b := newRawBroker(t, s, "broker-a", int64(i+1), k.addr())
		b.register()
		b.heartbeat()
		bs = append(bs, b)
	}
	if r := bs[0].elect(); r.Code != 0 || ext(r, "masterBrokerId") != "1" {
		t.Fatalf("first election: %d %q %v", r.Code, r.Remark, r.Ext)
	}
	alter := bs[0].req(codec.ControllerAlterSyncStateSet, "brokerName", "broker-a", "masterBrokerId", "1", "masterEpoch", "1")
	alter.Body = []byte(`{"syncStateSet":[1,2,3],"syncStateSetEpoch":1}`)
	if r := bs[0].w.Call(alter); r.Code != 0 {
		t.Fatalf("1001: %d %q", r.Code, r.Remark)
	}
	// The first election notified every live member, the master too.
	for _, k := range sinks {
		if n := k.next(t); ext(&n.cmd, "masterBrokerId") != "1" {
			t.Fatalf("first notice %v", n.cmd.Ext)
		}
	}

	// 11 s later only brokers 2 and 3 heartbeat: the scan drops broker 1
	// and closes its connection; broker 2 (ranked first on a tie) becomes
	// master and both live members are told.
	clock.Add(11 * time.Second)
	bs[1].heartbeat()
	bs[2].heartbeat()
	s.expiryScan()
	if !bs[0].w.ClosedByPeer() {
		t.Fatal("the expired broker's connection is open")
	}
	for _, k := range sinks[1:] {
		n := k.next(t)
		if ext(&n.cmd, "masterBrokerId") != "2" || ext(&n.cmd, "masterEpoch") != "2" || ext(&n.cmd, "masterAddress") != sinks[1].addr() {
			t.Fatalf("notice after the expiry: %v", n.cmd.Ext)
		}
	}
	if g := s.Groups()[0]; g.MasterID != 2 || g.MasterEpoch != 2 || !slices.Equal(g.SyncStateSet, []int64{2}) {
		t.Fatalf("after the expiry: %+v", g)
	}

	// The new master's heartbeats stop but its connection stays: the
	// inactive-master scan elects broker 3... once it is in the set.
	alter = bs[1].req(codec.ControllerAlterSyncStateSet, "brokerName", "broker-a", "masterBrokerId", "2", "masterEpoch", "2")
	alter.Body = []byte(`{"syncStateSet":[2,3],"syncStateSetEpoch":3}`)
	if r := bs[1].w.Call(alter); r.Code != 0 {
		t.Fatalf("1001: %d %q", r.Code, r.Remark)
	}
	clock.Add(6 * time.Second)
	bs[2].heartbeat()
	s.inactiveMasterScan()
	if g := s.Groups()[0]; g.MasterID != 2 {
		t.Fatalf("the scan elected with the master alive: %+v", g)
	}
	clock.Add(5 * time.Second)
	bs[2].heartbeat()
	s.inactiveMasterScan()
	n := sinks[2].next(t)
	if ext(&n.cmd, "masterBrokerId") != "3" || ext(&n.cmd, "masterEpoch") != "3" {
		t.Fatalf("notice after the scan: %v", n.cmd.Ext)
	}
	remotingtest.WaitFor(t, "broker 3 master", func() bool { return s.Groups()[0].MasterID == 3 })

	// A slave's connection closing elects nothing.
	before := s.Stats().Elections
	bs[1].w.NC.Close()
	remotingtest.WaitFor(t, "broker 2 dropped", func() bool { return s.Stats().BrokersAlive == 1 })
	s.writerIdle(t)
	if after := s.Stats().Elections; after != before {
		t.Fatalf("elections %+v after a slave left, before %+v", after, before)
	}
	// The master's does: no candidate is left, so the master is cleared.
	bs[2].w.NC.Close()
	remotingtest.WaitFor(t, "the master cleared", func() bool { return !s.Groups()[0].HasMaster })
	// A notice is counted once its write returned, which may be after the
	// broker read it.
	remotingtest.WaitFor(t, "six notices counted", func() bool { return s.Stats().NotificationsSent >= 6 })
	st := s.Stats()
	if st.Elections.Success != 3 || st.Elections.Cleared != 1 || st.GroupsWithoutMaster != 1 || st.NotificationsSent != 6 {
		t.Fatalf("stats %+v", st)
	}
}

// writerIdle waits until the writer has nothing queued and is not
// deciding: a no-op write through it has been answered.
func (s *Server) writerIdle(t *testing.T) {
	t.Helper()
	r := call(t, s, request(codec.ControllerRegisterBroker, 1, "brokerName", "no-such-set", "brokerId", "1", "brokerAddress", "x"))
	if r.Code != codec.ControllerBrokerNeedToBeRegistered {
		t.Fatalf("no-op write: %d %q", r.Code, r.Remark)
	}
}

// With processReadEvent every read commits an empty entry first.
func TestProcessReadEvent(t *testing.T) {
	s := single(t, func(c *Config) { c.ProcessReadEvent = true })
	w := remotingtest.Dial(t, s.Addr().String())
	before := s.Stats().Raft.LastLogIndex
	for i := range int32(3) {
		if r := w.Call(request(codec.ControllerGetNextBrokerID, i+1, "clusterName", "C", "brokerName", "b")); r.Code != 0 || ext(r, "nextBrokerId") != "1" {
			t.Fatalf("1012: %d %v", r.Code, r.Ext)
		}
	}
	if after := s.Stats().Raft.LastLogIndex; after != before+3 {
		t.Fatalf("log index %d after three reads, was %d", after, before)
	}
	// 1009 turns it off at once.
	up := request(codec.UpdateControllerConfig, 9)
	up.Body = []byte("isProcessReadEvent=false\n")
	if r := w.Call(up); r.Code != 0 {
		t.Fatalf("1009: %d %q", r.Code, r.Remark)
	}
	w.Call(request(codec.ControllerGetReplicaInfo, 10, "brokerName", "b"))
	if after := s.Stats().Raft.LastLogIndex; after != before+3 {
		t.Fatalf("a read committed an entry with processReadEvent off")
	}
}

// A node elected but with its barrier not yet applied (here: its FSM
// replaying the log is stalled) says isLeader in 1005, as Java does, and
// answers leader requests 2007 until the barrier is through.
func TestLeaderBeforeItsBarrier(t *testing.T) {
	addrs := remotingtest.FreeAddrs(t, 1)
	cfg := DefaultConfig(dledger(t, addrs, 0), t.TempDir())
	cfg.BindAddress = "127.0.0.1"
	fastRaft(&cfg)
	s := startNode(t, cfg)
	remotingtest.WaitFor(t, "a ready leader", func() bool { return s.node.ReadyLeader() })
	if r := call(t, s, request(codec.ControllerApplyBrokerID, 1, "clusterName", "C", "brokerName", "b", "appliedBrokerId", "1", "registerCheckCode", "a;1")); r.Code != 0 {
		t.Fatalf("1013: %d %q", r.Code, r.Remark)
	}
	shutdown(t, s)

	g := newGate()
	g.stalled.Store(true)
	s = startNode(t, cfg, g.hook)
	<-g.waiting // the log's first entry is being replayed
	remotingtest.WaitFor(t, "raft leadership", func() bool { return s.node.IsLeader() })
	if m := metadata(t, s); m["isLeader"] != "true" || m["controllerLeaderId"] != "n0" {
		t.Fatalf("1005 of an elected node: %v", m)
	}
	next := request(codec.ControllerGetNextBrokerID, 2, "clusterName", "C", "brokerName", "b")
	if r := call(t, s, next); r.Code != codec.ControllerNotLeader || r.HasExt {
		t.Fatalf("1012 before the barrier: %d %q", r.Code, r.Remark)
	}
	g.stalled.Store(false)
	close(g.open)
	remotingtest.WaitFor(t, "the barrier", func() bool { return s.node.ReadyLeader() })
	if r := call(t, s, next); r.Code != 0 || ext(r, "nextBrokerId") != "2" {
		t.Fatalf("1012 after the barrier: %d %v", r.Code, r.Ext)
	}
}
