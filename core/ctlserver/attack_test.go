// attack_test.go is the controller's part of the chaos suite: a stranger's
// state changes and spoofed heartbeats, a flood of broker sets and
// liveness entries, and the status page over the flooded state, run one
// after the other against a node with the allowlists on and a master and a
// slave at work. It asserts that nothing a stranger sends changes the
// state, that the floods stop at the bounds, that the page stays bounded,
// and that the brokers' set keeps its master throughout.
//
// Attackers dial from other loopback addresses than the brokers: strangers
// from outside both allowlists, insiders from a second address of the
// broker network. Size: skipped under -short; small bounds by default
// (make test), the default bounds and the attack report's flood (20,000
// sets, 200,000 liveness entries) with ROCKETNS_SOAK=1 (make soak).

package ctlserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/ctlserver/brokersim"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/status"
)

// soakEnv turns on the full-size suite, as core/server's.
const soakEnv = "ROCKETNS_SOAK"

// insiderHost is a second address of the broker network: it passes the
// allowlist, so only the takeover rule and the bounds stop it.
const insiderHost = "127.0.0.4"

// ctlAttackSize is how hard each attack pushes: rounds of every stranger
// request, and the floods against the bounds.
type ctlAttackSize struct {
	rounds               int
	maxSets, maxLive     int // 0: config's defaults
	floodSets, floodLive int
	floodConns           int
}

func ctlAttackSizeOf(t *testing.T) ctlAttackSize {
	t.Helper()
	if testing.Short() {
		t.Skip("attack suite skipped under -short")
	}
	if os.Getenv(soakEnv) != "" {
		return ctlAttackSize{rounds: 200, floodSets: 20000, floodLive: 200000, floodConns: 8}
	}
	return ctlAttackSize{rounds: 10, maxSets: 150, maxLive: 500, floodSets: 400, floodLive: 2000, floodConns: 4}
}

