// The requests the port refuses before they change anything, counted by
// reason: not authorized (core/auth's reasons), a heartbeat for a broker
// another connection heartbeats for, and the bounds on the state.

package ctlserver

import (
	"sync/atomic"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller"
)

// refusal is a reason a request was refused, a label of
// rocketns_controller_refusals_total.
type refusal uint8

const (
	refusedAddress refusal = iota
	refusedUnsigned
	refusedUnknownAccount
	refusedBadSignature
	refusedRole
	refusedBinding
	refusedNotStrict
	refusedStale
	refusedReplay
	refusedReplayCacheFull
	refusedForeign
	refusedHeartbeatTakeover
	refusedBrokerSets
	refusedBrokersPerSet
	refusedLiveness
	refusedFieldSize
	refusedOther
	numRefusals
)

var refusalNames = [numRefusals]string{
	"address", "unsigned", "unknown_account", "bad_signature", "role", "binding", "not_strict", "stale",
	"replay", "replay_cache_full", "foreign", "heartbeat_takeover", "broker_sets", "brokers_per_set",
	"liveness", "field_size", "other",
}

// refusalAuth is the refusal of an authorization denial.
func refusalAuth(r auth.Reason) refusal {
	switch r {
	case auth.ReasonAddress:
		return refusedAddress
	case auth.ReasonUnsigned:
		return refusedUnsigned
	case auth.ReasonUnknownAccount:
		return refusedUnknownAccount
	case auth.ReasonBadSignature:
		return refusedBadSignature
	case auth.ReasonRole:
		return refusedRole
	case auth.ReasonBinding:
		return refusedBinding
	case auth.ReasonNotStrict:
		return refusedNotStrict
	case auth.ReasonStale:
		return refusedStale
	case auth.ReasonReplay:
		return refusedReplay
	case auth.ReasonReplayCacheFull:
		return refusedReplayCacheFull
	case auth.ReasonForeign:
		return refusedForeign
	}
	return refusedOther
}

// refusalCounts counts refusals by reason.
type refusalCounts [numRefusals]atomic.Uint64

func (c *counters) refused(r refusal) { c.refusals[r].Add(1) }

// Refusals returns the requests refused so far, by reason (the labels of
// rocketns_controller_refusals_total); reasons never seen are left out.
func (s *Server) Refusals() map[string]uint64 {
	out := make(map[string]uint64)
	for i := range s.counts.refusals {
		if n := s.counts.refusals[i].Load(); n > 0 {
			out[refusalNames[i]] = n
		}
	}
	return out
}

// boundRefused counts and logs a request a bound on the state refused.
func (s *Server) boundRefused(code int32, d controller.Decision) {
	r := refusedOther
	switch d.Bound {
	case controller.BoundBrokerSets:
		r = refusedBrokerSets
	case controller.BoundBrokersPerSet:
		r = refusedBrokersPerSet
	case controller.BoundFieldSize:
		r = refusedFieldSize
	}
	s.counts.refused(r)
	s.log.Warn("controller: request refused by a bound on the state", "request", codec.RequestCodeName(code),
		"reason", refusalNames[r], "remark", d.Reply.Remark)
}
