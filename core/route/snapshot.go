// snapshot.go holds Snapshot: the table's whole state as a plain value,
// exported for a warm restart and restored into an empty table.

package route

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/body"
)

// Snapshot is everything a route answer depends on: the broker groups, the
// clusters' member lists, the live entries, the filter servers, the topics'
// queue data and the static-topic mappings. Connections are not part of
// it (a restored broker has none until it registers again), nor are the
// run-time switches (the configuration sets those).
//
// Slices and maps reachable from a Snapshot that Export returns are shared
// with the table's immutable state: they must not be modified.
type Snapshot struct {
	// TakenAt is the table's clock (unix ms) when the snapshot was taken;
	// Restore counts every broker as last heard then.
	TakenAt  int64
	Groups   []GroupState   // sorted by Name
	Clusters []ClusterState // sorted by Name
	Brokers  []BrokerState  // the live entries, sorted by Cluster, Addr
	Filters  []FilterState  // sorted by Cluster, Addr
	Topics   []TopicState   // sorted by Topic
	Mappings []MappingState // sorted by Topic; topics without queue data too
}

// GroupState is one brokerAddrTable entry.
type GroupState struct {
	Cluster, Name, Zone string
	ActingMaster        bool
	Addrs               []body.BrokerAddr // sorted by ID, each ID once
}

// ClusterState is one clusterAddrTable entry. Its names usually are the
// groups of the cluster, but a group keeps the cluster of its first
// registration while a later registration naming another cluster adds the
// name there too, as in Java.
type ClusterState struct {
	Name    string
	Brokers []string // sorted
}

// BrokerState is one brokerLiveTable entry.
type BrokerState struct {
	Cluster, Addr string // the entry's key
	Name          string // brokerName and id of the latest registration
	ID            int64
	HAAddr        string
	Timeout       int64 // ms
	LastUpdate    int64 // unix ms, the table's clock; informative (Restore uses TakenAt)
	DataVersion   body.DataVersion
	// Owner is the credentials' name of the latest registration
	// (Registration.Owner): a restored broker registering again with the
	// same credentials is not a takeover.
	Owner string
}

// FilterState is one address's filter servers.
type FilterState struct {
	Cluster, Addr string
	Servers       []string
}

// TopicState is one topic's queue data, one queue per broker group.
type TopicState struct {
	Topic  string
	Queues []body.QueueData // sorted by BrokerName, each once
}

// MappingState is one static topic's TopicQueueMappingInfo JSON by broker
// name.
type MappingState struct {
	Topic    string
	ByBroker map[string][]byte
}

// Entries counts the (topic, broker group) queue entries of s: what its
// size grows with.
func (s *Snapshot) Entries() int {
	n := 0
	for i := range s.Topics {
		n += len(s.Topics[i].Queues)
	}
	return n
}

// Generation counts the table's committed changes: registrations (each
// refreshes its broker's entry), unregistrations, expiries, topic and
// permission changes. A heartbeat alone does not count. A writer of
// snapshots compares it with the value it saw at its last snapshot to
// skip a table that did not change; it never decreases.
func (t *Table) Generation() uint64 { return t.gen.Load() }