func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestSoakControllerAttacks(t *testing.T) {
	size := ctlAttackSizeOf(t)
	o := auth.Options{AllowFrom: mustCIDRs(t, adminHost+"/32"), BrokerAllowFrom: mustCIDRs(t, brokerHost+"/32,"+insiderHost+"/32")}
	s := guarded(t, o, func(c *Config) { c.MaxBrokerSets, c.MaxLiveBrokers = size.maxSets, size.maxLive })
	maxSets, maxLive := s.cfg.MaxBrokerSets, s.cfg.MaxLiveBrokers

	// The set at work: a master and a slave from the broker host,
	// heartbeating and polling often.
	var bs []*brokersim.Broker
	for range 2 {
		b := brokersim.New(brokersim.Config{Cluster: "DefaultCluster", BrokerName: "broker-a",
			ControllerAddrs: []string{s.Addr().String()}, HeartbeatInterval: 100 * time.Millisecond,
			ReplicaInfoInterval: 200 * time.Millisecond, RetryInterval: 100 * time.Millisecond, Log: testLogger(t)})
		startBroker(t, b)
		bs = append(bs, b)
	}
	remotingtest.WaitFor(t, "both brokers alive", func() bool { return s.Stats().BrokersAlive == 2 })
	before := groupOf(t, s, "broker-a")
	elections := s.Stats().Elections
	intact := func(phase string) {
		t.Helper()
		g := groupOf(t, s, "broker-a")
		if !g.HasMaster || g.MasterID != before.MasterID || g.MasterEpoch != before.MasterEpoch || g.MasterAddr != before.MasterAddr {
			t.Fatalf("after %s the set is %+v, was %+v", phase, g, before)
		}
		if e := s.Stats().Elections; e != elections {
			t.Fatalf("after %s elections %+v, were %+v", phase, e, elections)
		}
		for _, b := range bs {
			if st := b.State(); !st.Running || st.MasterID != before.MasterID {
				t.Fatalf("after %s a broker sees %+v", phase, st)
			}
		}
	}

	t.Run("stranger's state changes", func(t *testing.T) {
		master := strconv.FormatInt(before.MasterID, 10)
		ids := []string{"clusterName", "DefaultCluster", "brokerName", "broker-a"}
		with := func(kv ...string) []string { return append(append([]string(nil), ids...), kv...) }
		attacks := []*codec.Command{
			request(codec.ControllerRegisterBroker, 0, with("brokerId", master, "brokerAddress", "6.6.6.6:10911")...),
			request(codec.ControllerElectMaster, 0, with("brokerId", "9", "designateElect", "true")...),
			request(codec.ControllerElectMaster, 0, "brokerName", "broker-a"),
			request(codec.CleanBrokerData, 0, with("isCleanLivingBroker", "true")...),
			request(codec.UpdateControllerConfig, 0),
			request(codec.ControllerApplyBrokerID, 0, "clusterName", "c", "brokerName", "evil", "appliedBrokerId", "1", "registerCheckCode", "6.6.6.6:1;1"),
			request(codec.ControllerAlterSyncStateSet, 0, "brokerName", "broker-a", "masterBrokerId", master, "masterEpoch", "1"),
			request(codec.BrokerHeartbeat, 0, with("brokerId", master, "brokerAddr", "6.6.6.6:10911", "heartbeatTimeoutMills", "1")...),
		}
		attacks[4].Body = []byte("enableElectUncleanMaster=true\n")
		attacks[6].Body = []byte(`{"syncStateSet":[9],"syncStateSetEpoch":1}`)
		refused := s.Refusals()["address"]
		for round := 0; round < size.rounds; round++ {
			w := dialFrom(t, strangerHost, s.Addr().String())
			for i, req := range attacks {
				req.Opaque = int32(i + 1)
				if r := w.Call(req); r.Code != codec.NoPermission {
					t.Fatalf("round %d: %d from a stranger answered %d %q", round, req.Code, r.Code, r.Remark)
				}
			}
			w.NC.Close()
		}
		if n := s.Refusals()["address"] - refused; n != uint64(size.rounds*len(attacks)) {
			t.Fatalf("%d refusals counted, want %d", n, size.rounds*len(attacks))
		}
		if s.runtime().EnableElectUncleanMaster || len(s.Groups()) != 1 {
			t.Fatal("a stranger changed the settings or the sets")
		}
		intact("the stranger's requests")
	})

	t.Run("spoofed heartbeats from the broker network", func(t *testing.T) {
		refused := s.Refusals()["heartbeat_takeover"]
		for round := 0; round < size.rounds; round++ {
			w := dialFrom(t, insiderHost, s.Addr().String())
			for id := int64(1); id <= 2; id++ {
				hb := request(codec.BrokerHeartbeat, int32(id), "clusterName", "DefaultCluster", "brokerName", "broker-a",
					"brokerId", strconv.FormatInt(id, 10), "brokerAddr", "6.6.6.6:10911", "heartbeatTimeoutMills", "1")
				hb.Flag = codec.FlagOneway
				w.Send(hb)
			}
			if r := w.Call(request(codec.ControllerGetMetadataInfo, 9)); r.Code != codec.Success {
				t.Fatalf("1005: %d", r.Code)
			}
			w.NC.Close()
		}
		if n := s.Refusals()["heartbeat_takeover"] - refused; n != uint64(2*size.rounds) {
			t.Fatalf("%d takeovers refused, want %d", n, 2*size.rounds)
		}
		// The spoofers' connections are closed and the scans run: the
		// master is still alive, nothing was elected.
		s.expiryScan()
		s.inactiveMasterScan()
		intact("the spoofed heartbeats")
	})

	t.Run("set and liveness floods", func(t *testing.T) {
		runtime.GC()
		heap0 := liveHeapBytes()
		start := time.Now()
		// 1013 for new sets, pipelined on one connection.
		w := dialFrom(t, insiderHost, s.Addr().String())
		go func() {
			for i := 0; i < size.floodSets; i++ {
				w.Send(request(codec.ControllerApplyBrokerID, int32(i+1), "clusterName", "c", "brokerName", "flood-"+strconv.Itoa(i),
					"appliedBrokerId", "1", "registerCheckCode", "127.0.0.4:"+strconv.Itoa(i)+";1"))
			}
		}()
		codes := map[int32]int{}
		for i := 0; i < size.floodSets; i++ {
			codes[w.MustRecv().Code]++
		}
		if got := len(s.Groups()); got != maxSets {
			t.Fatalf("%d sets after a flood of %d, want the bound %d (replies %v)", got, size.floodSets, maxSets, codes)
		}
		if codes[codec.Success] != maxSets-1 || codes[codec.SystemError]+codes[codec.SystemBusy] != size.floodSets-maxSets+1 {
			t.Fatalf("replies %v", codes)
		}
		setsTook := time.Since(start)
		// Oneway 904 of made-up brokers on a few connections, each
		// followed by a 1005 whose answer says they were all served.
		start = time.Now()
		per := size.floodLive / size.floodConns
		done := make(chan error, size.floodConns)
		var flood []*remotingtest.Wire
		for c := 0; c < size.floodConns; c++ {
			w := dialFrom(t, insiderHost, s.Addr().String())
			flood = append(flood, w)
			go func() {
				var buf []byte
				for i := 0; i < per; i++ {
					hb := request(codec.BrokerHeartbeat, 0, "clusterName", "c", "brokerName", "ghost-"+strconv.Itoa(c),
						"brokerId", strconv.Itoa(i+1), "brokerAddr", "127.0.0.4:1", "heartbeatTimeoutMills", "600000")
					hb.Flag = codec.FlagOneway
					buf = codec.AppendFrame(buf, hb)
					if len(buf) > 64<<10 {
						if _, err := w.NC.Write(buf); err != nil {
							done <- err
							return
						}
						buf = buf[:0]
					}
				}
				buf = codec.AppendFrame(buf, request(codec.ControllerGetMetadataInfo, 1))
				if _, err := w.NC.Write(buf); err != nil {
					done <- err
					return
				}
				done <- recvPatiently(w)
			}()
		}
		for range size.floodConns {
			if err := <-done; err != nil {
				t.Fatalf("a flooding connection: %v", err)
			}
		}
		liveTook := time.Since(start)
		s.liveMu.Lock()
		entries := s.live.Len()
		s.liveMu.Unlock()
		if entries > maxLive+2 || entries < maxLive {
			t.Fatalf("%d liveness entries after a flood of %d, want the bound %d (+2 registered)", entries, size.floodLive, maxLive)
		}
		// What the state holds, once the flooding connections (and the
		// input buffers they hold, bounded by the listener's budget) are
		// gone.
		conns := s.remote.Stats().Conns
		w.NC.Close()
		for _, w := range flood {
			w.NC.Close()
		}
		remotingtest.WaitFor(t, "the flooding connections closed", func() bool { return s.remote.Stats().Conns <= conns-1-len(flood) })
		runtime.GC()
		runtime.GC()
		heap1 := liveHeapBytes()
		t.Logf("flood: %d sets in %v (bound %d), %d heartbeats in %v (bound %d); live heap %.1f -> %.1f MiB",
			size.floodSets, setsTook.Round(time.Millisecond), maxSets, size.floodLive, liveTook.Round(time.Millisecond), maxLive,
			float64(heap0)/(1<<20), float64(heap1)/(1<<20))
		// The bounds hold the state to a few MiB (the report's flood grew
		// it by 75 MiB); 64 MiB only catches a bound that stopped working.
		if heap1 > heap0+64<<20 {
			t.Fatalf("live heap grew from %d to %d MiB", heap0>>20, heap1>>20)
		}
		intact("the floods")
	})

	t.Run("the status page", func(t *testing.T) {
		view := func() status.ControllerView {
			st := s.Stats()
			return status.ControllerView{ID: s.ID(), Sets: st.Groups, BrokersAlive: st.BrokersAlive,
				Groups: s.GroupsUpTo(status.DefaultMaxRows)}
		}
		if n := len(s.GroupsUpTo(status.DefaultMaxRows)); n != min(maxSets, status.DefaultMaxRows) {
			t.Fatalf("GroupsUpTo gave %d sets", n)
		}
		h := status.ControllerHandler(view, "/", time.Now)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil))
		page := rec.Body.Bytes()
		shown := min(maxSets, status.DefaultMaxRows)
		if rec.Code != http.StatusOK || bytes.Count(page, []byte(`<tr class="set`)) != shown {
			t.Fatalf("status %d, %d set rows, want %d", rec.Code, bytes.Count(page, []byte(`<tr class="set`)), shown)
		}
		if more := maxSets - shown; more > 0 && !strings.Contains(string(page), `<p id="more-sets">`+strconv.Itoa(more)+" more broker sets not shown") {
			t.Fatalf("no note for the %d sets left out", more)
		}
		t.Logf("status page over %d sets: %d KiB", maxSets, len(page)>>10)
		intact("the status page")
	})
}

// recvPatiently waits for one reply on w for up to two minutes (a flooded
// node on a loaded machine may take longer than Wire's 5 s a read), without
// failing the test from the calling goroutine.
func recvPatiently(w *remotingtest.Wire) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := w.Recv()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if ne, ok := err.(interface{ Timeout() bool }); !ok || !ne.Timeout() {
			return err
		}
	}
}
