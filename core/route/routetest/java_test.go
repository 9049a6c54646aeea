// The Java model on its own: where it and rocketns's rules part, and
// where they must not.

package routetest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
)

func jreg(name, addr string, id int64, conn uint64, topics ...string) *Registration {
	r := &Registration{Cluster: "c1", Name: name, Addr: addr, ID: id, HA: "ha-" + addr, Conn: conn, Acting: new(bool),
		DV: body.DataVersion{Timestamp: 1, Counter: 1}, Filters: []string{}}
	for _, tp := range topics {
		r.Topics = append(r.Topics, body.TopicConfig{TopicName: tp, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6})
	}
	return r
}

func mustAccept(t *testing.T, m *Java, r *Registration, now int64) RegisterResult {
	t.Helper()
	res, ref := m.Register(r, now)
	if ref != Accepted {
		t.Fatalf("register %s/%d at %s: refusal %d", r.Name, r.ID, r.Addr, ref)
	}
	return res
}

func members(m *Java, name string) string { return fmt.Sprint(m.MemberGroup(name)) }

// The last finding, reduced: broker b3 id 1 registers from A over
// connection 1, then from B over connection 2. The group holds B; A's
// liveness entry stays, tied to connection 1. When connection 1 closes,
// Java finds that entry, looks for a group of c1 holding A, finds none and
// does nothing: the entry stays for good, and QUERY_DATA_VERSION keeps
// calling A's data version unchanged. rocketns drops it ("Liveness without
// a group"). The group is the same either way.
func TestIDMovesToAnotherAddress(t *testing.T) {
	t.Parallel()
	for _, dev := range []Deviations{{}, Rocketns()} {
		m := NewJava(dev)
		mustAccept(t, m, jreg("b3", "A", 1, 1, "T", "U"), 10)
		mustAccept(t, m, jreg("b3", "B", 1, 2, "T", "U"), 20)
		if got := members(m, "b3"); got != "[{1 B}]" {
			t.Fatalf("%+v: members %s", dev, got)
		}
		m.ConnClosed(1)
		if got := members(m, "b3"); got != "[{1 B}]" {
			t.Fatalf("%+v: members after A's connection closed: %s", dev, got)
		}
		changed, stored := m.QueryDataVersion("c1", "A", body.DataVersion{Timestamp: 1, Counter: 1}, 30)
		if dev.LivenessWithoutGroup {
			if !changed || stored != nil {
				t.Fatalf("rocketns: A still live: changed %v stored %v", changed, stored)
			}
		} else if changed || stored == nil {
			t.Fatalf("Java: A's entry should stay: changed %v stored %v", changed, stored)
		}
		// Java's entry of A expires at every scan and stays all the same.
		if closed := m.Scan(30 + DefaultTimeout + 1); dev.LivenessWithoutGroup == (m.Live[AddrKey{"c1", "A"}] != nil) {
			t.Fatalf("%+v: after the scan (closed %v) live %v", dev, closed, m.Live)
		}
		if m.Ambiguous != "" {
			t.Fatal(m.Ambiguous)
		}
	}
}

// Java closes an expired broker's channel; the close then unregisters the
// first live registration still on it. rocketns leaves such a connection
// open ("Expired brokers' connections").
func TestExpiryClosesTheChannel(t *testing.T) {
	t.Parallel()
	for _, dev := range []Deviations{{}, Rocketns()} {
		m := NewJava(dev)
		quick := jreg("a", "A", 0, 1, "T", "U")
		to := int64(1000)
		quick.Timeout = &to
		mustAccept(t, m, quick, 0)
		mustAccept(t, m, jreg("b", "B", 0, 1, "T", "V"), 0)
		mustAccept(t, m, jreg("c", "C", 0, 2, "T", "W"), 0)
		alone := jreg("d", "D", 0, 3, "T", "X")
		alone.Timeout = &to
		mustAccept(t, m, alone, 0)
		closed := m.Scan(1001)
		want, wantB := "[1 3]", "[]"
		if dev.ExpiredConns {
			want, wantB = "[3]", "[{0 B}]"
		}
		if fmt.Sprint(closed) != want || members(m, "b") != wantB || members(m, "a") != "[]" || members(m, "c") != "[{0 C}]" {
			t.Fatalf("%+v: closed %v, a %s b %s c %s", dev, closed, members(m, "a"), members(m, "b"), members(m, "c"))
		}
	}
}