// Export returns the table's state as of one instant, with the
// generation it reflects. It holds the writers' lock only to copy the
// broker tables and to collect the topic entries, which are immutable; the
// queue data is shared, not copied.
func (t *Table) Export() (*Snapshot, uint64) {
	t.mu.Lock()
	s := &Snapshot{
		TakenAt:  t.now(),
		Groups:   make([]GroupState, 0, len(t.groups)),
		Clusters: make([]ClusterState, 0, len(t.clusters)),
		Brokers:  make([]BrokerState, 0, len(t.live)),
		Filters:  make([]FilterState, 0, len(t.filters)),
		Mappings: make([]MappingState, 0, len(t.mappings)),
	}
	gen := t.gen.Load()
	for _, g := range t.groups {
		s.Groups = append(s.Groups, GroupState{Cluster: g.cluster, Name: g.name, Zone: g.zone,
			ActingMaster: g.actingMaster, Addrs: g.addrs})
	}
	for c, set := range t.clusters {
		s.Clusters = append(s.Clusters, ClusterState{Name: c, Brokers: slices.Sorted(maps.Keys(set))})
	}
	for _, li := range t.live {
		s.Brokers = append(s.Brokers, BrokerState{Cluster: li.key.cluster, Addr: li.key.addr, Name: li.name,
			ID: li.id, HAAddr: li.haAddr, Timeout: li.timeout, LastUpdate: li.lastUpdate, DataVersion: li.dv, Owner: li.owner})
	}
	for k, fs := range t.filters {
		s.Filters = append(s.Filters, FilterState{Cluster: k.cluster, Addr: k.addr, Servers: fs})
	}
	for topic, m := range t.mappings {
		s.Mappings = append(s.Mappings, MappingState{Topic: topic, ByBroker: m})
	}
	entries := make([]*topicEntry, 0, t.topics.Len())
	t.topics.Range(func(_ string, e *topicEntry) bool {
		entries = append(entries, e)
		return true
	})
	t.mu.Unlock()

	s.Topics = make([]TopicState, len(entries))
	for i, e := range entries {
		s.Topics[i] = TopicState{Topic: e.topic, Queues: e.queues}
	}
	slices.SortFunc(s.Groups, func(a, b GroupState) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Clusters, func(a, b ClusterState) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Brokers, func(a, b BrokerState) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Addr, b.Addr))
	})
	slices.SortFunc(s.Filters, func(a, b FilterState) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Addr, b.Addr))
	})
	slices.SortFunc(s.Topics, func(a, b TopicState) int { return strings.Compare(a.Topic, b.Topic) })
	slices.SortFunc(s.Mappings, func(a, b MappingState) int { return strings.Compare(a.Topic, b.Topic) })
	return s, gen
}

// ErrNotEmpty refuses a Restore into a table that already holds brokers
// or topics: a snapshot is a starting state, never merged.
var ErrNotEmpty = errors.New("restore into a table that is not empty")

// Restore loads s into t, which must be empty, with every broker counted
// as last heard at s.TakenAt: a broker that does not register again
// expires on its own timeout from then, as if the server had never
// stopped, and one that registers again replaces its entry as any
// registration does. Restored brokers have no connection. A snapshot that
// breaks the table's invariants (a group without addresses, queue data of
// an unknown group, a duplicate) is refused whole with an error and t
// stays empty. Restore keeps s's slices and maps: s must not be modified
// afterwards.
func (t *Table) Restore(s *Snapshot) error {
	return t.restore(s, func(BrokerState) int64 { return s.TakenAt })
}

// RestoreAged is Restore with each broker counted as last heard as long
// before now (the table's clock) as it was last heard before s.TakenAt:
// for a snapshot of a table that kept running until s.TakenAt (another
// NameServer's), where each broker's LastUpdate is when it was really
// last heard. A broker that had stopped reporting there is not given a
// fresh timeout here: it expires when it would have expired there.
// Only ages cross from s's clock to the table's, so the two clocks need
// not agree.
func (t *Table) RestoreAged(s *Snapshot) error {
	now := t.now()
	return t.restore(s, func(b BrokerState) int64 {
		// A LastUpdate after TakenAt (a clock that stepped back there)
		// counts as heard at TakenAt, now here.
		return now - max(0, s.TakenAt-b.LastUpdate)
	})
}

