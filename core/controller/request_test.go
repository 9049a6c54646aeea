// Header parsing as Java's decoder does it (defaults, unparsable values,
// nullable fields), through a map and through a decoded frame, and the
// allocation-free heartbeat path.

package controller

import (
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller/controllertest"
)

func TestParseHeartbeat(t *testing.T) {
	t.Parallel()
	f := func(in MapFields, want Heartbeat) {
		t.Helper()
		var got Heartbeat
		ParseHeartbeat(in, &got)
		if got != want {
			t.Errorf("%v:\n got %+v\nwant %+v", in, got, want)
		}
	}
	defaults := Heartbeat{Epoch: -1, MaxOffset: -1, ConfirmOffset: -1, TimeoutMillis: 10000, ElectionPriority: math.MaxInt32}
	f(nil, defaults)
	f(MapFields{"brokerId": "1", "clusterName": "C", "brokerName": "b", "brokerAddr": "h:1", "epoch": "3",
		"maxOffset": "100", "confirmOffset": "90", "heartbeatTimeoutMills": "5000", "electionPriority": "-2"},
		Heartbeat{ClusterName: "C", BrokerName: "b", BrokerAddr: "h:1", BrokerID: 1, HasBrokerID: true,
			Epoch: 3, MaxOffset: 100, ConfirmOffset: 90, TimeoutMillis: 5000, ElectionPriority: -2})
	// Values that do not parse keep the default, as Java logs and skips
	// them; Integer fields overflow at 32 bits; a sign is accepted.
	want := defaults
	want.BrokerID, want.HasBrokerID = 1, true
	f(MapFields{"brokerId": "+1", "epoch": "2147483648", "maxOffset": "1.5", "heartbeatTimeoutMills": "",
		"electionPriority": "0x1", "confirmOffset": " 1"}, want)
	f(MapFields{"brokerId": "1 "}, defaults)
	// The misspelling is Java's: heartbeatTimeoutMills, not Millis.
	f(MapFields{"heartbeatTimeoutMillis": "1"}, defaults)
}

func TestParseRequests(t *testing.T) {
	t.Parallel()
	if got := ParseElectMaster(nil); got != (ElectMasterRequest{BrokerID: -1}) {
		t.Errorf("ElectMaster defaults = %+v", got)
	}
	if got := ParseElectMaster(MapFields{"clusterName": "C", "brokerName": "b", "brokerId": "3", "designateElect": "True"}); got !=
		(ElectMasterRequest{ClusterName: "C", BrokerName: "b", BrokerID: 3, DesignateElect: true}) {
		t.Errorf("ElectMaster = %+v", got)
	}
	if got := ControllerTrigger("b"); got != (ElectMasterRequest{BrokerName: "b", BrokerID: -1}) {
		t.Errorf("ControllerTrigger = %+v", got)
	}
	r := ParseRegisterBroker(MapFields{"brokerName": "b", "brokerId": "x", "brokerAddress": ""})
	if r.ClusterName != nil || *r.BrokerName != "b" || r.BrokerID != nil || *r.BrokerAddress != "" {
		t.Errorf("RegisterBroker = %+v", r)
	}
	a, err := ParseAlterSyncStateSet(MapFields{"masterEpoch": "2147483648", "masterBrokerId": "1"}, nil)
	if err != nil || a.MasterEpoch != nil || *a.MasterBrokerID != 1 || a.Body != nil || a.BrokerName != nil {
		t.Errorf("AlterSyncStateSet = %+v, %v", a, err)
	}
	if _, err := ParseAlterSyncStateSet(nil, []byte("{")); err == nil {
		t.Errorf("a broken 1001 body parsed")
	}
	c := ParseCleanBrokerData(MapFields{"brokerName": "b", "brokerControllerIdsToClean": "1;2", "isCleanLivingBroker": "1"})
	if c.CleanLiving || *c.IDs != "1;2" || c.ClusterName != nil {
		t.Errorf("CleanBrokerData = %+v", c)
	}
	if d, err := ParseGetSyncStateData(nil); err != nil || d.Names != nil {
		t.Errorf("GetSyncStateData without body = %+v, %v", d, err)
	}
	// Strings are copied out of the request, which its buffer outlives.
	buf := []byte("broker-a")
	n := ParseNextBrokerID(MapFields{"brokerName": string(buf)})
	buf[0] = 'X'
	if *n.BrokerName != "broker-a" {
		t.Errorf("parsed name aliases the input")
	}
}

