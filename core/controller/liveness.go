// The broker liveness table each controller node keeps from the heartbeats
// sent to it (Java's DefaultBrokerHeartbeatManager), with its expiry and
// connection-close rules.

package controller

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"strings"
)

// Defaults Java gives heartbeat fields a 904 leaves out.
const (
	DefaultHeartbeatTimeout   int64 = 10000 // ms, DEFAULT_BROKER_CHANNEL_EXPIRED_TIME
	DefaultElectionPriority   int32 = math.MaxInt32
	defaultHeartbeatEpoch     int32 = -1
	defaultHeartbeatOffset    int64 = -1
	defaultHeartbeatConfirm   int64 = -1
	heartbeatSuccessRemark          = "Heart beat success"
	heartbeatNoBrokerIDRemark       = "Heart beat with empty brokerId"
)

// LiveKey identifies a broker in the liveness table. Unlike the replicated
// state, liveness is keyed by cluster too, so a broker whose heartbeats name
// another cluster than the one its set was registered with never counts as
// alive (as in Java).
type LiveKey struct {
	Cluster    string
	BrokerName string
	BrokerID   int64
}

func cmpLiveKey(a, b LiveKey) int {
	if c := strings.Compare(a.Cluster, b.Cluster); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.BrokerID, b.BrokerID)
}

// LiveInfo is what the table records for a broker.
type LiveInfo struct {
	Addr string // from the latest heartbeat
	Conn uint64 // connection of the latest heartbeat, opaque to this package
	// Host is the source address of that connection (the zero Addr when
	// the caller did not say).
	Host       netip.Addr
	LastUpdate int64 // ms, the caller's clock
	Timeout    int64 // ms, heartbeatTimeoutMills of the latest heartbeat
	// Epoch, MaxOffset and ConfirmOffset only move forward: they are
	// replaced when a heartbeat has a greater epoch, or the same epoch and
	// a greater maxOffset.
	Epoch            int32
	MaxOffset        int64
	ConfirmOffset    int64
	ElectionPriority int32 // lower is preferred
}

// Inactive is a broker dropped from the table, for the caller to close its
// connection (on expiry, as Java does) and to ask State.IsMaster whether an
// election is due.
type Inactive struct {
	Key  LiveKey
	Info LiveInfo
}

type liveEntry struct {
	key  LiveKey
	info LiveInfo
}

// Liveness is a node's broker liveness table. Times are milliseconds on
// the caller's clock. It is not safe for concurrent use.
type Liveness struct {
	// Max, when positive, bounds the table: a heartbeat from a broker not
	// in it is refused (HeartbeatFull) while it holds Max brokers, unless
	// the broker is registered (Origin.Registered), so a flood of made-up
	// brokers cannot keep the real ones out.
	Max int

	entries map[LiveKey]*liveEntry
	conns   map[uint64][]*liveEntry
}

// Origin is where a heartbeat came from, as the caller knows it.
type Origin struct {
	Conn uint64     // the connection, opaque to this package
	Host netip.Addr // its source address; the zero Addr is nobody's host
	// Owner is set when the heartbeat was signed by an account that owns
	// the broker by configuration (an admin, or a broker account bound to
	// its brokerName).
	Owner bool
	// Registered is set when the broker is registered in the replicated
	// state: Max does not keep it out.
	Registered bool
}

// HeartbeatResult is what Record did with a heartbeat.
type HeartbeatResult uint8

const (
	// HeartbeatUpdated refreshed a broker already in the table.
	HeartbeatUpdated HeartbeatResult = iota
	// HeartbeatAdded added a broker.
	HeartbeatAdded
	// HeartbeatNoBrokerID recorded nothing: the heartbeat has no brokerId
	// (Java answers it 2005, see HeartbeatReply).
	HeartbeatNoBrokerID
	// HeartbeatHeld recorded nothing: another connection, from another
	// host, holds the broker and its heartbeats have not expired.
	HeartbeatHeld
	// HeartbeatFull recorded nothing: the broker is new, not registered,
	// and the table holds Max brokers.
	HeartbeatFull
	// HeartbeatTooLong recorded nothing: its cluster, broker name or
	// address is longer than MaxFieldBytes.
	HeartbeatTooLong
)