// Java refuses a first one-topic registration after adding the broker name
// to its cluster and creating an empty group; rocketns changes nothing.
func TestOneTopicRefusal(t *testing.T) {
	t.Parallel()
	for _, dev := range []Deviations{{}, Rocketns()} {
		m := NewJava(dev)
		if _, ref := m.Register(jreg("a", "A", 0, 1, "T"), 0); ref != RegisterFailed {
			t.Fatalf("refusal %d", ref)
		}
		ci := m.ClusterInfo()
		if got := len(ci.Brokers); (got == 1) == dev.AllOrNothing {
			t.Fatalf("%+v: cluster info %+v", dev, ci)
		}
	}
}

// Filter servers: an empty list clears them, nil leaves them.
func TestFilterServers(t *testing.T) {
	t.Parallel()
	m := NewJava(Deviations{})
	r := jreg("a", "A", 0, 1, "T", "U")
	r.Filters = []string{"f:1"}
	mustAccept(t, m, r, 0)
	r.Filters = nil
	mustAccept(t, m, r, 1)
	if rt, _ := m.Route("T"); fmt.Sprint(rt.FilterServerTable) != "map[A:[f:1]]" {
		t.Fatalf("filters %v", rt.FilterServerTable)
	}
	r.Filters = []string{}
	mustAccept(t, m, r, 2)
	if rt, _ := m.Route("T"); len(rt.FilterServerTable) != 0 {
		t.Fatalf("filters %v", rt.FilterServerTable)
	}
}

// Finding 5 of the divergence report, pinned: random interleavings of one
// broker id registering from two addresses, over connections opened and
// closed, unregistering and expiring, each address over connections of its
// own. Java and rocketns must then agree on every group, route and
// answer about the groups; the only difference allowed is the liveness of
// an address no group holds (and so 322 about it). The Java side has the
// fence: an unregistration naming an older identity of the address is the
// README's "Unregistration fenced by identity", which changes groups on
// purpose (without it Java drops B from the group when B's stale id-1
// unregistration arrives after B registered as id 0).
func TestOneIDTwoAddressesAgree(t *testing.T) {
	t.Parallel()
	seeds := 300
	if os.Getenv("ROCKETNS_SOAK") != "" {
		seeds = 20000
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		java, ours := NewJava(Deviations{Fence: true}), NewJava(Rocketns())
		conn := map[string]uint64{"A": 1, "B": 2}
		next := uint64(3)
		now := int64(0)
		var log []string
		for step := 0; step < 40; step++ {
			addr := []string{"A", "B"}[rng.IntN(2)]
			var op string
			switch rng.IntN(10) {
			case 0, 1, 2, 3:
				r := jreg("b3", addr, int64(rng.IntN(2)), conn[addr], "T", "U")
				r.DV.StateVersion = int64(rng.IntN(3))
				if rng.IntN(3) == 0 {
					to := int64(1000)
					r.Timeout = &to
				}
				op = fmt.Sprintf("register %s id %d sv %d conn %d timeout %v", addr, r.ID, r.DV.StateVersion, r.Conn, r.Timeout != nil)
				_, r1 := java.Register(r, now)
				_, r2 := ours.Register(r, now)
				if r1 != r2 {
					t.Fatalf("seed %d: %s: refusals %d %d", seed, op, r1, r2)
				}
			case 4, 5:
				op = fmt.Sprintf("close %s's conn %d", addr, conn[addr])
				java.ConnClosed(conn[addr])
				ours.ConnClosed(conn[addr])
				conn[addr] = next
				next++
			case 6:
				id := int64(rng.IntN(2))
				op = fmt.Sprintf("unregister %s id %d", addr, id)
				java.Unregister("c1", addr, "b3", id)
				ours.Unregister("c1", addr, "b3", id)
			case 7:
				op = "heartbeat " + addr
				java.Touch("c1", addr, now)
				ours.Touch("c1", addr, now)
			default:
				now += []int64{500, 1500, 200000}[rng.IntN(3)]
				c1, c2 := java.Scan(now), ours.Scan(now)
				op = fmt.Sprintf("clock %d, scan closes %v / %v", now, c1, c2)
				for _, c := range c1 {
					for a, ac := range conn {
						if ac == c {
							conn[a] = next
							next++
						}
					}
				}
				// rocketns closes fewer connections only when another live
				// registration uses them, which this world never has.
				if fmt.Sprint(c1) != fmt.Sprint(c2) {
					// Java also closes the connections of entries no group
					// holds, which rocketns already dropped.
					for _, c := range c2 {
						if !slices.Contains(c1, c) {
							t.Fatalf("seed %d: %s", seed, op)
						}
					}
				}
			}
			log = append(log, op)
			if java.Ambiguous != "" {
				break
			}
			a, b := body.AppendClusterInfo(nil, java.ClusterInfo()), body.AppendClusterInfo(nil, ours.ClusterInfo())
			ra, _ := java.Route("T")
			rb, _ := ours.Route("T")
			if string(a) != string(b) || fmt.Sprint(ra) != fmt.Sprint(rb) {
				t.Fatalf("seed %d: Java and rocketns disagree after:\n  %v\njava %s %+v\nours %s %+v", seed, log, a, ra, b, rb)
			}
			for k, li := range ours.Live {
				if jl := java.Live[k]; jl == nil || *jl != *li {
					t.Fatalf("seed %d: rocketns has liveness %v %+v that Java has not (%+v) after %v", seed, k, li, jl, log)
				}
			}
			for k := range java.Live {
				if ours.Live[k] == nil {
					if g := java.Groups["b3"]; g != nil && slices.ContainsFunc(g.BrokerData().Addrs, func(a body.BrokerAddr) bool { return a.Addr == k.Addr }) {
						t.Fatalf("seed %d: rocketns dropped the liveness of %v, which a group holds, after %v", seed, k, log)
					}
				}
			}
		}
	}
}

