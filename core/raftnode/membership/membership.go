// Membership types, the parsers for both key styles and their checks.

package membership

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The property keys read here, spelled as Java spells them ("DLeger").
const (
	KeyControllerType  = "controllerType"
	KeyDLedgerGroup    = "controllerDLegerGroup"
	KeyDLedgerPeers    = "controllerDLegerPeers"
	KeyDLedgerSelfID   = "controllerDLegerSelfId"
	KeyJRaftGroupID    = "jRaftGroupId"
	KeyJRaftServerID   = "jRaftServerId"
	KeyJRaftInitConf   = "jRaftInitConf"
	KeyJRaftRPCAddress = "jRaftControllerRPCAddr"
)

// Java's JraftConfig defaults, used when a jRaft key is absent (an explicitly
// empty value is an error, as in Java).
const (
	DefaultJRaftGroupID    = "jRaft-Controller"
	DefaultJRaftServerID   = "localhost:9880"
	DefaultJRaftInitConf   = "localhost:9880,localhost:9881,localhost:9882"
	DefaultJRaftRPCAddress = "localhost:9770,localhost:9771,localhost:9772"
)

// ControllerTypeJRaft is the only controllerType value that selects jRaft
// (Java compares the exact string; anything else means DLedger).
const ControllerTypeJRaft = "jRaft"

// Style says which family of keys a membership came from.
type Style uint8

const (
	// DLedger is the default style: one port per node for brokers and raft.
	DLedger Style = iota + 1
	// JRaft is controllerType=jRaft: raft and brokers on separate ports.
	JRaft
)

// String returns the controllerType spelling of s.
func (s Style) String() string {
	switch s {
	case DLedger:
		return "DLedger"
	case JRaft:
		return ControllerTypeJRaft
	}
	return "Style(" + strconv.Itoa(int(s)) + ")"
}

// Peer is one member of the controller group.
type Peer struct {
	// ID is the raft server id: the DLedger id ("n0") or, in jRaft style, the
	// peer's jRaftInitConf entry ("127.0.0.1:9880").
	ID string
	// RaftAddr is the host:port raft traffic for this peer goes to.
	RaftAddr string
	// ServeAddr is the host:port brokers and mqadmin use (1005's
	// controllerLeaderAddress when this peer leads).
	ServeAddr string
}

// Membership is a checked controller group as the configuration describes it.
type Membership struct {
	Style Style
	// Group is controllerDLegerGroup (may be empty: Java does not require it)
	// or jRaftGroupId.
	Group string
	// SelfID is the id of the node this configuration belongs to; it is
	// always one of Peers.
	SelfID string
	// Peers in configuration order.
	Peers []Peer
	// Warnings worth a log line at start-up (an even group size, a
	// controllerType Java would silently read as DLedger).
	Warnings []string
}

// Self returns the peer this configuration belongs to.
func (m *Membership) Self() Peer {
	p, _ := m.Peer(m.SelfID)
	return p
}

// Peer returns the peer with the given id.
func (m *Membership) Peer(id string) (Peer, bool) {
	for _, p := range m.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}

// Lookup returns the value of a property key and whether it is set.
type Lookup func(key string) (value string, ok bool)

// FromMap adapts a plain map to a Lookup.
func FromMap(props map[string]string) Lookup {
	return func(key string) (string, bool) {
		v, ok := props[key]
		return v, ok
	}
}

// KeyError is a configuration error tied to one key.
type KeyError struct {
	Key string
	Msg string
}

func (e *KeyError) Error() string { return e.Msg }

// ErrInvalid is wrapped by every error Parse returns, so callers can tell a
// configuration mistake from anything else with errors.Is.
var ErrInvalid = errors.New("invalid controller membership")

// Is makes errors.Is(err, ErrInvalid) hold for every KeyError.
func (e *KeyError) Is(target error) bool { return target == ErrInvalid }

// missing builds Java's message for an absent or empty required key.
func missing(key string) error {
	return &KeyError{Key: key, Msg: "Attribute value " + key + " of ControllerConfig is null or empty"}
}

func invalid(key, format string, args ...any) error {
	return &KeyError{Key: key, Msg: key + ": " + fmt.Sprintf(format, args...)}
}

// Parse reads the membership from the controller keys: jRaft style when
// controllerType is exactly "jRaft", DLedger style otherwise.
func Parse(get Lookup) (*Membership, error) {
	var warnings []string
	if t, ok := get(KeyControllerType); ok {
		t = strings.TrimSpace(t)
		if t == ControllerTypeJRaft {
			return parseJRaft(get)
		}
		if t != "" && t != "DLedger" {
			warnings = append(warnings, fmt.Sprintf("%s=%q is not %q: using DLedger, as Java does", KeyControllerType, t, ControllerTypeJRaft))
		}
	}
	m, err := parseDLedger(get)
	if err != nil {
		return nil, err
	}
	m.Warnings = append(warnings, m.Warnings...)
	return m, nil
}

func value(get Lookup, key string) (string, bool) {
	v, ok := get(key)
	return strings.TrimSpace(v), ok
}

