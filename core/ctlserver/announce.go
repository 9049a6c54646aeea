// Elections committed without their 1008: a write whose outcome was
// unknown (timeout, leadership lost) that committed after all, or one a
// leader committed and died before announcing. The ready leader announces
// them once it knows its state holds them.

package ctlserver

import (
	"time"

	"github.com/rocketns/rocketns/core/controller"
)

// reannounceWindow is how far back an applied election may be announced
// again: longer than a commit's timeout plus a raft election, so no
// election a leader may have left unannounced is missed, and short enough
// that a new leader does not announce every set it replayed at start.
// Brokers poll their master every 5 s anyway (1004), so a later notice
// would tell them nothing.
const reannounceWindow = 30 * time.Second

// appliedElection is a set's latest applied election on this node.
type appliedElection struct {
	epoch int32
	at    time.Time
}

// elected records an applied election (the FSM's hook, on raft's
// goroutine).
func (s *Server) elected(brokerName string, masterEpoch int32) {
	s.announceMu.Lock()
	s.applied[brokerName] = appliedElection{epoch: masterEpoch, at: s.cfg.Clock()}
	s.announceMu.Unlock()
}

// markAnnounced records that the 1008 of the set's masterEpoch was handed
// to the notifier (or needed none). Writer only.
func (s *Server) markAnnounced(brokerName string, masterEpoch int32) {
	if masterEpoch > s.announced[brokerName] {
		s.announced[brokerName] = masterEpoch
	}
}

// reconcile announces the elections applied on this node within
// reannounceWindow whose 1008 this node never sent: the state then holds
// every committed entry (the caller has just applied a barrier, or raft's
// leader barrier has), so the master it names is the committed one. The
// writer runs it, between two decisions.
func (s *Server) reconcile() {
	defer s.counts.reconciles.Add(1)
	now := s.cfg.Clock()
	var due []string
	s.announceMu.Lock()
	for name, a := range s.applied {
		switch {
		case now.Sub(a.at) > reannounceWindow:
			delete(s.applied, name)
		case a.epoch > s.announced[name]:
			due = append(due, name)
		}
	}
	s.announceMu.Unlock()
	for _, name := range due {
		var rc *controller.RoleChange
		s.fsm.Read(func(st *controller.State) { rc, _ = st.MasterRoleChange(name) })
		if rc == nil || rc.MasterEpoch <= s.announced[name] {
			continue
		}
		s.log.Info("controller: announcing a master whose election was not announced", "broker_name", name,
			"master_id", rc.MasterID, "master_epoch", rc.MasterEpoch)
		s.counts.reannounced.Add(1)
		s.roleChanged(rc)
	}
}

// kickReconcile asks the writer to reconcile (a new ready leadership).
func (s *Server) kickReconcile() {
	s.reconcileDue.Store(true)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
