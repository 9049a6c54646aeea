// Broker groups: the writers' mutable brokerAddrTable entries and the
// immutable view of them that readers use.

package route

import (
	"maps"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/rocketns/rocketns/codec/body"
)

// addrKey keys liveness and filter servers by (cluster, address), like 5.x:
// the same address may be alive in two clusters.
type addrKey struct {
	cluster, addr string
}

// brokerGroup is one brokerAddrTable entry, owned by writers (under mu). A
// stored group is not modified: a write changes its own copy (editGroup).
type brokerGroup struct {
	cluster, name string
	zone          string
	actingMaster  bool
	addrs         []body.BrokerAddr // sorted by ID
}

func (g *brokerGroup) addrOf(id int64) (string, bool) {
	i, ok := g.find(id)
	if !ok {
		return "", false
	}
	return g.addrs[i].Addr, true
}

func (g *brokerGroup) has(id int64) bool {
	_, ok := g.find(id)
	return ok
}

func (g *brokerGroup) find(id int64) (int, bool) {
	return slices.BinarySearchFunc(g.addrs, id, func(a body.BrokerAddr, id int64) int {
		switch {
		case a.ID < id:
			return -1
		case a.ID > id:
			return 1
		}
		return 0
	})
}

// put stores id -> addr and returns the previous address ("" if none).
func (g *brokerGroup) put(id int64, addr string) string {
	i, ok := g.find(id)
	if ok {
		prev := g.addrs[i].Addr
		g.addrs[i].Addr = addr
		return prev
	}
	g.addrs = slices.Insert(g.addrs, i, body.BrokerAddr{ID: id, Addr: addr})
	return ""
}

// removeAddrExcept drops every id other than keep whose address is addr. It
// reports whether anything was removed.
func (g *brokerGroup) removeAddrExcept(addr string, keep int64) bool {
	n := len(g.addrs)
	g.addrs = slices.DeleteFunc(g.addrs, func(a body.BrokerAddr) bool { return a.Addr == addr && a.ID != keep })
	return len(g.addrs) != n
}

// removeAddr drops every id whose address is addr and reports whether
// anything was removed.
func (g *brokerGroup) removeAddr(addr string) bool {
	n := len(g.addrs)
	g.addrs = slices.DeleteFunc(g.addrs, func(a body.BrokerAddr) bool { return a.Addr == addr })
	return len(g.addrs) != n
}

func (g *brokerGroup) hasAddr(addr string) (int64, bool) {
	for _, a := range g.addrs {
		if a.Addr == addr {
			return a.ID, true
		}
	}
	return 0, false
}

func (g *brokerGroup) hasMaster() bool {
	return len(g.addrs) > 0 && g.addrs[0].ID == 0
}

// groupView is the readers' immutable copy of a group plus the filter
// servers of its addresses.
type groupView struct {
	data    body.BrokerData
	filters map[string][]string // addr -> filter servers; nil when none
}

