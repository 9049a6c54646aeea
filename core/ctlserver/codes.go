// codes.go holds the controller port's request-code table: each code it
// serves with its latency class (which also says where it is answered),
// its authorization class and its handler, the leader's codes with the
// decision the leader makes of them. The dispatch table, the metrics'
// labels and classes, and the authorization checks are all derived from
// it, so adding a code is one line here (and its line in codec/codes.go).

package ctlserver

import (
	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting"
)

// requestCode is one line of the code table.
type requestCode struct {
	code  int32
	class int // the latency class (metrics.go), which says where it is answered
	auth  authOf
	// handler answers on this node; a leader code's (read, write) first
	// checks that the node is the ready leader.
	handler grantedHandler
}

// authOf is the authorization class of a request of a code.
type authOf func(req *codec.Command) auth.Class

// fixed is the authOf of a code whose requests are all of class c.
func fixed(c auth.Class) authOf { return func(*codec.Command) auth.Class { return c } }

// electMasterClass is 1002's authorization class, which depends on who
// triggers the election: a broker asks for its own set's election with
// designateElect=false and its own id (Java's ofBrokerTrigger), an
// operator names the master with designateElect=true (mqadmin
// electMaster), and brokerId -1 is the controller's own trigger, which no
// peer sends. Only the first is a broker code.
func electMasterClass(req *codec.Command) auth.Class {
	if r := controller.ParseElectMaster(req); !r.DesignateElect && r.BrokerID >= 0 {
		return auth.ClassBrokerReport
	}
	return auth.ClassAdmin
}

// codeTable is every request code the controller port serves. Every other
// code, the raft and DLedger ones included, is answered 3
// REQUEST_CODE_NOT_SUPPORTED as Java answers codes it did not register,
// and counted as UNKNOWN in the node class.
//
// The authorization classes follow the NameServer's: what brokers send in
// their normal run is a broker code, what only mqadmin sends to change
// state an admin code, the configuration read a config read, and the other
// reads stay open.
func (s *Server) codeTable() []requestCode {
	broker, admin, open := fixed(auth.ClassBrokerReport), fixed(auth.ClassAdmin), fixed(auth.ClassOpen)
	return []requestCode{
		{codec.BrokerHeartbeat, classHeartbeat, broker, s.handleHeartbeat},
		{codec.ControllerGetMetadataInfo, classNode, open, plain(s.handleMetadata)},
		{codec.UpdateControllerConfig, classNode, admin, plain(s.handleUpdateConfig)},
		{codec.GetControllerConfig, classNode, fixed(auth.ClassConfigRead), plain(s.handleGetConfig)},
		{codec.ControllerAlterSyncStateSet, classLeader, broker, s.write(alterSyncStateSet)},
		{codec.ControllerElectMaster, classLeader, electMasterClass, s.write(fromHeader(controller.ParseElectMaster, (*controller.State).ElectMaster))},
		{codec.ControllerRegisterBroker, classLeader, broker, s.write(fromHeader(controller.ParseRegisterBroker, (*controller.State).RegisterBroker))},
		{codec.ControllerGetReplicaInfo, classLeader, open, s.read(fromHeader(controller.ParseGetReplicaInfo, (*controller.State).GetReplicaInfo))},
		{codec.ControllerGetSyncStateData, classLeader, open, s.read(s.syncStateData)},
		{codec.CleanBrokerData, classLeader, admin, s.write(fromHeader(controller.ParseCleanBrokerData, (*controller.State).CleanBrokerData))},
		{codec.ControllerGetNextBrokerID, classLeader, open, s.read(fromHeader(controller.ParseNextBrokerID, (*controller.State).NextBrokerID))},
		{codec.ControllerApplyBrokerID, classLeader, broker, s.write(fromHeader(controller.ParseApplyBrokerID, (*controller.State).ApplyBrokerID))},
	}
}

// heartbeatSampleEvery is how often Observe times a 904 (one per broker
// per second per node: the clock reads would be a noticeable share).
const heartbeatSampleEvery = 64

// dispatchTable is the code table as the listener routes it: every code
// behind the authorization check of its class, the heartbeats sampled.
func (s *Server) dispatchTable() []remoting.Route {
	codes := s.codeTable()
	routes := make([]remoting.Route, len(codes))
	for i, c := range codes {
		routes[i] = remoting.Route{Code: c.code, Handler: s.guard(c)}
		if c.class == classHeartbeat {
			routes[i].TimeEvery = heartbeatSampleEvery
		}
	}
	return routes
}