// NewLiveness returns an empty table.
func NewLiveness() *Liveness {
	return &Liveness{entries: make(map[LiveKey]*liveEntry), conns: make(map[uint64][]*liveEntry)}
}

// Len is the number of brokers in the table, alive or not yet expired.
func (l *Liveness) Len() int { return len(l.entries) }

// Heartbeat records hb, received at now on connection conn, and reports
// whether the broker was new to the table: Record from a connection whose
// host is unknown, for tests and tools.
func (l *Liveness) Heartbeat(hb *Heartbeat, conn uint64, now int64) bool {
	return l.Record(hb, Origin{Conn: conn}, now) == HeartbeatAdded
}

// Record records hb, received at now from from, and says what it did.
//
// A broker belongs to the connection that heartbeats for it. A heartbeat
// for it on another connection takes it over (its connection, address,
// host and timeout become the heartbeat's) only when the broker's own
// heartbeats have expired (now - lastUpdate > timeout), when the
// connection comes from the same host as the holder's (the broker
// reconnected, its old connection not yet seen closed), or when the
// heartbeat was signed by an account that owns the broker. Any other is
// refused whole (HeartbeatHeld): a peer that could move a broker to its
// own connection, then close it or send a 1 ms timeout, would make a live
// master look dead and force an election. A broker that restarted after
// its old connection closed is not in the table any more, and one whose
// heartbeats expired is taken over at once, so brokers restart as in Java.
// Java keeps the connection and address of a broker's first heartbeat for
// ever (and takes every heartbeat's timeout, from any connection).
//
// For a known broker it allocates nothing: hb's strings may point into a
// request buffer, and are copied only when a broker is added or changes
// address. Java also starts a new broker's confirmOffset at 0 whatever its
// first heartbeat says; here it is taken from that heartbeat (nothing in
// the controller reads it).
func (l *Liveness) Record(hb *Heartbeat, from Origin, now int64) HeartbeatResult {
	if !hb.HasBrokerID {
		return HeartbeatNoBrokerID
	}
	if len(hb.ClusterName) > MaxFieldBytes || len(hb.BrokerName) > MaxFieldBytes || len(hb.BrokerAddr) > MaxFieldBytes {
		return HeartbeatTooLong
	}
	k := LiveKey{Cluster: hb.ClusterName, BrokerName: hb.BrokerName, BrokerID: hb.BrokerID}
	if e, ok := l.entries[k]; ok {
		in := &e.info
		if in.Conn != from.Conn && !l.mayTakeOver(in, from, now) {
			return HeartbeatHeld
		}
		in.LastUpdate = now
		in.Timeout = hb.TimeoutMillis
		in.ElectionPriority = hb.ElectionPriority
		if hb.Epoch > in.Epoch || hb.Epoch == in.Epoch && hb.MaxOffset > in.MaxOffset {
			in.Epoch, in.MaxOffset, in.ConfirmOffset = hb.Epoch, hb.MaxOffset, hb.ConfirmOffset
		}
		if in.Addr != hb.BrokerAddr {
			in.Addr = strings.Clone(hb.BrokerAddr)
		}
		if in.Conn != from.Conn {
			l.unlinkConn(e)
			in.Conn, in.Host = from.Conn, from.Host
			l.conns[from.Conn] = append(l.conns[from.Conn], e)
		}
		return HeartbeatUpdated
	}
	if l.Max > 0 && len(l.entries) >= l.Max && !from.Registered {
		return HeartbeatFull
	}
	e := &liveEntry{
		key: LiveKey{Cluster: strings.Clone(k.Cluster), BrokerName: strings.Clone(k.BrokerName), BrokerID: k.BrokerID},
		info: LiveInfo{
			Addr:             strings.Clone(hb.BrokerAddr),
			Conn:             from.Conn,
			Host:             from.Host,
			LastUpdate:       now,
			Timeout:          hb.TimeoutMillis,
			Epoch:            hb.Epoch,
			MaxOffset:        hb.MaxOffset,
			ConfirmOffset:    hb.ConfirmOffset,
			ElectionPriority: hb.ElectionPriority,
		},
	}
	l.entries[e.key] = e
	l.conns[from.Conn] = append(l.conns[from.Conn], e)
	return HeartbeatAdded
}

