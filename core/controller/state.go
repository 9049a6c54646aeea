// The replicated state (broker sets with their ids, master and
// SyncStateSet) and the events that change it.

package controller

import (
	"fmt"
	"slices"
	"strings"
)

// Broker is one registered id of a broker set.
type Broker struct {
	ID        int64
	Addr      string // the address before the first ';' of CheckCode, or the latest 1003 address
	CheckCode string // registerCheckCode of the 1013 that bound the id
}

// Group is one broker set (all brokers sharing a brokerName) as the
// controller replicates it.
type Group struct {
	Cluster string // of the 1013 that created the set
	Name    string
	// NextID is what CONTROLLER_GET_NEXT_BROKER_ID hands out: it starts at 1
	// and counts the ids added, it is not the largest id plus one.
	NextID  int64
	Brokers []Broker // ascending by ID, never empty

	HasMaster   bool
	MasterID    int64 // meaningful only when HasMaster
	MasterEpoch int32 // 0 until the first election
	// SyncStateSet is ascending. It may name an id that is no longer
	// registered, and miss the master, only after CleanBrokerData.
	SyncStateSet      []int64
	SyncStateSetEpoch int32
}

// broker returns the index of id in g.Brokers.
func (g *Group) broker(id int64) (int, bool) {
	return slices.BinarySearchFunc(g.Brokers, id, func(b Broker, id int64) int {
		switch {
		case b.ID < id:
			return -1
		case b.ID > id:
			return 1
		}
		return 0
	})
}

// Registered reports whether id is bound in the set.
func (g *Group) Registered(id int64) bool {
	_, ok := g.broker(id)
	return ok
}

// Addr returns the recorded address of id.
func (g *Group) Addr(id int64) (string, bool) {
	if i, ok := g.broker(id); ok {
		return g.Brokers[i].Addr, true
	}
	return "", false
}

// InSyncStateSet reports whether id is in the SyncStateSet.
func (g *Group) InSyncStateSet(id int64) bool {
	_, ok := slices.BinarySearch(g.SyncStateSet, id)
	return ok
}

func (g *Group) clone() Group {
	c := *g
	c.Brokers = slices.Clone(g.Brokers)
	c.SyncStateSet = slices.Clone(g.SyncStateSet)
	return c
}

// State is the controller's replicated state machine: every node applies
// the same events in log order and holds the same State. It is not safe for
// concurrent use (see the package comment for how the network side
// serialises access).
//
// Java keeps two maps per brokerName (BrokerReplicaInfo and SyncStateInfo)
// that a partial CleanBrokerData can leave with one entry and not the
// other; a set then half exists. Here a set is one Group, which exists
// while at least one id is registered in it.
type State struct {
	groups map[string]*Group
}

// NewState returns an empty state.
func NewState() *State {
	return &State{groups: make(map[string]*Group)}
}

// Len is the number of broker sets.
func (s *State) Len() int { return len(s.groups) }

// Group returns a copy of the broker set named name.
func (s *State) Group(name string) (Group, bool) {
	g, ok := s.groups[name]
	if !ok {
		return Group{}, false
	}
	return g.clone(), true
}