// restore is Restore with each broker last heard at heard(b).
func (t *Table) restore(s *Snapshot, heard func(BrokerState) int64) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.groups) > 0 || len(t.live) > 0 || len(t.clusters) > 0 || t.topics.Len() > 0 || len(t.mappings) > 0 {
		return ErrNotEmpty
	}
	w := write{t: t}
	names := make([]string, 0, len(s.Groups))
	for _, g := range s.Groups {
		put(&w.groups, g.Name, &brokerGroup{cluster: g.Cluster, name: g.Name, zone: g.Zone,
			actingMaster: g.ActingMaster, addrs: slices.Clone(g.Addrs)})
		names = append(names, g.Name)
	}
	for _, c := range s.Clusters {
		set := make(map[string]struct{}, len(c.Brokers))
		for _, n := range c.Brokers {
			set[n] = struct{}{}
		}
		put(&w.clusters, c.Name, set)
	}
	for _, f := range s.Filters {
		put(&w.filters, addrKey{f.Cluster, f.Addr}, f.Servers)
	}
	for _, b := range s.Brokers {
		// Capped as a registration would be: the snapshot may come from a
		// server with a larger maxHeartbeatTimeoutMillis.
		timeout := min(b.Timeout, t.opts.MaxBrokerTimeout)
		if timeout <= 0 {
			timeout = t.opts.DefaultBrokerTimeout
		}
		key := addrKey{b.Cluster, b.Addr}
		put(&w.live, key, &liveInfo{key: key, lastUpdate: heard(b), timeout: timeout, dv: b.DataVersion,
			haAddr: b.HAAddr, name: b.Name, id: b.ID, owner: b.Owner})
	}
	for _, m := range s.Mappings {
		put(&w.mappings, m.Topic, m.ByBroker)
	}
	w.updateView(names, len(s.Clusters) > 0)
	w.topics = make([]topicUpdate, 0, len(s.Topics))
	perGroup := make(map[string]int, len(s.Groups))
	for _, ts := range s.Topics {
		e := &topicEntry{topic: ts.Topic, queues: ts.Queues, mapping: w.mappings[ts.Topic]}
		w.topics = append(w.topics, topicUpdate{e.topic, e})
		for _, q := range ts.Queues {
			perGroup[q.BrokerName]++
		}
	}
	// The brokerName -> topics index at its final size: commit fills it
	// with one insertion per queue, and growing 100 maps to 10 000 topics
	// each was most of a 1M-entry restore.
	for name, n := range perGroup {
		t.brokerTopics[name] = make(map[string]struct{}, n)
	}
	w.commit()
	return nil
}

// check verifies what the table's code takes for granted of its state.
func (s *Snapshot) check() error {
	groups := make(map[string]bool, len(s.Groups))
	for _, g := range s.Groups {
		if g.Name == "" || groups[g.Name] {
			return fmt.Errorf("broker group %q: empty or repeated name", g.Name)
		}
		groups[g.Name] = true
		if len(g.Addrs) == 0 {
			return fmt.Errorf("broker group %q has no address", g.Name)
		}
		for i, a := range g.Addrs {
			if a.ID < 0 || a.Addr == "" || i > 0 && a.ID <= g.Addrs[i-1].ID {
				return fmt.Errorf("broker group %q: ids not sorted, repeated or negative, or an empty address", g.Name)
			}
		}
	}
	seenC := make(map[string]bool, len(s.Clusters))
	for _, c := range s.Clusters {
		if seenC[c.Name] {
			return fmt.Errorf("cluster %q repeated", c.Name)
		}
		seenC[c.Name] = true
	}
	type key struct{ c, a string }
	seenB := make(map[key]bool, len(s.Brokers))
	for _, b := range s.Brokers {
		if b.Addr == "" || seenB[key{b.Cluster, b.Addr}] {
			return fmt.Errorf("live broker %s/%q: empty or repeated address", b.Cluster, b.Addr)
		}
		seenB[key{b.Cluster, b.Addr}] = true
	}
	seenF := make(map[key]bool, len(s.Filters))
	for _, f := range s.Filters {
		if len(f.Servers) == 0 || seenF[key{f.Cluster, f.Addr}] {
			return fmt.Errorf("filter servers of %s/%s: empty or repeated", f.Cluster, f.Addr)
		}
		seenF[key{f.Cluster, f.Addr}] = true
	}
	for i, ts := range s.Topics {
		if i > 0 && ts.Topic <= s.Topics[i-1].Topic {
			return fmt.Errorf("topic %q: topics not sorted or repeated", ts.Topic)
		}
		if len(ts.Queues) == 0 {
			return fmt.Errorf("topic %q has no queue data", ts.Topic)
		}
		for j, q := range ts.Queues {
			if !groups[q.BrokerName] {
				return fmt.Errorf("topic %q: queue data of unknown broker group %q", ts.Topic, q.BrokerName)
			}
			if j > 0 && q.BrokerName <= ts.Queues[j-1].BrokerName {
				return fmt.Errorf("topic %q: queue data not sorted by broker or repeated", ts.Topic)
			}
		}
	}
	seenM := make(map[string]bool, len(s.Mappings))
	for _, m := range s.Mappings {
		if seenM[m.Topic] {
			return fmt.Errorf("mappings of topic %q repeated", m.Topic)
		}
		seenM[m.Topic] = true
	}
	return nil
}
