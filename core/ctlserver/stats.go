// What a node exposes for metrics and a status page: counters, raft's
// figures, and each broker set as this node sees it.

package ctlserver

import (
	"sync/atomic"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/status"
)

// counters are the node's running totals.
type counters struct {
	electSuccess, electStillExist, electFailed, electCleared atomic.Uint64
	busy                                                     atomic.Uint64
	// unknownOutcome counts commits that timed out or lost leadership;
	// reannounced the elections announced again after one (announce.go).
	unknownOutcome, reannounced atomic.Uint64
	// reconciles counts the reconcile passes finished (tests).
	reconciles atomic.Uint64
	// refusals counts the requests refused before they changed anything.
	refusals refusalCounts
}

// election counts one committed 1002 decision by its answer.
func (c *counters) election(code int32) {
	switch code {
	case codec.Success:
		c.electSuccess.Add(1)
	case codec.ControllerMasterStillExist:
		c.electStillExist.Add(1)
	case codec.ControllerElectMasterFailed:
		c.electFailed.Add(1)
	case codec.ControllerMasterNotAvailable:
		c.electCleared.Add(1)
	}
}

// Elections counts the elections this node decided as leader (broker,
// admin and controller triggers), by answer.
type Elections struct {
	Success    uint64 // a new master
	StillExist uint64 // 2011: the old master kept
	Failed     uint64 // 2012: no candidate for a broker or admin request
	Cleared    uint64 // 2004: no candidate for the controller, master cleared
}

// Stats is a point-in-time view of the node.
type Stats struct {
	Raft      raftnode.Stats
	Elections Elections
	// NotificationsSent and NotificationsFailed count 1008 notices
	// written and given up (broker unreachable).
	NotificationsSent, NotificationsFailed uint64
	// Groups is the number of broker sets; GroupsWithoutMaster those with
	// no master recorded.
	Groups, GroupsWithoutMaster int
	// BrokersAlive counts the brokers this node heard from within their
	// heartbeat timeout.
	BrokersAlive int
	// QueuedRequests is the leader's queue of requests not yet decided;
	// Overloaded counts those refused with SYSTEM_BUSY.
	QueuedRequests int
	Overloaded     uint64
	// UnknownOutcomes counts writes whose commit timed out or lost the
	// leadership (answered SYSTEM_ERROR, their entry may still apply);
	// Reannounced the elections announced by a later reconcile because
	// their own notice was never sent.
	UnknownOutcomes, Reannounced uint64
}

// Stats returns the node's figures (Raft's are zero before Start).
func (s *Server) Stats() Stats {
	st := Stats{
		Elections: Elections{
			Success:    s.counts.electSuccess.Load(),
			StillExist: s.counts.electStillExist.Load(),
			Failed:     s.counts.electFailed.Load(),
			Cleared:    s.counts.electCleared.Load(),
		},
		NotificationsSent:   s.notify.sent.Load(),
		NotificationsFailed: s.notify.failed.Load(),
		QueuedRequests:      len(s.jobs),
		Overloaded:          s.counts.busy.Load(),
		UnknownOutcomes:     s.counts.unknownOutcome.Load(),
		Reannounced:         s.counts.reannounced.Load(),
	}
	select {
	case <-s.started:
		st.Raft = s.node.Stats()
	default:
	}
	s.fsm.Read(func(state *controller.State) {
		st.Groups = state.Len()
		for _, name := range state.Names() {
			if g, _ := state.Group(name); !g.HasMaster {
				st.GroupsWithoutMaster++
			}
		}
	})
	now := s.nowMs()
	s.liveMu.Lock()
	st.BrokersAlive = s.live.CountAlive(now)
	s.liveMu.Unlock()
	return st
}

// Groups returns every broker set, by name, with its members' liveness on
// this node, in the model the controller's status page shows.
func (s *Server) Groups() []status.ControllerGroup { return s.GroupsUpTo(-1) }

// GroupsUpTo is Groups cut to the first n sets by name (all when n is
// negative): a status page's view costs what it shows.
func (s *Server) GroupsUpTo(n int) []status.ControllerGroup {
	var out []status.ControllerGroup
	s.fsm.Read(func(state *controller.State) {
		names := state.Names()
		if n >= 0 && n < len(names) {
			names = names[:n]
		}
		out = make([]status.ControllerGroup, 0, len(names))
		for _, name := range names {
			g, _ := state.Group(name)
			gs := status.ControllerGroup{
				Cluster: g.Cluster, BrokerName: g.Name, HasMaster: g.HasMaster, MasterID: g.MasterID,
				MasterEpoch: g.MasterEpoch, SyncStateSet: g.SyncStateSet, SyncStateSetEpoch: g.SyncStateSetEpoch,
				NextID: g.NextID, Members: make([]status.ControllerMember, len(g.Brokers)),
			}
			if g.HasMaster {
				gs.MasterAddr, _ = g.Addr(g.MasterID)
			}
			for i, b := range g.Brokers {
				gs.Members[i] = status.ControllerMember{ID: b.ID, Addr: b.Addr, Master: g.HasMaster && g.MasterID == b.ID}
			}
			out = append(out, gs)
		}
	})
	now := s.nowMs()
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	for gi := range out {
		g := &out[gi]
		for mi := range g.Members {
			m := &g.Members[mi]
			k := controller.LiveKey{Cluster: g.Cluster, BrokerName: g.BrokerName, BrokerID: m.ID}
			if info, ok := s.live.Info(k); ok {
				m.Alive = s.live.Alive(k, now)
				m.LastHeartbeat = time.UnixMilli(info.LastUpdate)
				m.Epoch, m.MaxOffset, m.ElectionPriority = info.Epoch, info.MaxOffset, info.ElectionPriority
			}
		}
	}
	return out
}
