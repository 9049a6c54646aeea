// Broker liveness (brokerLiveTable), its expiry heap, and unregistration by
// request, timeout or connection loss.

package route

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// liveInfo is one brokerLiveTable entry.
type liveInfo struct {
	key        addrKey
	lastUpdate int64 // unix ms
	timeout    int64 // ms
	dv         body.DataVersion
	conn       ConnID // of the latest registration
	haAddr     string
	name       string // brokerName and id of the latest registration, a
	id         int64  // hint for finding the group on expiry
	owner      string // the credentials of the latest registration (Registration.Owner)
	idx        int    // position in the expiry heap
}

// deadline is lastUpdate + timeout, saturated: Register caps the timeout,
// but an overflow here would expire a live broker at once, so the sum
// never wraps whatever it is given.
func (li *liveInfo) deadline() int64 {
	if li.timeout > 0 && li.lastUpdate > math.MaxInt64-li.timeout {
		return math.MaxInt64
	}
	return li.lastUpdate + li.timeout
}

// expiryHeap orders live entries by deadline so a scan costs O(expired log n)
// instead of a pass over every broker.
type expiryHeap []*liveInfo

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].deadline() < h[j].deadline() }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *expiryHeap) Push(x any) {
	li := x.(*liveInfo)
	li.idx = len(*h)
	*h = append(*h, li)
}
func (h *expiryHeap) Pop() any {
	old := *h
	li := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	li.idx = -1
	return li
}

// deadlines orders live entries as expiryHeap does but leaves their heap
// positions alone: a scan pops the expired from a copy of the heap, since
// the heap itself only changes when the scan commits.
type deadlines []*liveInfo

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(i, j int) bool { return h[i].deadline() < h[j].deadline() }
func (h deadlines) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlines) Push(x any)        { *h = append(*h, x.(*liveInfo)) }
func (h *deadlines) Pop() any {
	li := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return li
}

// Eviction is a broker address dropped from the tables.
type Eviction struct {
	Cluster, BrokerAddr, BrokerName string
	BrokerID                        int64
	Reason                          string // "timeout", "conn_closed", "unregistered"
	// Conn is the connection of the broker's latest registration; 0 if
	// none.
	Conn ConnID
	// CloseConn asks the server to close Conn: set on a timeout when no
	// live registration is left on that connection. Java closes an expired
	// broker's channel, so a broker that is stuck but still connected sees
	// the close, reconnects and registers again. A connection that still
	// carries another broker's live registration stays open: Java closes it
	// all the same, and the close then unregisters one of the brokers
	// still registered over it.
	CloseConn bool
	// MinIDChange is set when this address held its group's smallest id,
	// the group lives on and has enableActingMaster (Java notifies only
	// then).
	MinIDChange *MinBrokerIDChange
}

// Eviction reasons.
const (
	ReasonTimeout      = "timeout"
	ReasonConnClosed   = "conn_closed"
	ReasonUnregistered = "unregistered"
)

// touch refreshes key's liveness to now and returns its entry, nil when key
// is not registered. It needs no write: it stores one value, read from the
// clock before anything changes, and moves the entry in the heap, neither
// of which can fail part-way. Called under mu.
func (t *Table) touch(key addrKey, now int64) *liveInfo {
	li := t.live[key]
	if li != nil {
		li.lastUpdate = now
		heap.Fix(&t.expiry, li.idx)
	}
	return li
}

func (t *Table) connAdd(c ConnID, key addrKey) {
	if c == 0 {
		return
	}
	set := t.conns[c]
	if set == nil {
		set = map[addrKey]struct{}{}
		t.conns[c] = set
	}
	set[key] = struct{}{}
}

func (t *Table) connDel(c ConnID, key addrKey) {
	if set := t.conns[c]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(t.conns, c)
		}
	}
}

// QueryDataVersion answers QUERY_DATA_VERSION: changed when (cluster, addr)
// has no live entry or its stored DataVersion differs from dv (nil dv counts
// as changed). Like Java it also refreshes the broker's liveness, since 5.x
// brokers use it as their heartbeat towards old NameServers.
func (t *Table) QueryDataVersion(cluster, addr string, dv *body.DataVersion) (changed bool, stored body.DataVersion, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	li := t.touch(addrKey{cluster, addr}, t.now())
	if li == nil {
		return true, body.DataVersion{}, false
	}
	return dv == nil || *dv != li.dv, li.dv, true
}

// Heartbeat answers BROKER_HEARTBEAT: it refreshes (cluster, addr)'s liveness
// if registered (never registers implicitly) and reports whether it was.
func (t *Table) Heartbeat(cluster, addr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.touch(addrKey{cluster, addr}, t.now()) != nil
}

