// Broker liveness on this node: connection closes, the expiry scan, the
// leader's inactive-master scan, and the elections they trigger.

package ctlserver

import (
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
