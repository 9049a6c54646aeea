// The dispatch table of the controller port and its handlers: what every
// node answers itself (904, 1005, 1009, 1010), and the leader requests,
// read at once or queued for the writer.

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

// heartbeatSampleEvery is how often Observe times a 904 (one per broker
// per second per node: the clock reads would be a noticeable share).
const heartbeatSampleEvery = 64

// routes is the controller port's table. Every other code, the raft and
// DLedger ones included, is answered 3 REQUEST_CODE_NOT_SUPPORTED as Java
// answers codes it did not register.
//
// The codes that change state or show the configuration are behind the
// authorization check (guard, requestClass); the open reads are not.
func (s *Server) routes() []remoting.Route {
	return []remoting.Route{
		{Code: codec.BrokerHeartbeat, Handler: s.guard(s.handleHeartbeat), TimeEvery: heartbeatSampleEvery},
		{Code: codec.ControllerGetMetadataInfo, Handler: s.handleMetadata},
		{Code: codec.UpdateControllerConfig, Handler: s.guard(plain(s.handleUpdateConfig))},
		{Code: codec.GetControllerConfig, Handler: s.guard(plain(s.handleGetConfig))},
		{Code: codec.ControllerAlterSyncStateSet, Handler: s.guard(plain(s.handleAlterSyncStateSet))},
		{Code: codec.ControllerElectMaster, Handler: s.guard(plain(s.handleElectMaster))},
		{Code: codec.ControllerRegisterBroker, Handler: s.guard(plain(s.handleRegisterBroker))},
		{Code: codec.ControllerGetReplicaInfo, Handler: s.handleGetReplicaInfo},
		{Code: codec.ControllerGetSyncStateData, Handler: s.handleGetSyncStateData},
		{Code: codec.CleanBrokerData, Handler: s.guard(plain(s.handleCleanBrokerData))},
		{Code: codec.ControllerGetNextBrokerID, Handler: s.handleNextBrokerID},
		{Code: codec.ControllerApplyBrokerID, Handler: s.guard(plain(s.handleApplyBrokerID))},
	}
}

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

// read answers a leader read (1004, 1006, 1012) from the ready leader's
// state, at once; with processReadEvent it goes through the writer behind
// an empty raft entry instead.
func (s *Server) read(c *remoting.Conn, req, resp *codec.Command, d decider) error {
	if !s.node.ReadyLeader() {
		notLeader(resp)
		return nil
	}
	if s.runtime().ProcessReadEvent {
		return s.enqueue(c, &job{code: req.Code, decide: d, barrier: true})
	}
	r := s.decide(d).Reply
	r.Fill(resp)
	return nil
}

// write queues a leader write (1001, 1002, 1003, 1011, 1013) for the
// writer, which answers it once its events are committed and applied.
func (s *Server) write(c *remoting.Conn, req, resp *codec.Command, d decider) error {
	if !s.node.ReadyLeader() {
		notLeader(resp)
		return nil
	}
	return s.enqueue(c, &job{code: req.Code, decide: d})
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

// handleAlterSyncStateSet is CONTROLLER_ALTER_SYNC_STATE_SET (1001). A
// body that does not decode fails on any node, before the leader check,
// as Java's does.
func (s *Server) handleAlterSyncStateSet(c *remoting.Conn, req, resp *codec.Command) error {
	r, err := controller.ParseAlterSyncStateSet(req, req.Body)
	if err != nil {
		rep := controller.BodyErrorReply(err)
		rep.Fill(resp)
		return nil
	}
	return s.write(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.AlterSyncStateSet(r, env)
	})
}

// handleElectMaster is CONTROLLER_ELECT_MASTER (1002), the broker and
// admin triggers.
func (s *Server) handleElectMaster(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseElectMaster(req)
	return s.write(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.ElectMaster(r, env)
	})
}

// handleRegisterBroker is CONTROLLER_REGISTER_BROKER (1003).
func (s *Server) handleRegisterBroker(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseRegisterBroker(req)
	return s.write(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.RegisterBroker(r, env)
	})
}

// handleCleanBrokerData is CLEAN_BROKER_DATA (1011).
func (s *Server) handleCleanBrokerData(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseCleanBrokerData(req)
	return s.write(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.CleanBrokerData(r, env)
	})
}

// handleApplyBrokerID is CONTROLLER_APPLY_BROKER_ID (1013).
func (s *Server) handleApplyBrokerID(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseApplyBrokerID(req)
	return s.write(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.ApplyBrokerID(r, env)
	})
}

// handleGetReplicaInfo is CONTROLLER_GET_REPLICA_INFO (1004), a read.
func (s *Server) handleGetReplicaInfo(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseGetReplicaInfo(req)
	return s.read(c, req, resp, func(st *controller.State, _ controller.Env) controller.Decision {
		return st.GetReplicaInfo(r)
	})
}

// handleNextBrokerID is CONTROLLER_GET_NEXT_BROKER_ID (1012), a read.
func (s *Server) handleNextBrokerID(c *remoting.Conn, req, resp *codec.Command) error {
	r := controller.ParseNextBrokerID(req)
	return s.read(c, req, resp, func(st *controller.State, _ controller.Env) controller.Decision {
		return st.NextBrokerID(r)
	})
}

// handleGetSyncStateData is CONTROLLER_GET_SYNC_STATE_DATA (1006), a read.
// Java decodes the body before anything else: a broken one is 1 on any
// node, and no names (no body, or an empty list) is 1 "not set any
// response code", also on any node.
func (s *Server) handleGetSyncStateData(c *remoting.Conn, req, resp *codec.Command) error {
	r, err := controller.ParseGetSyncStateData(req.Body)
	if err != nil {
		rep := controller.BodyErrorReply(err)
		rep.Fill(resp)
		return nil
	}
	if len(r.Names) == 0 {
		rep := s.noState.GetSyncStateData(r, controller.Env{}).Reply
		rep.Fill(resp)
		return nil
	}
	return s.read(c, req, resp, func(st *controller.State, env controller.Env) controller.Decision {
		return st.GetSyncStateData(r, env)
	})
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
