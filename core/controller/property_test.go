// Randomized property and differential test: random broker traffic
// (heartbeats, restarts, id races, elections of every trigger, set
// changes, cleans, clock jumps) against a leader, with the invariants
// checked after every step and three copies compared: the leader, a
// follower fed the encoded log, and a node restored from a snapshot taken
// at a random point, which must then answer every request as the leader.
//
// A few thousand steps per seed run in plain go test; ROCKETNS_SOAK=1 runs
// far more. ROCKETNS_CTL_SEED=<n> replays one seed.

package controller

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestPropertyRandomTraffic(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3, 4}
	steps := 3000
	if os.Getenv("ROCKETNS_SOAK") != "" {
		seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		steps = 100000
	}
	if v := os.Getenv("ROCKETNS_CTL_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	}
	if testing.Short() {
		steps = 500
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			newSim(t, seed).run(steps)
		})
	}
}

// sim is one leader with its follower and, once restored, a snapshot copy.
type sim struct {
	t        *testing.T
	rng      *rand.Rand
	leader   *State
	follower *State
	restored *State // nil until a snapshot is taken
	log      [][]byte
	live     *Liveness
	now      int64
	settings Settings

	names []string
	// bound is every (set, id) -> check code ever accepted and not cleaned.
	bound map[string]map[int64]string
	// masterCleaned marks sets whose recorded master lost its id to a
	// clean (Java keeps such a master until the next election; its id may
	// even be bound again meanwhile).
	masterCleaned map[string]bool
	prev          map[string]Group
	step          int
	stats         map[string]int
}

func newSim(t *testing.T, seed uint64) *sim {
	return &sim{
		t:             t,
		rng:           rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		leader:        NewState(),
		follower:      NewState(),
		live:          NewLiveness(),
		now:           1_000_000,
		names:         []string{"broker-a", "broker-b", "broker-c"},
		bound:         map[string]map[int64]string{},
		masterCleaned: map[string]bool{},
		prev:          map[string]Group{},
		stats:         map[string]int{},
	}
}

func (m *sim) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("step %d: %s", m.step, fmt.Sprintf(format, args...))
}

func (m *sim) run(steps int) {
	for m.step = 0; m.step < steps; m.step++ {
		m.once()
		m.checkInvariants()
		if m.restored == nil && m.rng.IntN(steps/4+1) == 0 {
			m.snapshotRestore()
		}
	}
	m.checkReplay(true)
	m.t.Logf("%v", m.stats)
	for _, k := range []string{"elect:0", "elect:2011", "alter:0", "applyid:0", "applyid:2014", "clean:0", "trigger:2004"} {
		if m.stats[k] == 0 && steps >= 3000 {
			m.t.Errorf("no %s in %d steps: the generator misses a path", k, steps)
		}
	}
}

func (m *sim) env() Env { return Env{Live: m.live, Now: m.now, Settings: m.settings} }

func (m *sim) name() string { return m.names[m.rng.IntN(len(m.names))] }

func (m *sim) id() int64 { return int64(1 + m.rng.IntN(5)) }

func (m *sim) addr(id int64) string {
	return "10.0.0." + strconv.FormatInt(id, 10) + ":" + strconv.Itoa(30911+10*m.rng.IntN(2))
}