// parseDLedger reads controllerDLegerPeers ("n0-host:port;n1-host:port"),
// controllerDLegerSelfId and controllerDLegerGroup. Like DLedger, the id is
// the text before the first '-' and the address the rest.
func parseDLedger(get Lookup) (*Membership, error) {
	peersText, _ := value(get, KeyDLedgerPeers)
	if peersText == "" {
		return nil, missing(KeyDLedgerPeers)
	}
	self, _ := value(get, KeyDLedgerSelfID)
	if self == "" {
		return nil, missing(KeyDLedgerSelfID)
	}
	group, _ := value(get, KeyDLedgerGroup)
	m := &Membership{Style: DLedger, Group: group, SelfID: self}
	for _, item := range strings.Split(peersText, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			// Java's String.split drops a trailing empty field; an empty
			// field in the middle is as harmless.
			continue
		}
		id, addr, ok := strings.Cut(item, "-")
		id, addr = strings.TrimSpace(id), strings.TrimSpace(addr)
		if !ok || id == "" {
			return nil, invalid(KeyDLedgerPeers, "peer %q is not <id>-<host>:<port>", item)
		}
		if err := checkHostPort(addr); err != nil {
			return nil, invalid(KeyDLedgerPeers, "peer %q: %v", item, err)
		}
		m.Peers = append(m.Peers, Peer{ID: id, RaftAddr: addr, ServeAddr: addr})
	}
	if len(m.Peers) == 0 {
		return nil, missing(KeyDLedgerPeers)
	}
	if err := m.check(KeyDLedgerPeers, KeyDLedgerSelfID); err != nil {
		return nil, err
	}
	return m, nil
}

// parseJRaft reads the jRaft keys, with Java's defaults for absent ones.
func parseJRaft(get Lookup) (*Membership, error) {
	withDefault := func(key, def string) string {
		v, ok := value(get, key)
		if !ok {
			return def
		}
		return v
	}
	initConf := withDefault(KeyJRaftInitConf, DefaultJRaftInitConf)
	if initConf == "" {
		return nil, missing(KeyJRaftInitConf)
	}
	serverID := withDefault(KeyJRaftServerID, DefaultJRaftServerID)
	if serverID == "" {
		return nil, missing(KeyJRaftServerID)
	}
	rpcText := withDefault(KeyJRaftRPCAddress, DefaultJRaftRPCAddress)
	if rpcText == "" {
		return nil, missing(KeyJRaftRPCAddress)
	}
	group := withDefault(KeyJRaftGroupID, DefaultJRaftGroupID)
	if group == "" {
		return nil, missing(KeyJRaftGroupID)
	}
	if err := checkHostPort(serverID); err != nil {
		return nil, invalid(KeyJRaftServerID, "%q: %v", serverID, err)
	}

	raftAddrs, err := addrList(KeyJRaftInitConf, initConf)
	if err != nil {
		return nil, err
	}
	rpcAddrs, err := addrList(KeyJRaftRPCAddress, rpcText)
	if err != nil {
		return nil, err
	}
	if len(rpcAddrs) != len(raftAddrs) {
		return nil, invalid(KeyJRaftRPCAddress, "%d addresses for the %d peers of %s: the i-th address belongs to the i-th peer",
			len(rpcAddrs), len(raftAddrs), KeyJRaftInitConf)
	}
	m := &Membership{Style: JRaft, Group: group}
	for i, a := range raftAddrs {
		if sameHostPort(a, serverID) {
			m.SelfID = a
		}
		m.Peers = append(m.Peers, Peer{ID: a, RaftAddr: a, ServeAddr: rpcAddrs[i]})
	}
	if m.SelfID == "" {
		return nil, invalid(KeyJRaftServerID, "%q is not one of the peers in %s (%s)", serverID, KeyJRaftInitConf, initConf)
	}
	if err := m.check(KeyJRaftInitConf, KeyJRaftServerID); err != nil {
		return nil, err
	}
	// Raft addresses double as ids in jRaft style, so a duplicate was caught
	// as a duplicate id; the broker-facing ones are checked here by key.
	seen := map[string]bool{}
	for _, p := range m.Peers {
		if seen[p.ServeAddr] {
			return nil, invalid(KeyJRaftRPCAddress, "address %s is listed twice", p.ServeAddr)
		}
		seen[p.ServeAddr] = true
	}
	return m, nil
}

func addrList(key, text string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(text, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if err := checkHostPort(a); err != nil {
			return nil, invalid(key, "%q: %v", a, err)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, missing(key)
	}
	return out, nil
}

// check verifies what both styles share: the self id is a peer and no id or
// raft address appears twice.
func (m *Membership) check(peersKey, selfKey string) error {
	ids := map[string]bool{}
	addrs := map[string]string{}
	for _, p := range m.Peers {
		if ids[p.ID] {
			return invalid(peersKey, "peer id %s is listed twice", p.ID)
		}
		ids[p.ID] = true
		if other, dup := addrs[p.RaftAddr]; dup {
			return invalid(peersKey, "peers %s and %s share the address %s", other, p.ID, p.RaftAddr)
		}
		addrs[p.RaftAddr] = p.ID
	}
	if !ids[m.SelfID] {
		return invalid(selfKey, "%q is not one of the peers in %s", m.SelfID, peersKey)
	}
	if n := len(m.Peers); n%2 == 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf(
			"%d controller peers: an even group tolerates no more failures than %d peers (quorum %d); use 1, 3 or 5",
			n, n-1, n/2+1))
	}
	return nil
}

// checkHostPort accepts host:port with a non-empty host and a port in 1-65535.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q is not host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("address %q has no host", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("address %q: port %q is not a number in 1-65535", addr, port)
	}
	return nil
}

// sameHostPort compares two checked host:port texts by host and port number,
// as jRaft compares endpoints (no name resolution).
func sameHostPort(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	na, _ := strconv.Atoi(pa)
	nb, _ := strconv.Atoi(pb)
	return strings.EqualFold(ha, hb) && na == nb
}
