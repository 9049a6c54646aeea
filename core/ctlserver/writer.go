// The leader's writer: requests decided one at a time, their events
// committed and applied through raft before the answer, raft's errors
// answered as Java answers a failed commit, and the controller's own
// elections with their retries.

package ctlserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/raftnode"
	"github.com/rocketns/rocketns/core/remoting"
)

// job is one request for the writer: a broker's or admin's (decide, and
// pending to answer) or a controller-triggered election of a set (elect).
type job struct {
	code    int32
	decide  decider
	pending *remoting.Pending
	// barrier commits an empty entry first (processReadEvent reads).
	barrier bool
	elect   string
}

// emptyBatch is a log entry without events: a barrier.
var emptyBatch = controller.EncodeBatch(nil, nil)

// errNotReady is a decision attempted while this node is not the ready
// leader; it is answered 2007 like raftnode.ErrNotLeader.
var errNotReady = fmt.Errorf("controller: %w", raftnode.ErrNotLeader)

// runWriter decides the queued requests one at a time, as Java's
// single-threaded event scheduler does: a reply predicts the state after
// its events, so the next decision must see them applied.
func (s *Server) runWriter() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			// A new ready leadership: its barrier is applied, so the
			// state holds every committed election.
			if s.reconcileDue.Swap(false) && s.node.ReadyLeader() {
				s.reconcile()
			}
		case j := <-s.jobs:
			if j.elect != "" {
				s.controllerElect(j.elect)
				continue
			}
			d, err := s.commit(j.code, j.decide, j.barrier)
			if err != nil {
				d.Reply = s.errorReply(err)
			}
			var resp codec.Command
			d.Reply.Fill(&resp)
			if err := j.pending.Reply(&resp); err != nil {
				s.log.Debug("controller: reply not sent", "code", j.code, "err", err)
			}
		}
	}
}

// commit decides one request on the ready leader and, if the decision has
// events, commits them as one raft entry and waits until this node's FSM
// has applied it. After a successful election it sends the role-change
// notices.
func (s *Server) commit(code int32, d decider, barrier bool) (controller.Decision, error) {
	if !s.node.ReadyLeader() {
		return controller.Decision{}, errNotReady
	}
	if barrier || s.dirty {
		wasDirty := s.dirty
		if err := s.apply(emptyBatch); err != nil {
			return controller.Decision{}, err
		}
		s.dirty = false
		if wasDirty || s.reconcileDue.Swap(false) {
			// An election whose outcome was unknown may have committed:
			// its notice is due before the next decision, which would
			// only find its master in place (2011) and say nothing.
			s.reconcile()
		}
	}
	dec := s.decide(d)
	if len(dec.Events) > 0 {
		if err := s.apply(controller.EncodeBatch(nil, dec.Events)); err != nil {
			return controller.Decision{}, err
		}
	}
	if code == codec.ControllerElectMaster {
		s.counts.election(dec.Reply.Code)
	}
	if dec.Bound != controller.BoundNone {
		s.boundRefused(code, dec)
	}
	if dec.RoleChange != nil {
		s.roleChanged(dec.RoleChange)
	}
	return dec, nil
}

// apply commits one entry. An outcome raft cannot tell (leadership lost,
// timeout) makes the next decision wait for a barrier: the entry may still
// be applied, and a decision made without it could contradict it.
func (s *Server) apply(entry []byte) error {
	res, err := s.node.Apply(context.Background(), entry)
	if err != nil {
		if errors.Is(err, raftnode.ErrLeadershipLost) || errors.Is(err, raftnode.ErrTimeout) {
			s.dirty = true
			s.counts.unknownOutcome.Add(1)
		}
		return err
	}
	if e, ok := res.(error); ok {
		return e
	}
	return nil
}

