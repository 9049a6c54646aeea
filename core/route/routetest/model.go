// model.go holds the simulated cluster's layout and the model of what the
// table must hold.

package routetest

import (
	"fmt"
	"slices"

	"github.com/rocketns/rocketns/codec/body"
)

// Layout is the simulated cluster: groups of a master (id 0) and a slave
// (id 1), so brokers = 2*Groups and broker index bi is member bi%2 of group
// bi/2; each topic has queues on Replicas groups spread Groups/Replicas
// apart, so every topic lives on several brokers and every group holds
// about Topics*Replicas/Groups of them.
type Layout struct{ Groups, Topics, Replicas int }

// Brokers is the number of simulated brokers.
func (l Layout) Brokers() int { return 2 * l.Groups }

// TopicGroups lists topic i's groups in name order, the order of a route's
// queue and broker data.
func (l Layout) TopicGroups(i int) []int {
	stride := l.Groups / l.Replicas
	out := make([]int, 0, l.Replicas)
	for k := 0; k < l.Replicas; k++ {
		out = append(out, (i+k*stride)%l.Groups)
	}
	slices.Sort(out)
	return out
}

// GroupName is group g's brokerName; zero-padded so name order is group
// order up to 1000 groups.
func GroupName(g int) string { return fmt.Sprintf("broker-%03d", g) }

// GroupOf is the inverse of GroupName, for readers that must place a queue
// they did not expect.
func GroupOf(name string) (g int, ok bool) {
	_, err := fmt.Sscanf(name, "broker-%03d", &g)
	return g, err == nil
}

// Cluster spreads the groups over three clusters, so the cluster info has
// more than one entry to get wrong.
func Cluster(g int) string { return fmt.Sprintf("soak-c%d", g%3) }

// Topic is topic i's name; zero-padded so the names sort like the indexes.
func Topic(i int) string { return fmt.Sprintf("soak-topic-%05d", i) }

// Addr is the broker address of member id of group g: unique per broker, and
// derivable from (g, id), so a reader can check an address it is handed.
func Addr(g int, id int64) string { return fmt.Sprintf("10.%d.%d.%d:10911", 1+id, g/256, g%256) }

// HAAddr is the HA address the same broker registers with.
func HAAddr(g int, id int64) string { return fmt.Sprintf("10.%d.%d.%d:10912", 1+id, g/256, g%256) }

// Queues makes the queue count depend on topic and version, so a stale or
// misplaced queue entry shows in the bytes.
func Queues(topic, version int) int32 { return int32(1 + (topic+version)%8) }

// Listed reports whether broker bi is in the cluster info: after a race the
// server's answer says which serial order happened.
func Listed(ci *body.ClusterInfo, bi int) bool {
	g, id := bi/2, int64(bi%2)
	for _, bd := range ci.Brokers {
		if bd.BrokerName != GroupName(g) {
			continue
		}
		for _, a := range bd.Addrs {
			if a.ID == id && a.Addr == Addr(g, id) {
				return true
			}
		}
	}
	return false
}

// Model is what the table must hold, by the rules for 4.x brokers: only a
// master writes queue data, all of it on a new DataVersion or when its
// address is new to the group; a group's queue data goes with its last
// member. It is kept plain (no maps to grow, no locks) so that it is
// obviously right and a mismatch points at the table.
type Model struct {
	l           Layout
	Present     []bool  // by broker index
	GroupTopics [][]int // by group: its topics, ascending, for registrations
	qver        []int   // by group: the version of its queue data; -1: none
}

// NewModel is the model of an empty table.
func NewModel(l Layout) *Model {
	m := &Model{l: l, Present: make([]bool, l.Brokers()), qver: make([]int, l.Groups), GroupTopics: make([][]int, l.Groups)}
	for g := range m.qver {
		m.qver[g] = -1
	}
	for i := 0; i < l.Topics; i++ {
		for _, g := range l.TopicGroups(i) {
			m.GroupTopics[g] = append(m.GroupTopics[g], i)
		}
	}
	return m
}

// Register records broker bi's registration with version.
func (m *Model) Register(bi, version int) {
	m.Present[bi] = true
	if bi%2 == 0 {
		m.qver[bi/2] = version
	}
}

// Remove records broker bi's going, however it went.
func (m *Model) Remove(bi int) {
	m.Present[bi] = false
	if g := bi / 2; !m.Present[2*g] && !m.Present[2*g+1] {
		m.qver[g] = -1
	}
}

// BrokerData is group g's entry as a route or the cluster info shows it: its
// present members by id.
func (m *Model) BrokerData(g int) body.BrokerData {
	bd := body.BrokerData{Cluster: Cluster(g), BrokerName: GroupName(g)}
	for id := int64(0); id < 2; id++ {
		if m.Present[2*g+int(id)] {
			bd.Addrs = append(bd.Addrs, body.BrokerAddr{ID: id, Addr: Addr(g, id)})
		}
	}
	return bd
}

// Route is topic i's exact standard-dialect body, or nil for TOPIC_NOT_EXIST.
// Since the model holds only live brokers, an exact match also proves no
// route points at an evicted one.
func (m *Model) Route(i int) []byte {
	r := &body.TopicRoute{FilterServerTable: map[string][]string{}}
	for _, g := range m.l.TopicGroups(i) {
		if m.qver[g] < 0 {
			continue
		}
		n := Queues(i, m.qver[g])
		r.QueueDatas = append(r.QueueDatas, body.QueueData{BrokerName: GroupName(g), ReadQueueNums: n, WriteQueueNums: n, Perm: 6})
		r.BrokerDatas = append(r.BrokerDatas, m.BrokerData(g))
	}
	if len(r.QueueDatas) == 0 {
		return nil
	}
	return body.AppendTopicRoute(nil, r, body.Standard)
}

// ClusterInfo is the exact cluster info body.
func (m *Model) ClusterInfo() []byte {
	ci := &body.ClusterInfo{Clusters: map[string][]string{}}
	for g := 0; g < m.l.Groups; g++ {
		if bd := m.BrokerData(g); len(bd.Addrs) > 0 {
			ci.Brokers = append(ci.Brokers, bd)
			ci.Clusters[bd.Cluster] = append(ci.Clusters[bd.Cluster], bd.BrokerName)
		}
	}
	return body.AppendClusterInfo(nil, ci)
}

// Counts are the table's sizes the model can predict. They are not
// route.Stats, which this package cannot name; each suite converts.
type Counts struct{ BrokerGroups, BrokerAddrs, Clusters, Topics int }

// Counts is what the table's counters must say.
func (m *Model) Counts() Counts {
	var c Counts
	clusters := map[string]bool{}
	for g := 0; g < m.l.Groups; g++ {
		if n := len(m.BrokerData(g).Addrs); n > 0 {
			c.BrokerGroups++
			c.BrokerAddrs += n
			clusters[Cluster(g)] = true
		}
	}
	c.Clusters = len(clusters)
	for i := 0; i < m.l.Topics; i++ {
		for _, g := range m.l.TopicGroups(i) {
			if m.qver[g] >= 0 {
				c.Topics++
				break
			}
		}
	}
	return c
}

// LiveAddrs is the set of registered broker addresses: a route that differs
// from the model must still name none outside it.
func (m *Model) LiveAddrs() map[string]bool {
	out := map[string]bool{}
	for bi, ok := range m.Present {
		if ok {
			out[Addr(bi/2, int64(bi%2))] = true
		}
	}
	return out
}