// The divergence report's last finding: broker b3 id 1 registers from A
// and from B over the same connection, A last; the connection closes; B
// registers again with a lower stateVersion over a new one. Which live
// entry Java's close finds first is hash order:
//   - B first: B is in no group, so Java unregisters nothing; A's entry
//     (stateVersion 1) makes B's new registration stale, and Java ends
//     with A, the older address, which is closed: the report's end state.
//   - A first: Java unregisters A, the group goes, and B's registration
//     makes it anew, as in rocketns.
//
// rocketns ("Connection close") drops every broker of the connection and
// ends with B in both cases; it keeps that rule. It is also what a close
// should do once it removes only the registrations the connection made
// that no newer one replaced: A's is current, B's live entry is a leftover
// of a registration A's replaced.
func TestOneConnectionTwoAddresses(t *testing.T) {
	t.Parallel()
	play := func(m *Java, firstB bool) string {
		r := jreg("b3", "A", 1, 7, "T", "U")
		r.DV.StateVersion = 1
		mustAccept(t, m, r, 0)
		r = jreg("b3", "B", 1, 7, "T", "U")
		r.DV.StateVersion = 1
		mustAccept(t, m, r, 1)
		r = jreg("b3", "A", 1, 7, "T", "U")
		r.DV.StateVersion = 1
		mustAccept(t, m, r, 2)
		switch {
		case m.Dev.ConnClose:
			m.ConnClosed(7)
		case firstB:
			m.ConnClosedFinding(7, AddrKey{"c1", "B"})
		default:
			m.ConnClosedFinding(7, AddrKey{"c1", "A"})
		}
		r = jreg("b3", "B", 1, 8, "T", "U")
		if _, ref := m.Register(r, 3); ref != Accepted {
			t.Fatalf("refusal %d", ref)
		}
		return members(m, "b3")
	}
	if got := play(NewJava(Deviations{}), true); got != "[{1 A}]" {
		t.Fatalf("Java, B found first: %s, want the report's [{1 A}]", got)
	}
	if got := play(NewJava(Deviations{}), false); got != "[{1 B}]" {
		t.Fatalf("Java, A found first: %s", got)
	}
	if got := play(NewJava(Rocketns()), false); got != "[{1 B}]" {
		t.Fatalf("rocketns: %s", got)
	}
	m := NewJava(Deviations{})
	play(m, true)
	if m.Ambiguous != "" {
		t.Fatal(m.Ambiguous)
	}
}
