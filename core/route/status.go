// A consistent, copied-out snapshot of every broker address for the status
// page and other admin readers.

package route

import (
	"cmp"
	"slices"
)

// Broker roles as BrokerStatus reports them: Java's BrokerRole is decided by
// the id alone (0 is the master), so is this.
const (
	RoleMaster = "master"
	RoleSlave  = "slave"
)

// BrokerStatus is one brokerId -> address entry of a broker group together
// with its brokerLiveTable entry.
type BrokerStatus struct {
	Cluster    string // the group's cluster
	BrokerName string
	ID         int64
	Addr       string
	Role       string // RoleMaster or RoleSlave
	// Live is false when the address has no live entry (it is then
	// unroutable and waits for a registration or an unregistration);
	// LastUpdate, Timeout, HAServerAddr and Conn are zero then.
	Live         bool
	LastUpdate   int64 // unix ms of the last registration or heartbeat
	Timeout      int64 // ms after LastUpdate the broker expires
	HAServerAddr string
	Zone         string // the group's zoneName
	// ActingMaster is the group's enableActingMaster flag; ActsAsMaster
	// marks the smallest-id slave of a master-less group that routes may
	// show as id 0 (the group has the flag and supportActingMaster is on).
	ActingMaster bool
	ActsAsMaster bool
	Conn         ConnID
}

// BrokerStatus returns every broker address, sorted by cluster, brokerName
// and id. It holds the writers' lock for the copy, so the snapshot is
// consistent but costs registrations a wait: meant for admin requests, not
// for the route path.
func (t *Table) BrokerStatus() []BrokerStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, g := range t.groups {
		n += len(g.addrs)
	}
	out := make([]BrokerStatus, 0, n)
	// byName finds live entries filed under another cluster than the
	// group's (a group keeps the cluster of its first registration, a later
	// one may name another); built only if some lookup misses.
	type nameAddr struct{ name, addr string }
	var byName map[nameAddr]*liveInfo
	acting := t.actingMaster.Load()
	for _, g := range t.groups {
		for i, a := range g.addrs {
			s := BrokerStatus{
				Cluster:      g.cluster,
				BrokerName:   g.name,
				ID:           a.ID,
				Addr:         a.Addr,
				Role:         RoleSlave,
				Zone:         g.zone,
				ActingMaster: g.actingMaster,
			}
			if a.ID == 0 {
				s.Role = RoleMaster
			}
			s.ActsAsMaster = acting && g.actingMaster && i == 0 && a.ID != 0
			li := t.live[addrKey{g.cluster, a.Addr}]
			if li == nil {
				if byName == nil {
					byName = make(map[nameAddr]*liveInfo, len(t.live))
					for _, l := range t.live {
						byName[nameAddr{l.name, l.key.addr}] = l
					}
				}
				li = byName[nameAddr{g.name, a.Addr}]
			}
			if li != nil {
				s.Live = true
				s.LastUpdate = li.lastUpdate
				s.Timeout = li.timeout
				s.HAServerAddr = li.haAddr
				s.Conn = li.conn
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b BrokerStatus) int {
		if c := cmp.Compare(a.Cluster, b.Cluster); c != 0 {
			return c
		}
		if c := cmp.Compare(a.BrokerName, b.BrokerName); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