// unregReq is one address to unregister (Java UnRegisterBrokerRequestHeader).
type unregReq struct {
	cluster, addr, name string
	id                  int64
	li                  *liveInfo // already dropped from the live table, if any
	// newer, when set, is the live entry of a newer registration of the
	// address (the generation fence): it, the address's filter servers and
	// the group entry it owns stay.
	newer *liveInfo
}

// Unregister removes a broker address (UNREGISTER_BROKER) synchronously: its
// live entry and filter servers, and every id of brokerName at that address
// (by address, like Java). It returns the eviction, or nil when nothing was
// registered there.
//
// The generation fence: the live entry of (cluster, addr) remembers the
// brokerName and brokerId of the registration that created it. A request
// naming another brokerName or brokerId belongs to an older registration of
// the address (the broker re-registered as another id, a slave became
// master, the address moved to another group); Java removes by address and
// would wipe the newer registration. Such a request is fenced: the live
// entry and the filter servers, which belong to the newer registration,
// stay, and so does the newer registration's own entry in its group. What
// the older registration left behind still goes, as in Java:
//
//   - another brokerName: the address leaves group name whole. The newer
//     registration lives in another group, and nothing else would ever
//     remove the address from this one (expiry and connection loss find
//     the newer group), so the old group would route to it for good.
//   - the same brokerName, another id: only ids other than the newer one
//     go. A registration keeps one id per address in its group, so this
//     normally removes nothing.
//
// evs lists what did go (with no connection: the one on record is the newer
// registration's); fenced reports that the live entry was left alone.
// Without a live entry there is nothing newer to protect and the request
// applies as in Java.
func (t *Table) Unregister(cluster, addr, name string, id int64) (evs []Eviction, fenced bool) {
	evs, fenced, _ = t.UnregisterAs(cluster, addr, name, id, "", true)
	return evs, fenced
}

// UnregisterAs is Unregister for a request with credentials owner (see
// Registration.Owner): when the address's live registration was made with
// other credentials it changes nothing and returns ErrTakeover, unless
// override (the credentials own the broker name by configuration).
func (t *Table) UnregisterAs(cluster, addr, name string, id int64, owner string, override bool) ([]Eviction, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	evs, fenced, err := w.unregisterAs(cluster, addr, name, id, owner, override)
	if err == nil {
		w.commit()
	}
	return evs, fenced, err
}

func (w *write) unregisterAs(cluster, addr, name string, id int64, owner string, override bool) ([]Eviction, bool, error) {
	li := w.liveOf(addrKey{cluster, addr})
	if !override && li != nil && li.owner != owner {
		return nil, false, fmt.Errorf("unregister %s id %d: %w", name, id, ErrTakeover)
	}
	r := unregReq{cluster: cluster, addr: addr, name: name, id: id}
	if li != nil && (li.name != name || li.id != id) {
		r.newer = li
	}
	return w.unregister([]unregReq{r}, ReasonUnregistered), r.newer != nil, nil
}

// ScanExpired evicts every broker whose lastUpdate + timeout < now (strictly
// less, like Java: at exactly the deadline it is still live).
func (t *Table) ScanExpired() []Eviction {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	evs := w.scanExpired(t.now())
	w.commit()
	return evs
}

func (w *write) scanExpired(now int64) []Eviction {
	h := w.t.expiry
	if len(h) == 0 || h[0].deadline() >= now {
		return nil
	}
	// Popped from a copy, earliest first: the heap itself changes in commit.
	pending := deadlines(slices.Clone(h))
	var reqs []unregReq
	for len(pending) > 0 && pending[0].deadline() < now {
		li := heap.Pop(&pending).(*liveInfo)
		r := w.findBroker(li)
		// Dropped here, not by unregister, so that it goes even when no
		// group holds the address.
		r.li = w.dropLive(li.key)
		reqs = append(reqs, r)
	}
	evs := w.unregister(reqs, ReasonTimeout)
	for i := range evs {
		// After the whole batch, so that brokers expiring together on one
		// connection all ask for its close.
		if c := evs[i].Conn; c != 0 && w.connEmpty(c) {
			evs[i].CloseConn = true
		}
	}
	return evs
}

// ConnClosed unregisters every broker whose latest registration came over
// conn. Java drops only the first such broker it finds; a connection that
// carried several registrations (a proxy, a test harness) loses them all
// here, which is what its closing means.
func (t *Table) ConnClosed(conn ConnID) []Eviction {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := write{t: t}
	evs := w.connClosed(conn)
	w.commit()
	return evs
}