// The network side hands decoded frames over as *codec.Command: every
// recorded request must be decided the same through it as through the
// recorded header (the binary-header 1004 included).
func TestDecideFromDecodedFrames(t *testing.T) {
	t.Parallel()
	steps, err := controllertest.Script()
	if err != nil {
		t.Fatal(err)
	}
	s, live := NewState(), NewLiveness()
	var cmd codec.Command
	n := 0
	for _, st := range steps {
		raw, err := st.Req.Raw()
		if err != nil {
			t.Fatal(err)
		}
		if err := codec.Decode(raw[4:], &cmd); err != nil {
			t.Fatalf("%s seq %d: %v", st.Req.File, st.Req.Seq, err)
		}
		h, _ := st.Req.ParseHeader()
		now := st.Req.TS.UnixMilli()
		if cmd.Code == codec.BrokerHeartbeat {
			var a, b Heartbeat
			ParseHeartbeat(&cmd, &a)
			ParseHeartbeat(&h, &b)
			if a != b {
				t.Fatalf("heartbeat from the frame %+v, from the header %+v", a, b)
			}
			live.Heartbeat(&a, uint64(st.Req.Conn), now)
			continue
		}
		body, _ := st.Req.Body()
		env := Env{Live: live, Now: now}
		fromCmd, ok := s.decide(cmd.Code, &cmd, cmd.Body, env)
		if !ok {
			continue
		}
		fromHeader, _ := s.decide(h.Code, &h, body, env)
		if !reflect.DeepEqual(fromCmd, fromHeader) {
			t.Fatalf("%s opaque %d: from the frame %+v, from the header %+v", st.Req.File, h.Opaque, fromCmd, fromHeader)
		}
		s.Apply(fromCmd.Events...)
		n++
	}
	if n < 60 {
		t.Fatalf("only %d requests decided", n)
	}
}

// A broker's heartbeat, decoded frame to liveness update, allocates
// nothing once the broker is known (one per broker per second per node).
func TestHeartbeatAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	frame := heartbeatFrame(t)
	live := NewLiveness()
	var cmd codec.Command
	var hb Heartbeat
	now := int64(1000)
	step := func() {
		if err := codec.Decode(frame, &cmd); err != nil {
			t.Fatal(err)
		}
		ParseHeartbeat(&cmd, &hb)
		live.Heartbeat(&hb, 7, now)
		now++
	}
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("a known broker's heartbeat allocates %.1f times", n)
	}
	if !live.Alive(LiveKey{"DefaultCluster", "broker-a", 1}, now) {
		t.Fatalf("the broker is not alive after its heartbeats")
	}
}

// heartbeatFrame is a recorded broker 904, without its length prefix.
func heartbeatFrame(tb testing.TB) []byte {
	tb.Helper()
	steps, err := controllertest.Script()
	if err != nil {
		tb.Fatal(err)
	}
	for _, st := range steps {
		if h, _ := st.Req.ParseHeader(); h.Code == codec.BrokerHeartbeat && h.Oneway() {
			raw, err := st.Req.Raw()
			if err != nil {
				tb.Fatal(err)
			}
			return raw[4:]
		}
	}
	tb.Fatal("no recorded heartbeat")
	return nil
}

// A 1006 naming a great many sets, most of them repeated, is answered in
// linear time (the names are deduplicated with a map, not by rescanning).
func TestSyncStateDataManyNames(t *testing.T) {
	t.Parallel()
	s := NewState()
	s.Apply(Event{Type: EventApplyBrokerID, Cluster: "C", BrokerName: "n7", BrokerID: 1, Addr: "a", CheckCode: "a"})
	names := make([]string, 0, 300000)
	for i := range cap(names) {
		names = append(names, "n"+strconv.Itoa(i%100000))
	}
	d := s.GetSyncStateData(GetSyncStateDataRequest{Names: names}, Env{})
	want := `{"replicasInfoTable":{"n7":{"inSyncReplicas":[],"masterEpoch":0,"notInSyncReplicas":[{"alive":false,"brokerAddress":"a","brokerId":1,"brokerName":"n7"}],"syncStateSetEpoch":0}}}`
	if string(d.Reply.Body) != want {
		t.Errorf("body %s", d.Reply.Body)
	}
}

// CountAlive counts the brokers heard from within their own timeouts, not
// those merely left in the table until the next expiry scan.
func TestCountAlive(t *testing.T) {
	t.Parallel()
	live := NewLiveness()
	hb := func(name string, id, timeout int64, conn uint64, now int64) {
		live.Heartbeat(&Heartbeat{ClusterName: "C", BrokerName: name, BrokerID: id, HasBrokerID: true, TimeoutMillis: timeout}, conn, now)
	}
	hb("a", 1, 1000, 1, 0)
	hb("a", 2, 5000, 2, 0)
	hb("b", 1, 1000, 3, 500)
	f := func(now int64, want int) {
		t.Helper()
		if got := live.CountAlive(now); got != want {
			t.Errorf("CountAlive(%d) = %d, want %d", now, got, want)
		}
	}
	f(0, 3)
	f(1000, 3)
	f(1001, 2)
	f(1501, 1)
	f(5001, 0)
	if live.Len() != 3 {
		t.Errorf("Len %d: counting must not remove entries", live.Len())
	}
	var none *Liveness
	if none.CountAlive(0) != 0 {
		t.Error("a nil table counts brokers")
	}
}