// once performs one random action.
func (m *sim) once() {
	switch r := m.rng.IntN(100); {
	case r < 30:
		m.heartbeat()
	case r < 35:
		m.now += int64(m.rng.IntN(15000))
		m.scan()
	case r < 38:
		name, id := m.name(), m.id()
		for _, in := range m.live.ConnClosed(connOf(name, id)) {
			m.inactive(in)
		}
	case r < 48:
		name := m.name()
		m.decide("nextid", codec.ControllerGetNextBrokerID, MapFields{"clusterName": "C", "brokerName": name}, nil)
		id := m.id()
		if g, ok := m.leader.Group(name); ok && m.rng.IntN(2) == 0 {
			id = g.NextID
		}
		// Few distinct check codes per id, so retries and races both occur.
		code := m.addr(id) + ";" + strconv.Itoa(m.rng.IntN(3))
		m.decide("applyid", codec.ControllerApplyBrokerID, MapFields{"clusterName": "C", "brokerName": name,
			"appliedBrokerId": strconv.FormatInt(id, 10), "registerCheckCode": code}, nil)
	case r < 56:
		id := m.id()
		m.decide("register", codec.ControllerRegisterBroker, MapFields{"clusterName": "C", "brokerName": m.name(),
			"brokerId": strconv.FormatInt(id, 10), "brokerAddress": m.addr(id)}, nil)
	case r < 68:
		f := MapFields{"clusterName": "C", "brokerName": m.name(), "brokerId": strconv.FormatInt(m.id(), 10)}
		if m.rng.IntN(3) == 0 {
			f["designateElect"] = "true"
		}
		if m.rng.IntN(8) == 0 {
			f["brokerId"] = "-1"
		}
		m.decide("elect", codec.ControllerElectMaster, f, nil)
	case r < 85:
		m.alter()
	case r < 89:
		f := MapFields{"clusterName": "C", "brokerName": m.name()}
		if m.rng.IntN(3) > 0 {
			f["brokerControllerIdsToClean"] = strconv.FormatInt(m.id(), 10) + ";" + strconv.FormatInt(m.id(), 10)
		}
		if m.rng.IntN(3) == 0 {
			f["isCleanLivingBroker"] = "true"
		}
		m.decide("clean", codec.CleanBrokerData, f, nil)
	case r < 95:
		m.decide("replica", codec.ControllerGetReplicaInfo, MapFields{"brokerName": m.name()}, nil)
		m.decide("syncdata", codec.ControllerGetSyncStateData, nil, body.AppendBrokerNames(nil, m.names))
	case r < 97:
		m.settings.EnableElectUncleanMaster = !m.settings.EnableElectUncleanMaster
	default:
		m.scan()
	}
}

func connOf(name string, id int64) uint64 { return uint64(len(name))<<8 | uint64(id) }

func (m *sim) heartbeat() {
	name, id := m.name(), m.id()
	k := LiveKey{"C", name, id}
	epoch, offset := int32(m.rng.IntN(4)), int64(m.rng.IntN(1000))
	if in, ok := m.live.Info(k); ok && m.rng.IntN(4) > 0 {
		epoch, offset = in.Epoch, in.MaxOffset+int64(m.rng.IntN(100))
	}
	hb := Heartbeat{ClusterName: "C", BrokerName: name, BrokerID: id, HasBrokerID: true,
		BrokerAddr: m.addr(id), Epoch: epoch, MaxOffset: offset, TimeoutMillis: 10000,
		ElectionPriority: int32(m.rng.IntN(3)) - 1}
	before, had := m.live.Info(k)
	m.live.Heartbeat(&hb, connOf(name, id), m.now)
	after, _ := m.live.Info(k)
	if had && (after.Epoch < before.Epoch || after.Epoch == before.Epoch && after.MaxOffset < before.MaxOffset) {
		m.fatalf("liveness went back: %+v -> %+v", before, after)
	}
	if !m.live.Alive(k, m.now) {
		m.fatalf("%v not alive right after its heartbeat", k)
	}
}

// scan is the node's periodic work: expiry, then the inactive-master scan.
func (m *sim) scan() {
	for _, in := range m.live.Expire(m.now) {
		if m.live.Alive(in.Key, m.now) {
			m.fatalf("expired %v is alive", in.Key)
		}
		m.inactive(in)
	}
	for _, name := range InactiveMasters(m.leader, m.live, m.now) {
		m.trigger(name)
	}
}

func (m *sim) inactive(in Inactive) {
	if m.leader.IsMaster(in.Key.BrokerName, in.Key.BrokerID) {
		m.trigger(in.Key.BrokerName)
	}
}

// trigger retries a controller-triggered election as the glue does.
func (m *sim) trigger(name string) {
	for range 3 {
		d := m.leader.ControllerElect(name, m.env())
		m.commit("trigger", d)
		if d.Reply.Code == codec.Success {
			return
		}
	}
}

