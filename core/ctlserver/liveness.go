// Broker liveness on this node: connection closes, the expiry scan, the
// leader's inactive-master scan, and the elections they trigger.

package ctlserver

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting"
)

// connClosed drops at once every broker whose latest heartbeat came on the
// connection, and on the ready leader elects for each set whose master it
// was: a dead broker's connection closes long before its heartbeats
// expire, which is where Java's 22 ms failover (and ours) comes from. It
// runs on the connection's goroutine and does not block.
func (s *Server) connClosed(id remoting.ConnID) {
	s.liveMu.Lock()
	gone := s.live.ConnClosed(uint64(id))
	s.liveMu.Unlock()
	s.inactive(gone, "connection closed")
}

// expiryScan drops the brokers whose heartbeats expired and closes their
// connections, on every node (Java's scanNotActiveBrokerInterval scan).
func (s *Server) expiryScan() {
	now := s.nowMs()
	s.liveMu.Lock()
	gone := s.live.Expire(now)
	s.liveMu.Unlock()
	for _, in := range gone {
		// Its other brokers (a broker container shares one) go with it,
		// through connClosed.
		s.remote.CloseConn(remoting.ConnID(in.Info.Conn))
	}
	s.inactive(gone, "heartbeat expired")
}

// inactive handles brokers that left the liveness table: each is logged,
// and a master's loss on the ready leader triggers an election.
func (s *Server) inactive(gone []controller.Inactive, why string) {
	if len(gone) == 0 {
		return
	}
	leader := s.node.ReadyLeader()
	var masters []string
	s.fsm.Read(func(st *controller.State) {
		for _, in := range gone {
			if leader && st.IsMaster(in.Key.BrokerName, in.Key.BrokerID) {
				masters = append(masters, in.Key.BrokerName)
			}
		}
	})
	for _, in := range gone {
		s.log.Info("controller: broker inactive", "cluster", in.Key.Cluster, "broker_name", in.Key.BrokerName,
			"broker_id", in.Key.BrokerID, "addr", in.Info.Addr, "why", why)
	}
	for _, name := range masters {
		s.triggerElection(name, why)
	}
}

// inactiveMasterScan elects, on the ready leader, for every set whose
// master is not alive while one of its brokers is (Java's
// scanInactiveMasterInterval scan): the master may have died while another
// node led, or its heartbeats stopped without its connection closing.
func (s *Server) inactiveMasterScan() {
	if !s.node.ReadyLeader() {
		return
	}
	now := s.nowMs()
	var names []string
	s.fsm.Read(func(st *controller.State) {
		s.liveMu.Lock()
		names = controller.InactiveMasters(st, s.live, now)
		s.liveMu.Unlock()
	})
	for _, name := range names {
		s.triggerElection(name, "inactive master scan")
	}
}

// peerHost is the source address of a peer written host:port, the zero
// Addr when it does not parse.
func peerHost(peer string) netip.Addr {
	ap, err := netip.ParseAddrPort(peer)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap().WithZone("")
}

// registered reports whether hb's broker is registered in the replicated
// state (its set created by the same cluster): such a broker is admitted
// to a full liveness table.
func (s *Server) registered(hb *controller.Heartbeat) bool {
	var ok bool
	s.fsm.Read(func(st *controller.State) { ok = st.Registered(hb.ClusterName, hb.BrokerName, hb.BrokerID) })
	return ok
}

// refuseHeartbeatTakeover answers a heartbeat for a broker another
// connection holds: recorded nowhere, NO_PERMISSION to a sender that waits
// for an answer (brokers send 904 oneway), counted and logged.
func (s *Server) refuseHeartbeatTakeover(c *remoting.Conn, req, resp *codec.Command, hb *controller.Heartbeat) {
	k := controller.LiveKey{Cluster: hb.ClusterName, BrokerName: hb.BrokerName, BrokerID: hb.BrokerID}
	s.liveMu.Lock()
	held, _ := s.live.Info(k)
	s.liveMu.Unlock()
	holder := held.Host.String()
	if !held.Host.IsValid() {
		holder = "an unknown address"
	}
	s.counts.refused(refusedHeartbeatTakeover)
	s.log.Warn("controller: heartbeat refused: the broker heartbeats on another connection",
		"peer", c.Peer(), "cluster", hb.ClusterName, "broker_name", hb.BrokerName, "broker_id", hb.BrokerID,
		"holder", holder, "holder_addr", held.Addr)
	if req.IsOneway() {
		return
	}
	refuse(resp, codec.NoPermission, fmt.Sprintf("no permission for BROKER_HEARTBEAT (904): broker %s id %d of cluster %s heartbeats on another connection, from %s; "+
		"a connection from another host takes it over once that one closes or its heartbeats expire (%d ms), or with the signature of an account bound to %s",
		clip(hb.BrokerName), hb.BrokerID, clip(hb.ClusterName), holder, held.Timeout, clip(hb.BrokerName)))
}

// refuseLivenessFull answers a heartbeat from a broker new to a full
// liveness table and not registered.
func (s *Server) refuseLivenessFull(c *remoting.Conn, req, resp *codec.Command, hb *controller.Heartbeat) {
	s.counts.refused(refusedLiveness)
	s.log.Warn("controller: heartbeat refused: the liveness table is full; raise controllerMaxLiveBrokers if these brokers are real",
		"peer", c.Peer(), "cluster", hb.ClusterName, "broker_name", hb.BrokerName, "broker_id", hb.BrokerID,
		"limit", s.live.Max, "setting", config.KeyControllerMaxLiveBrokers)
	if req.IsOneway() {
		return
	}
	refuse(resp, codec.SystemError, fmt.Sprintf("heartbeat refused: this controller tracks at most %d brokers (%s) and broker %s id %d is not registered (1013)",
		s.live.Max, config.KeyControllerMaxLiveBrokers, clip(hb.BrokerName), hb.BrokerID))
}

// refuse fills resp with a refusal without extFields.
func refuse(resp *codec.Command, code int32, remark string) {
	resp.Code, resp.Remark, resp.Body = code, remark, nil
	resp.HasExt, resp.Ext = false, resp.Ext[:0]
}

// maxEcho bounds a peer's string quoted in a remark.
const maxEcho = 128

// clip is s cut to maxEcho bytes for a remark.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return strings.ToValidUTF8(s[:maxEcho], "") + "...(" + strconv.Itoa(len(s)) + " bytes)"
}

// newLiveness is an empty liveness table bounded at max brokers not
// registered.
func newLiveness(max int) *controller.Liveness {
	l := controller.NewLiveness()
	l.Max = max
	return l
}
