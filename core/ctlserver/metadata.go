// CONTROLLER_GET_METADATA_INFO (1005): where the leader is, from this
// node's raft view, in the shape each Java raft flavour answers, and the
// peer order Java's HashMap gives the DLedger peers.

package ctlserver

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/raftnode/membership"
)

// peersText is 1005's peers field for m: DLedger "id:addr;" per peer in
// Java HashMap order of the ids, jRaft the broker-facing addresses, each
// followed by ';', in configuration order.
func peersText(m *membership.Membership) string {
	var b strings.Builder
	if m.Style == membership.JRaft {
		for _, p := range m.Peers {
			b.WriteString(p.ServeAddr)
			b.WriteByte(';')
		}
		return b.String()
	}
	ids := make([]string, len(m.Peers))
	for i, p := range m.Peers {
		ids[i] = p.ID
	}
	for _, id := range javaHashOrder(ids) {
		p, _ := m.Peer(id)
		b.WriteString(p.ID)
		b.WriteByte(':')
		b.WriteString(p.ServeAddr)
		b.WriteByte(';')
	}
	return b.String()
}

// javaHashOrder returns distinct keys in the order a java.util.HashMap of
// String keys, filled in the given order, iterates them: by bucket
// (String.hashCode spread by h ^ h>>>16, masked by the table size, which
// starts at 16 and doubles past a 0.75 load), and in insertion order within
// a bucket (a resize keeps it). Buckets long enough for Java to turn into
// trees (8 keys, in tables of 64 and more) are not modelled.
func javaHashOrder(keys []string) []string {
	size := 16
	for len(keys) > size*3/4 {
		size *= 2
	}
	bucket := func(k string) int {
		var h int32
		for _, u := range utf16.Encode([]rune(k)) {
			h = 31*h + int32(u)
		}
		s := uint32(h) ^ uint32(h)>>16
		return int(s & uint32(size-1))
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int { return bucket(a) - bucket(b) })
	return out
}

// metadataReply fills resp as 1005's answer. Java's key order (its
// HashMap's) is kept, though no reader depends on it.
func (s *Server) metadataReply(resp *codec.Command) {
	m := s.cfg.Membership
	info, known := s.node.Leader()
	resp.HasExt = true
	if m.Style == membership.JRaft {
		// jRaft names no leader as "", and always sends the key.
		id := ""
		if known {
			id = info.ID
		}
		resp.SetExt("controllerLeaderId", id)
	} else if known {
		resp.SetExt("controllerLeaderId", info.ID)
	}
	if known && info.ServeAddr != "" {
		resp.SetExt("controllerLeaderAddress", info.ServeAddr)
	}
	resp.SetExt("isLeader", strconv.FormatBool(s.node.IsLeader()))
	resp.SetExt("peers", s.peers)
	if m.Group != "" {
		resp.SetExt("group", m.Group)
	}
}