func (m *sim) alter() {
	name := m.name()
	g, ok := m.leader.Group(name)
	master := m.id()
	epoch, sssEpoch := int32(m.rng.IntN(3)), int32(m.rng.IntN(3))
	if ok && m.rng.IntN(4) > 0 {
		if g.HasMaster {
			master = g.MasterID
		}
		epoch, sssEpoch = g.MasterEpoch, g.SyncStateSetEpoch
	}
	var set []int64
	if ok {
		for _, b := range g.Brokers {
			if b.ID == master || m.rng.IntN(2) == 0 {
				set = append(set, b.ID)
			}
		}
	}
	if m.rng.IntN(10) == 0 {
		set = append(set, m.id())
	}
	m.decide("alter", codec.ControllerAlterSyncStateSet, MapFields{"brokerName": name,
		"masterBrokerId": strconv.FormatInt(master, 10), "masterEpoch": strconv.FormatInt(int64(epoch), 10)},
		body.AppendSyncStateSet(nil, normIDs(set), sssEpoch))
}

func (m *sim) decide(what string, code int32, f Fields, b []byte) {
	d, ok := m.leader.decide(code, f, b, m.env())
	if !ok {
		m.fatalf("%s not decided", what)
	}
	if m.restored != nil {
		r, _ := m.restored.decide(code, f, b, m.env())
		if !reflect.DeepEqual(d, r) {
			m.fatalf("%s: the restored node answers %+v, the leader %+v", what, r, d)
		}
	}
	m.commit(what, d)
}

// commit replicates d's events to every copy, then checks that the reply
// predicted the state they produce.
func (m *sim) commit(what string, d Decision) {
	m.stats[what+":"+strconv.Itoa(int(d.Reply.Code))]++
	if d.Reply.Code != codec.Success && len(d.Events) > 0 && d.Reply.Code != codec.ControllerMasterNotAvailable {
		m.fatalf("%s: %d with events %v", what, d.Reply.Code, d.Events)
	}
	if len(d.Events) == 0 {
		return
	}
	pre, _ := m.leader.Group(d.Events[0].BrokerName)
	entry := EncodeBatch(nil, d.Events)
	back, err := DecodeBatch(entry)
	if err != nil || !bytes.Equal(EncodeBatch(nil, back), entry) {
		m.fatalf("%s: batch does not round-trip: %v", what, err)
	}
	m.log = append(m.log, entry)
	m.leader.Apply(d.Events...)
	for _, s := range []*State{m.follower, m.restored} {
		if s == nil {
			continue
		}
		if err := s.ApplyEntry(entry); err != nil {
			m.fatalf("%s: %v", what, err)
		}
	}
	for _, e := range d.Events {
		m.trackBinding(e)
		switch {
		case e.Type == EventElectMaster:
			delete(m.masterCleaned, e.BrokerName)
		case e.Type == EventCleanBrokerData && pre.HasMaster && slices.Contains(e.IDs, pre.MasterID):
			if _, ok := m.leader.Group(e.BrokerName); ok {
				m.masterCleaned[e.BrokerName] = true
			}
		}
	}
	m.checkPrediction(what, d, pre)
}

func (m *sim) trackBinding(e Event) {
	switch e.Type {
	case EventApplyBrokerID:
		ids := m.bound[e.BrokerName]
		if ids == nil {
			ids = map[int64]string{}
			m.bound[e.BrokerName] = ids
		}
		if code, ok := ids[e.BrokerID]; ok && code != e.CheckCode {
			g, _ := m.leader.Group(e.BrokerName)
			if i, ok := g.broker(e.BrokerID); ok && g.Brokers[i].CheckCode != code {
				m.fatalf("id %s/%d rebound from %q to %q", e.BrokerName, e.BrokerID, code, g.Brokers[i].CheckCode)
			}
			m.fatalf("an ApplyBrokerId for a bound id was accepted: %v", e)
		}
		ids[e.BrokerID] = e.CheckCode
	case EventCleanBrokerData:
		if _, ok := m.leader.Group(e.BrokerName); !ok {
			delete(m.bound, e.BrokerName)
			delete(m.prev, e.BrokerName)
			delete(m.masterCleaned, e.BrokerName)
			return
		}
		for _, id := range e.IDs {
			delete(m.bound[e.BrokerName], id)
		}
	}
}