func (w *write) connClosed(conn ConnID) []Eviction {
	if conn == 0 {
		return nil
	}
	set := w.t.conns[conn]
	if len(set) == 0 {
		return nil
	}
	reqs := make([]unregReq, 0, len(set))
	for key := range set {
		reqs = append(reqs, w.findBroker(w.liveOf(key)))
	}
	return w.unregister(reqs, ReasonConnClosed)
}

// findBroker locates the group and id holding li's address, as Java's
// onChannelDestroy does: the group of the latest registration if it still
// holds the address, else any group of the same cluster that does.
func (w *write) findBroker(li *liveInfo) unregReq {
	req := unregReq{cluster: li.key.cluster, addr: li.key.addr, id: -1}
	if g := w.group(li.name); g != nil && g.cluster == li.key.cluster {
		if id, ok := g.hasAddr(li.key.addr); ok {
			req.name, req.id = g.name, id
			return req
		}
	}
	for name := range w.t.groups {
		g := w.group(name)
		if g == nil || g.cluster != li.key.cluster {
			continue
		}
		if id, ok := g.hasAddr(li.key.addr); ok {
			req.name, req.id = g.name, id
			return req
		}
	}
	return req
}

// unregister is Java's batch unregistration: one pass over reqs, then one
// new broker view, then the topic updates.
func (w *write) unregister(reqs []unregReq, reason string) []Eviction {
	if len(reqs) == 0 {
		return nil
	}
	var evs []Eviction
	var names []string // groups whose view may change
	removed := map[string]bool{}
	// reduced holds the requests' own groups that live on: only they may
	// lose the write bit (Java's reducedBroker). A group that merely shares
	// an address whose filter servers went is in names for its view alone.
	reduced := map[string]bool{}
	// minGone: groups whose smallest id left, with the eviction to carry the
	// notification (the last one of the batch for that group, like Java's
	// map).
	var minGone map[string]int
	clustersDirty := false
	for _, r := range reqs {
		key := addrKey{r.cluster, r.addr}
		var li *liveInfo
		if r.newer == nil {
			li = w.dropLive(key)
			if li == nil {
				li = r.li
			}
			if w.filter(key) != nil {
				names = append(names, w.groupsWithAddr(r.cluster, r.addr)...)
				put(&w.filters, key, nil)
			}
		}
		touched := false
		wasMin := false
		if g := w.editGroup(r.name); g != nil {
			wasMin = len(g.addrs) > 0 && r.id == g.addrs[0].ID
			if r.newer != nil && r.newer.name == g.name {
				touched = g.removeAddrExcept(r.addr, r.newer.id)
			} else {
				touched = g.removeAddr(r.addr)
			}
			names = append(names, g.name)
			if len(g.addrs) == 0 {
				put(&w.groups, g.name, nil)
				delete(reduced, g.name)
				removed[g.name] = true
				if w.cluster(r.cluster) != nil {
					set := w.editCluster(r.cluster)
					delete(set, g.name)
					if len(set) == 0 {
						put(&w.clusters, r.cluster, nil)
					}
					clustersDirty = true
				}
			} else if r.newer == nil || touched {
				// A fenced request that removed nothing leaves the group
				// as the newer registration made it.
				reduced[g.name] = true
			}
		}
		if li == nil && !touched {
			continue
		}
		// An unregistration's strings alias its request frame, which is
		// released after the reply while an eviction lives on (log lines,
		// the 905 notifier's goroutine): the eviction owns copies.
		ev := Eviction{Cluster: strings.Clone(r.cluster), BrokerAddr: strings.Clone(r.addr),
			BrokerName: strings.Clone(r.name), BrokerID: r.id, Reason: reason}
		if li != nil {
			ev.Conn = li.conn
			if ev.BrokerName == "" {
				ev.BrokerName, ev.BrokerID = li.name, li.id
			}
		}
		if wasMin && !removed[r.name] {
			if minGone == nil {
				minGone = map[string]int{}
			}
			minGone[r.name] = len(evs)
		}
		evs = append(evs, ev)
	}
	for name, i := range minGone {
		// The group as the whole batch left it, like Java, which keeps a
		// reference to the live map.
		if g := w.group(name); g != nil && g.actingMaster {
			evs[i].MinIDChange = minIDChange(g.name, slices.Clone(g.addrs), evs[i].BrokerAddr, "")
		}
	}
	changed := w.updateView(names, clustersDirty)
	var rules []queueRule
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		g := w.group(name)
		rule := queueRule{name: name, drop: removed[name], refresh: slices.Contains(changed, name)}
		if reduced[name] && g != nil && g.actingMaster && !g.hasMaster() {
			rule.perm = clearWrite
		}
		if rule.drop || rule.perm != nil || rule.refresh {
			rules = append(rules, rule)
		}
	}
	w.rewriteQueues(rules)
	return evs
}

func clearWrite(p int32) int32 { return p &^ PermWrite }