func (a *groupView) equal(b *groupView) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := &a.data, &b.data
	if x.Cluster != y.Cluster || x.BrokerName != y.BrokerName || x.ZoneName != y.ZoneName ||
		x.EnableActingMaster != y.EnableActingMaster || !slices.Equal(x.Addrs, y.Addrs) ||
		len(a.filters) != len(b.filters) {
		return false
	}
	for k, v := range a.filters {
		w, ok := b.filters[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// brokerView is what readers see of the broker tables. Nothing reachable
// from it is modified after it is published.
type brokerView struct {
	groups   map[string]*groupView
	clusters map[string][]string // cluster -> sorted brokerNames
	// clusterInfo caches the encoded GET_BROKER_CLUSTER_INFO body.
	clusterInfo atomic.Pointer[[]byte]
}

// groupView snapshots g with the filter servers w leaves its addresses.
func (w *write) groupView(g *brokerGroup) *groupView {
	v := &groupView{data: body.BrokerData{
		Cluster:            g.cluster,
		BrokerName:         g.name,
		Addrs:              slices.Clone(g.addrs),
		ZoneName:           g.zone,
		EnableActingMaster: g.actingMaster,
	}}
	if len(w.t.filters) > 0 || len(w.filters) > 0 {
		for _, a := range g.addrs {
			if fs := w.filter(addrKey{g.cluster, a.Addr}); len(fs) > 0 {
				if v.filters == nil {
					v.filters = map[string][]string{}
				}
				v.filters[a.Addr] = fs
			}
		}
	}
	return v
}

// updateView rebuilds the views of names (a name with no group is removed
// from the view) and, when clustersDirty, the cluster table, as w leaves
// them. It stages one new view if anything differs and returns the names
// whose group view changed.
func (w *write) updateView(names []string, clustersDirty bool) []string {
	cur := w.view
	if cur == nil {
		cur = w.t.view.Load()
	}
	var changed []string
	var fresh []*groupView
	for _, name := range names {
		if slices.Contains(changed, name) {
			continue
		}
		var nv *groupView
		if g := w.group(name); g != nil {
			nv = w.groupView(g)
		}
		if nv.equal(cur.groups[name]) {
			continue
		}
		changed = append(changed, name)
		fresh = append(fresh, nv)
	}
	if len(changed) == 0 && !clustersDirty {
		return nil
	}
	next := &brokerView{groups: cur.groups, clusters: cur.clusters}
	if len(changed) > 0 {
		next.groups = make(map[string]*groupView, len(cur.groups)+1)
		for k, v := range cur.groups {
			next.groups[k] = v
		}
		for i, name := range changed {
			if fresh[i] == nil {
				delete(next.groups, name)
			} else {
				next.groups[name] = fresh[i]
			}
		}
	}
	if clustersDirty {
		next.clusters = make(map[string][]string, len(w.t.clusters)+len(w.clusters))
		add := func(c string, set map[string]struct{}) {
			if set != nil {
				next.clusters[c] = slices.Sorted(maps.Keys(set))
			}
		}
		for c, set := range w.t.clusters {
			if _, staged := w.clusters[c]; !staged {
				add(c, set)
			}
		}
		for c, set := range w.clusters {
			add(c, set)
		}
	}
	w.view = next
	return changed
}

// groupsWithAddr lists the brokerNames of cluster whose group holds addr.
func (w *write) groupsWithAddr(cluster, addr string) []string {
	var out []string
	for name := range w.cluster(cluster) {
		if g := w.group(name); g != nil && g.cluster == cluster {
			if _, ok := g.hasAddr(addr); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// AppendClusterInfo appends the GET_BROKER_CLUSTER_INFO body (always the
// legacy dialect) to dst. It takes no lock; the encoding is cached until the
// broker tables change.
func (t *Table) AppendClusterInfo(dst []byte) []byte {
	v := t.view.Load()
	if b := v.clusterInfo.Load(); b != nil {
		return append(dst, *b...)
	}
	ci := &body.ClusterInfo{
		Brokers:  make([]body.BrokerData, 0, len(v.groups)),
		Clusters: v.clusters,
	}
	for _, g := range v.groups {
		ci.Brokers = append(ci.Brokers, g.data)
	}
	sort.Slice(ci.Brokers, func(i, j int) bool { return ci.Brokers[i].BrokerName < ci.Brokers[j].BrokerName })
	b := body.AppendClusterInfo(nil, ci)
	if !v.clusterInfo.CompareAndSwap(nil, &b) {
		b = *v.clusterInfo.Load()
	}
	return append(dst, b...)
}

// BrokerMemberGroup returns the brokerId -> address entries of brokerName
// (GET_BROKER_MEMBER_GROUP), sorted by id; nil when the group is unknown. The
// slice is shared and must not be modified.
func (t *Table) BrokerMemberGroup(brokerName string) []body.BrokerAddr {
	if g := t.view.Load().groups[brokerName]; g != nil {
		return g.data.Addrs
	}
	return nil
}

// SystemTopicList returns GET_SYSTEM_TOPIC_LIST_FROM_NS's data: every
// cluster name and the brokerNames clusterAddrTable lists under it, each name
// once (Java fills a set), clusters first, each part sorted; and the
// smallest-id address of the first group, by name, that has one (Java takes
// hash order for both).
func (t *Table) SystemTopicList() (topics []string, brokerAddr string) {
	v := t.view.Load()
	seen := make(map[string]bool, len(v.clusters)+len(v.groups))
	for c := range v.clusters {
		seen[c] = true
		topics = append(topics, c)
	}
	sort.Strings(topics)
	var names []string
	for _, members := range v.clusters {
		for _, n := range members {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	topics = append(topics, names...)
	groups := make([]string, 0, len(v.groups))
	for n := range v.groups {
		groups = append(groups, n)
	}
	sort.Strings(groups)
	for _, n := range groups {
		if a := v.groups[n].data.Addrs; len(a) > 0 {
			brokerAddr = a[0].Addr
			break
		}
	}
	if topics == nil {
		topics = []string{}
	}
	return topics, brokerAddr
}