// checkPrediction compares a success reply with the state after commit
// (§9.8: replies predict post-commit values); pre is the set before.
func (m *sim) checkPrediction(what string, d Decision, pre Group) {
	r := d.Reply
	if r.Code != codec.Success {
		return
	}
	switch what {
	case "alter":
		g, _ := m.leader.Group(d.Events[0].BrokerName)
		want, _ := r.ExtValue("newSyncStateSetEpoch")
		s, err := body.DecodeSyncStateSet(r.Body)
		if err != nil || want != strconv.Itoa(int(g.SyncStateSetEpoch)) || s.Epoch != g.SyncStateSetEpoch ||
			!slices.Equal(s.IDs, g.SyncStateSet) {
			m.fatalf("alter reply %v %s does not match the state %+v", r.Ext, r.Body, g)
		}
	case "elect", "trigger":
		g, _ := m.leader.Group(d.Events[0].BrokerName)
		id, _ := r.ExtValue("masterBrokerId")
		me, _ := r.ExtValue("masterEpoch")
		se, _ := r.ExtValue("syncStateSetEpoch")
		if !g.HasMaster || id != strconv.FormatInt(g.MasterID, 10) || me != strconv.Itoa(int(g.MasterEpoch)) ||
			se != strconv.Itoa(int(g.SyncStateSetEpoch)) || d.RoleChange == nil || d.RoleChange.MasterID != g.MasterID {
			m.fatalf("elect reply %v does not match the state %+v", r.Ext, g)
		}
		if pre.MasterEpoch > 0 && !m.live.Alive(LiveKey{g.Cluster, g.Name, g.MasterID}, m.now) {
			m.fatalf("elected %d, which is not alive", g.MasterID)
		}
		if pre.MasterEpoch > 0 && !m.settings.EnableElectUncleanMaster && !pre.InSyncStateSet(g.MasterID) {
			m.fatalf("elected %d from outside the set %v without unclean elections", g.MasterID, pre.SyncStateSet)
		}
	}
}

func (m *sim) checkInvariants() {
	for _, name := range m.leader.Names() {
		g, _ := m.leader.Group(name)
		if p, ok := m.prev[name]; ok {
			if g.MasterEpoch < p.MasterEpoch || g.SyncStateSetEpoch < p.SyncStateSetEpoch {
				m.fatalf("%s epochs went down: %+v -> %+v", name, p, g)
			}
			if (g.HasMaster != p.HasMaster || g.HasMaster && g.MasterID != p.MasterID) && g.MasterEpoch == p.MasterEpoch {
				m.fatalf("%s master changed without a new masterEpoch: %+v -> %+v", name, p, g)
			}
		}
		if g.HasMaster && !m.masterCleaned[name] && !g.InSyncStateSet(g.MasterID) {
			m.fatalf("%s: master %d not in its SyncStateSet %v", name, g.MasterID, g.SyncStateSet)
		}
		for _, b := range g.Brokers {
			if code := m.bound[name][b.ID]; code != b.CheckCode {
				m.fatalf("%s/%d bound to %q, tracked %q", name, b.ID, b.CheckCode, code)
			}
		}
		m.prev[name] = g
	}
	if m.step%97 == 0 {
		m.checkReplay(m.step%2000 < 97)
	}
}

// checkReplay compares the copies: the follower (fed the encoded entries as
// they came), the restored node, and with full a fresh state replaying the
// whole log.
func (m *sim) checkReplay(full bool) {
	want := m.leader.Snapshot()
	var replayed *State
	if full {
		replayed = NewState()
		for _, e := range m.log {
			if err := replayed.ApplyEntry(e); err != nil {
				m.fatalf("replay: %v", err)
			}
		}
	}
	for what, s := range map[string]*State{"follower": m.follower, "replayed log": replayed, "restored": m.restored} {
		if s != nil && !bytes.Equal(s.Snapshot(), want) {
			m.fatalf("%s differs from the leader", what)
		}
	}
}

func (m *sim) snapshotRestore() {
	snap := m.leader.Snapshot()
	m.restored = NewState()
	if err := m.restored.Restore(snap); err != nil {
		m.fatalf("restore: %v", err)
	}
	if !bytes.Equal(m.restored.Snapshot(), snap) {
		m.fatalf("snapshot -> restore -> snapshot differs")
	}
	for _, name := range m.leader.Names() {
		a, _ := m.leader.Group(name)
		b, _ := m.restored.Group(name)
		if !reflect.DeepEqual(a, b) {
			m.fatalf("restored %s = %+v, want %+v", name, b, a)
		}
	}
}