// Names returns the broker set names, sorted.
func (s *State) Names() []string {
	names := make([]string, 0, len(s.groups))
	for n := range s.groups {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Registered reports whether id is bound in the set named brokerName,
// created by cluster: the brokers whose heartbeats a node's liveness table
// always admits.
func (s *State) Registered(cluster, brokerName string, id int64) bool {
	g, ok := s.groups[brokerName]
	return ok && g.Cluster == cluster && g.Registered(id)
}

// IsMaster reports whether id is the recorded master of the set named
// brokerName. This is Java's test when a broker becomes inactive (its
// connection closed or its heartbeats stopped): only the master's loss
// triggers an election. Like Java it ignores the cluster name.
func (s *State) IsMaster(brokerName string, id int64) bool {
	g, ok := s.groups[brokerName]
	return ok && g.HasMaster && g.MasterID == id
}

// EventType numbers the events as Java's EventType does (4, a read event,
// is never produced).
type EventType uint8

// The events of §4.2 of the reference.
const (
	EventAlterSyncStateSet   EventType = 1
	EventApplyBrokerID       EventType = 2
	EventElectMaster         EventType = 3
	EventCleanBrokerData     EventType = 5
	EventUpdateBrokerAddress EventType = 6
)

func (t EventType) String() string {
	switch t {
	case EventAlterSyncStateSet:
		return "AlterSyncStateSet"
	case EventApplyBrokerID:
		return "ApplyBrokerId"
	case EventElectMaster:
		return "ElectMaster"
	case EventCleanBrokerData:
		return "CleanBrokerData"
	case EventUpdateBrokerAddress:
		return "UpdateBrokerAddress"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is one change to the state. Which fields count depends on Type:
//
//	AlterSyncStateSet    BrokerName, IDs (the new set)
//	ApplyBrokerId        Cluster, BrokerName, Addr, BrokerID, CheckCode
//	ElectMaster          BrokerName, Elected, BrokerID (when Elected)
//	CleanBrokerData      BrokerName, IDs (the ids to remove; none = the whole set)
//	UpdateBrokerAddress  Cluster, BrokerName, Addr, BrokerID
//
// Strings may alias a request buffer: Apply copies what it keeps.
type Event struct {
	Type       EventType
	Cluster    string
	BrokerName string
	BrokerID   int64
	Addr       string
	CheckCode  string
	Elected    bool
	IDs        []int64
}

func (e Event) String() string {
	switch e.Type {
	case EventAlterSyncStateSet:
		return fmt.Sprintf("AlterSyncStateSet(%s, %v)", e.BrokerName, e.IDs)
	case EventApplyBrokerID:
		return fmt.Sprintf("ApplyBrokerId(%s/%s, %d, %s, %s)", e.Cluster, e.BrokerName, e.BrokerID, e.Addr, e.CheckCode)
	case EventElectMaster:
		if e.Elected {
			return fmt.Sprintf("ElectMaster(%s, %d)", e.BrokerName, e.BrokerID)
		}
		return fmt.Sprintf("ElectMaster(%s, none)", e.BrokerName)
	case EventCleanBrokerData:
		if len(e.IDs) == 0 {
			return fmt.Sprintf("CleanBrokerData(%s, all)", e.BrokerName)
		}
		return fmt.Sprintf("CleanBrokerData(%s, %v)", e.BrokerName, e.IDs)
	case EventUpdateBrokerAddress:
		return fmt.Sprintf("UpdateBrokerAddress(%s/%s, %d, %s)", e.Cluster, e.BrokerName, e.BrokerID, e.Addr)
	}
	return e.Type.String()
}

// Apply applies events in order. It is deterministic and never fails: an
// event that names a set or id that does not exist (any more) changes
// nothing, as in Java, so a log replays to the same state on every node.
func (s *State) Apply(events ...Event) {
	for i := range events {
		s.apply(&events[i])
	}
}

func (s *State) apply(e *Event) {
	g := s.groups[e.BrokerName]
	switch e.Type {
	case EventAlterSyncStateSet:
		if g == nil {
			return
		}
		g.SyncStateSet = normIDs(e.IDs)
		g.SyncStateSetEpoch++
	case EventApplyBrokerID:
		if g == nil {
			name := strings.Clone(e.BrokerName)
			s.groups[name] = &Group{
				Cluster: strings.Clone(e.Cluster),
				Name:    name,
				NextID:  2,
				Brokers: []Broker{{ID: e.BrokerID, Addr: strings.Clone(e.Addr), CheckCode: strings.Clone(e.CheckCode)}},
				// Java starts the set as Collections.emptySet(), written [].
				SyncStateSet: []int64{},
			}
			return
		}
		i, ok := g.broker(e.BrokerID)
		if ok {
			return
		}
		g.Brokers = slices.Insert(g.Brokers, i, Broker{ID: e.BrokerID, Addr: strings.Clone(e.Addr), CheckCode: strings.Clone(e.CheckCode)})
		g.NextID++
	case EventElectMaster:
		if g == nil {
			return
		}
		g.MasterEpoch++
		if !e.Elected {
			g.HasMaster, g.MasterID = false, 0
			return
		}
		g.HasMaster, g.MasterID = true, e.BrokerID
		g.SyncStateSet = []int64{e.BrokerID}
		g.SyncStateSetEpoch++
	case EventCleanBrokerData:
		if g == nil {
			return
		}
		if len(e.IDs) == 0 {
			delete(s.groups, e.BrokerName)
			return
		}
		// Epochs and the master are left alone, as in Java: the master may
		// now name a removed id, which the next election replaces.
		g.Brokers = slices.DeleteFunc(g.Brokers, func(b Broker) bool { return slices.Contains(e.IDs, b.ID) })
		g.SyncStateSet = slices.DeleteFunc(g.SyncStateSet, func(id int64) bool { return slices.Contains(e.IDs, id) })
		if len(g.Brokers) == 0 {
			delete(s.groups, e.BrokerName)
		}
	case EventUpdateBrokerAddress:
		if g == nil {
			return
		}
		if i, ok := g.broker(e.BrokerID); ok {
			g.Brokers[i].Addr = strings.Clone(e.Addr)
		}
	}
}

// normIDs returns an ascending copy of ids without duplicates.
func normIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	if out == nil {
		out = []int64{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