// mayTakeOver reports whether a heartbeat from from may move the broker
// held as in to its connection (Record).
func (l *Liveness) mayTakeOver(in *LiveInfo, from Origin, now int64) bool {
	return now-in.LastUpdate > in.Timeout ||
		from.Host.IsValid() && from.Host == in.Host ||
		from.Owner
}

// Alive reports whether k is in the table and its latest heartbeat is
// within its timeout at now (lastUpdate + timeout >= now, as Java, written
// as a difference so that a broker-sent timeout near 2^63 cannot overflow).
func (l *Liveness) Alive(k LiveKey, now int64) bool {
	if l == nil {
		return false
	}
	e, ok := l.entries[k]
	return ok && now-e.info.LastUpdate <= e.info.Timeout
}

// CountAlive is the number of brokers alive at now: in the table and
// heard from within their timeout.
func (l *Liveness) CountAlive(now int64) int {
	if l == nil {
		return 0
	}
	n := 0
	for _, e := range l.entries {
		if now-e.info.LastUpdate <= e.info.Timeout {
			n++
		}
	}
	return n
}

// Info returns what the table holds for k, alive or not.
func (l *Liveness) Info(k LiveKey) (LiveInfo, bool) {
	if l == nil {
		return LiveInfo{}, false
	}
	e, ok := l.entries[k]
	if !ok {
		return LiveInfo{}, false
	}
	return e.info, true
}

// Expire removes and returns, ordered by key, the brokers whose latest
// heartbeat is older than their timeout at now (now - lastUpdate >
// timeout). Java runs this scan every scanNotActiveBrokerInterval and
// closes the connections of what it removes.
func (l *Liveness) Expire(now int64) []Inactive {
	var out []Inactive
	for _, e := range l.entries {
		if now-e.info.LastUpdate > e.info.Timeout {
			out = append(out, Inactive{Key: e.key, Info: e.info})
		}
	}
	for _, in := range out {
		l.remove(l.entries[in.Key])
	}
	slices.SortFunc(out, func(a, b Inactive) int { return cmpLiveKey(a.Key, b.Key) })
	return out
}

// ConnClosed removes and returns, ordered by key, every broker whose latest
// heartbeat came on conn. Java removes only the first broker it finds on a
// closed channel and leaves the others of a broker container to expire;
// all of them are gone with the connection, so all are dropped here.
func (l *Liveness) ConnClosed(conn uint64) []Inactive {
	list := l.conns[conn]
	if len(list) == 0 {
		return nil
	}
	out := make([]Inactive, 0, len(list))
	for _, e := range list {
		out = append(out, Inactive{Key: e.key, Info: e.info})
		delete(l.entries, e.key)
	}
	delete(l.conns, conn)
	slices.SortFunc(out, func(a, b Inactive) int { return cmpLiveKey(a.Key, b.Key) })
	return out
}

// Remove drops k from the table.
func (l *Liveness) Remove(k LiveKey) (Inactive, bool) {
	e, ok := l.entries[k]
	if !ok {
		return Inactive{}, false
	}
	l.remove(e)
	return Inactive{Key: e.key, Info: e.info}, true
}

func (l *Liveness) remove(e *liveEntry) {
	delete(l.entries, e.key)
	l.unlinkConn(e)
}

func (l *Liveness) unlinkConn(e *liveEntry) {
	list := l.conns[e.info.Conn]
	if i := slices.Index(list, e); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(l.conns, e.info.Conn)
	} else {
		l.conns[e.info.Conn] = list
	}
}

// InactiveMasters returns, sorted, the broker sets whose recorded master is
// not alive at now while at least one of their registered brokers is: the
// sets the leader's inactive-master scan (every scanInactiveMasterInterval)
// asks a controller-triggered election for.
func InactiveMasters(s *State, l *Liveness, now int64) []string {
	var out []string
	for _, name := range s.Names() {
		g := s.groups[name]
		if !g.HasMaster || l.Alive(LiveKey{g.Cluster, g.Name, g.MasterID}, now) {
			continue
		}
		for _, b := range g.Brokers {
			if l.Alive(LiveKey{g.Cluster, g.Name, b.ID}, now) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}