// errorReply is the answer to a request whose commit failed: 2007 when it
// never reached the log (this node is not the ready leader), else
// SYSTEM_ERROR, as Java answers a failed or timed-out append, with what
// is known of the outcome.
func (s *Server) errorReply(err error) controller.Reply {
	var remark string
	switch {
	case errors.Is(err, raftnode.ErrNotLeader):
		return controller.Reply{Code: codec.ControllerNotLeader, Remark: remarkNotLeader}
	case errors.Is(err, raftnode.ErrLeadershipLost):
		remark = "the controller lost its leadership before the change committed; it may or may not take effect"
	case errors.Is(err, raftnode.ErrTimeout):
		remark = "the change was not committed in time (no raft quorum?); it may or may not take effect"
	case errors.Is(err, raftnode.ErrShutdown):
		remark = "the controller is shutting down"
	default:
		remark = "the change was not applied: " + err.Error()
	}
	s.log.Warn("controller: write failed", "err", err)
	return controller.Reply{Code: codec.SystemError, Remark: remark}
}

// triggerElection queues a controller-triggered election of the set,
// unless one is queued already. It never blocks (it runs on connection
// goroutines and scans).
func (s *Server) triggerElection(brokerName, why string) {
	if s.closing.Load() {
		return
	}
	s.electMu.Lock()
	if s.electing[brokerName] {
		s.electMu.Unlock()
		return
	}
	s.electing[brokerName] = true
	s.electMu.Unlock()
	select {
	case s.jobs <- &job{elect: brokerName}:
		s.log.Info("controller: master inactive, electing", "broker_name", brokerName, "trigger", why)
	default:
		s.electMu.Lock()
		delete(s.electing, brokerName)
		s.electMu.Unlock()
		s.log.Warn("controller: request queue full, election not queued", "broker_name", brokerName, "trigger", why)
	}
}

// controllerElect runs a controller-triggered election (brokerId -1) of
// the set: on SUCCESS the new master is notified; 2011 (the master is
// back), 2004 (no candidate: the master is cleared, and the brokers' next
// 1004 poll asks for an election themselves), 2010 or 2012 end it too.
// Only a commit that failed is retried, up to electMasterMaxRetryCount
// attempts: Java retries every answer but SUCCESS, which repeats the same
// decision here since nothing changed in between.
func (s *Server) controllerElect(brokerName string) {
	s.electMu.Lock()
	delete(s.electing, brokerName)
	s.electMu.Unlock()
	attempts := s.runtime().ElectMasterMaxRetryCount
	for i := 1; i <= attempts; i++ {
		d, err := s.commit(codec.ControllerElectMaster, func(st *controller.State, env controller.Env) controller.Decision {
			return st.ControllerElect(brokerName, env)
		}, false)
		if err == nil {
			r := &d.Reply
			attrs := []any{"broker_name", brokerName, "code", r.Code}
			if id, ok := r.ExtValue("masterBrokerId"); ok {
				attrs = append(attrs, "master_id", id)
			}
			if e, ok := r.ExtValue("masterEpoch"); ok {
				attrs = append(attrs, "master_epoch", e)
			}
			if r.Remark != "" {
				attrs = append(attrs, "remark", r.Remark)
			}
			s.log.Info("controller: election", attrs...)
			return
		}
		if errors.Is(err, raftnode.ErrNotLeader) || errors.Is(err, raftnode.ErrShutdown) {
			s.log.Info("controller: election dropped, not the leader", "broker_name", brokerName, "err", err)
			return
		}
		s.log.Warn("controller: election attempt failed", "broker_name", brokerName, "attempt", i, "of", attempts, "err", err)
	}
}

// roleChanged sends 1008 to the live members of the set whose master
// changed, if notifyBrokerRoleChanged.
func (s *Server) roleChanged(rc *controller.RoleChange) {
	s.markAnnounced(rc.BrokerName, rc.MasterEpoch)
	if !s.runtime().NotifyBrokerRoleChanged {
		return
	}
	now := s.nowMs()
	s.liveMu.Lock()
	targets := rc.Targets(s.live, now)
	s.liveMu.Unlock()
	if len(targets) > 0 {
		s.notify.send(rc, targets)
	}
}
