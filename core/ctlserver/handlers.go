// The controller port's handlers: what every node answers itself (904,
// 1005, 1009, 1010), and the leader requests, read at once or queued for
// the writer.

package ctlserver

import (
	"errors"
	"fmt"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting"
)

// Java's remarks for answers built outside the controller package.
const (
	remarkNotLeader = "The controller is not in leader state"
	remarkOverload  = "[OVERLOAD]system busy, start flow control for a while"
)

// handleHeartbeat is BROKER_HEARTBEAT (904), answered on every node from
// its own liveness table: no raft round trip, no allocation for a known
// broker. Brokers send it oneway; a request that is not oneway gets 0
// "Heart beat success", or 2005 without a brokerId. A heartbeat for a
// broker another connection holds (controller.Liveness.Record) or one
// beyond the table's bound is refused and recorded nowhere.
func (s *Server) handleHeartbeat(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error {
	var hb controller.Heartbeat
	controller.ParseHeartbeat(req, &hb)
	from := controller.Origin{Conn: uint64(c.ID()), Host: peerHost(c.Peer()), Owner: g.Owns(hb.BrokerName)}
	now := s.nowMs()
	s.liveMu.Lock()
	res := s.live.Record(&hb, from, now)
	s.liveMu.Unlock()
	if res == controller.HeartbeatFull && s.registered(&hb) {
		from.Registered = true
		s.liveMu.Lock()
		res = s.live.Record(&hb, from, now)
		s.liveMu.Unlock()
	}
	switch res {
	case controller.HeartbeatHeld:
		s.refuseHeartbeatTakeover(c, req, resp, &hb)
		return nil
	case controller.HeartbeatFull:
		s.refuseLivenessFull(c, req, resp, &hb)
		return nil
	case controller.HeartbeatTooLong:
		s.counts.refused(refusedFieldSize)
		if !req.IsOneway() {
			refuse(resp, codec.SystemError, fmt.Sprintf("heartbeat refused: its clusterName, brokerName or brokerAddr is longer than %d bytes", controller.MaxFieldBytes))
		}
		return nil
	}
	if !req.IsOneway() {
		r := controller.HeartbeatReply(&hb)
		r.Fill(resp)
	}
	return nil
}

// handleMetadata is CONTROLLER_GET_METADATA_INFO (1005), on every node.
func (s *Server) handleMetadata(_ *remoting.Conn, _, resp *codec.Command) error {
	s.metadataReply(resp)
	return nil
}

// handleGetConfig is GET_CONTROLLER_CONFIG (1010), node-local: the
// settings' listing (config.Controller.Properties).
func (s *Server) handleGetConfig(c *remoting.Conn, _, resp *codec.Command) error {
	buf := c.Buffer()
	buf.B = s.settings.Load().AppendText(buf.B[:0])
	resp.Body = buf.B
	return nil
}

// handleUpdateConfig is UPDATE_CONTROLLER_CONFIG (1009), node-local, with
// UPDATE_NAMESRV_CONFIG's rules (config.UpdateBody, RuntimeUpdate,
// Refusal): the run-time settings, persisted before they take effect.
func (s *Server) handleUpdateConfig(c *remoting.Conn, req, _ *codec.Command) error {
	props, err := config.UpdateBody(req.Body)
	if err == nil && len(props) == 0 {
		return nil
	}
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	var next *config.Controller
	if err == nil {
		next, err = s.settings.Load().RuntimeUpdate(props)
	}
	if err == nil {
		err = next.PersistUpdate()
	}
	switch {
	case errors.Is(err, config.ErrNotPersisted):
		s.log.Error("controller: config update not applied: persist failed", "err", err)
		return remoting.Refuse(config.Refusal(err))
	case err != nil:
		s.log.Warn("controller: config update refused", "peer", c.Peer(), "err", err)
		return remoting.Refuse(config.Refusal(err))
	}
	s.settings.Store(next)
	s.log.Info("controller: config updated", "peer", c.Peer(), "keys", len(props),
		"notify_broker_role_changed", next.NotifyBrokerRoleChanged, "enable_elect_unclean_master", next.EnableElectUncleanMaster,
		"elect_master_max_retry_count", next.ElectMasterMaxRetryCount, "process_read_event", next.ProcessReadEvent)
	return nil
}

// decider is one leader request's decision, made by the writer (or at
// once, for a read) from the state and this node's liveness.
type decider func(*controller.State, controller.Env) controller.Decision

// notLeader is 2007, Java's answer to a leader request on any node that
// is not the ready leader. It has no extFields.
func notLeader(resp *codec.Command) {
	resp.Code, resp.Remark = codec.ControllerNotLeader, remarkNotLeader
}

// leaderRequest reads a leader request into the decision the ready leader
// makes of it, or into the reply it gets at once, on any node: Java
// decodes a request's body before anything else and fails a broken one
// there, leader or not.
type leaderRequest func(req *codec.Command) (decider, *controller.Reply)

// fromHeader is the leader request of a code read from its extFields
// alone.
func fromHeader[R any](parse func(controller.Fields) R, decide func(*controller.State, R, controller.Env) controller.Decision) leaderRequest {
	return func(req *codec.Command) (decider, *controller.Reply) {
		r := parse(req)
		return func(st *controller.State, env controller.Env) controller.Decision { return decide(st, r, env) }, nil
	}
}

// alterSyncStateSet is CONTROLLER_ALTER_SYNC_STATE_SET (1001), whose body
// is the proposed set.
func alterSyncStateSet(req *codec.Command) (decider, *controller.Reply) {
	r, err := controller.ParseAlterSyncStateSet(req, req.Body)
	if err != nil {
		rep := controller.BodyErrorReply(err)
		return nil, &rep
	}
	return func(st *controller.State, env controller.Env) controller.Decision {
		return st.AlterSyncStateSet(r, env)
	}, nil
}

// syncStateData is CONTROLLER_GET_SYNC_STATE_DATA (1006), whose body names
// the sets. Java answers no names (no body, or an empty list) with 1 "not
// set any response code" before anything else, also on any node.
func (s *Server) syncStateData(req *codec.Command) (decider, *controller.Reply) {
	r, err := controller.ParseGetSyncStateData(req.Body)
	if err != nil {
		rep := controller.BodyErrorReply(err)
		return nil, &rep
	}
	if len(r.Names) == 0 {
		rep := s.noState.GetSyncStateData(r, controller.Env{}).Reply
		return nil, &rep
	}
	return func(st *controller.State, env controller.Env) controller.Decision { return st.GetSyncStateData(r, env) }, nil
}

// read is the handler of a leader read (1004, 1006, 1012): answered from
// the ready leader's state at once, or with processReadEvent through the
// writer behind an empty raft entry.
func (s *Server) read(lr leaderRequest) grantedHandler { return s.leader(lr, false) }

// write is the handler of a leader write (1001, 1002, 1003, 1011, 1013),
// queued for the writer, which answers it once its events are committed
// and applied.
func (s *Server) write(lr leaderRequest) grantedHandler { return s.leader(lr, true) }

// leader is the handler of a leader request: its early reply on any node,
// 2007 on a node that is not the ready leader, else its decision.
func (s *Server) leader(lr leaderRequest, write bool) grantedHandler {
	return func(c *remoting.Conn, req, resp *codec.Command, _ auth.Grant) error {
		d, early := lr(req)
		if early != nil {
			early.Fill(resp)
			return nil
		}
		if !s.node.ReadyLeader() {
			notLeader(resp)
			return nil
		}
		if write || s.runtime().ProcessReadEvent {
			return s.enqueue(c, &job{code: req.Code, decide: d, barrier: !write})
		}
		r := s.decide(d).Reply
		r.Fill(resp)
		return nil
	}
}

// enqueue defers the request's answer to the writer. The connection goes
// on serving (heartbeats keep flowing while a write waits on raft). A full
// queue answers 2 SYSTEM_BUSY at once, as Java's full request pool does.
func (s *Server) enqueue(c *remoting.Conn, j *job) error {
	j.pending = c.Defer()
	select {
	case s.jobs <- j:
		return nil
	default:
		s.counts.busy.Add(1)
		return remoting.Refuse(codec.SystemBusy, remarkOverload)
	}
}

// decide runs d under the state's read lock and the liveness lock (in
// that order, the package's lock order).
func (s *Server) decide(d decider) controller.Decision {
	rt := s.runtime()
	now := s.nowMs()
	var out controller.Decision
	s.fsm.Read(func(st *controller.State) {
		s.liveMu.Lock()
		defer s.liveMu.Unlock()
		out = d(st, controller.Env{Live: s.live, Now: now, Settings: controller.Settings{
			EnableElectUncleanMaster: rt.EnableElectUncleanMaster,
			MaxBrokerSets:            s.cfg.MaxBrokerSets, MaxBrokersPerSet: s.cfg.MaxBrokersPerSet,
		}})
	})
	return out
}
