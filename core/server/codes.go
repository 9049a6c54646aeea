// codes.go holds the NameServer's request-code table: each code it serves
// with its handler, metrics class and authorization class. The dispatch
// table, the metrics' labels and classes, and the authorization checks are
// all derived from it, so adding a code is one line here (and its constant
// and Java name in codec).

package server

import (
	"context"
	"log/slog"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

// class is a request's metrics class, the label of the latency histogram
// and of the per-minute summary.
type class uint8

const (
	classRoute class = iota
	classRegistration
	classAdmin
	numClasses
)

var classNames = [numClasses]string{"route", "registration", "admin"}

// requestCode is one line of the code table.
type requestCode struct {
	code    int32
	handler remoting.Handler
	class   class
	auth    auth.Class
}

// codeTable is every request code the NameServer serves. Its name is
// codec.RequestCodeName's; any other code is answered 3 and counted as
// UNKNOWN, in the admin class, open to everyone.
func (s *Server) codeTable() []requestCode {
	return []requestCode{
		{codec.PutKVConfig, s.handlePutKV, classAdmin, auth.ClassAdmin},
		{codec.GetKVConfig, s.handleGetKV, classAdmin, auth.ClassOpen},
		{codec.DeleteKVConfig, s.handleDeleteKV, classAdmin, auth.ClassAdmin},
		{codec.RegisterBroker, s.handleRegister, classRegistration, auth.ClassBrokerReport},
		{codec.UnregisterBroker, s.handleUnregister, classRegistration, auth.ClassBrokerWrite},
		{codec.GetRouteInfoByTopic, s.handleRoute, classRoute, auth.ClassOpen},
		{codec.GetBrokerClusterInfo, s.handleClusterInfo, classAdmin, auth.ClassOpen},
		{codec.WipeWritePermOfBroker, s.handleWipeWritePerm, classAdmin, auth.ClassAdmin},
		{codec.GetAllTopicListFromNameServer, s.handleAllTopicList, classAdmin, auth.ClassOpen},
		{codec.DeleteTopicInNamesrv, s.handleDeleteTopic, classAdmin, auth.ClassAdmin},
		{codec.RegisterTopicInNamesrv, s.handleRegisterTopic, classAdmin, auth.ClassBrokerWrite},
		{codec.GetKVListByNamespace, s.handleKVList, classAdmin, auth.ClassOpen},
		{codec.GetTopicsByCluster, s.handleTopicsByCluster, classAdmin, auth.ClassOpen},
		{codec.GetSystemTopicListFromNS, s.handleSystemTopicList, classAdmin, auth.ClassOpen},
		{codec.GetUnitTopicList, s.unitTopicHandler(route.UnitTopics), classAdmin, auth.ClassOpen},
		{codec.GetHasUnitSubTopicList, s.unitTopicHandler(route.HasUnitSubTopics), classAdmin, auth.ClassOpen},
		{codec.GetHasUnitSubUnUnitTopicList, s.unitTopicHandler(route.HasUnitSubUnunitTopics), classAdmin, auth.ClassOpen},
		{codec.UpdateNamesrvConfig, s.handleUpdateConfig, classAdmin, auth.ClassAdmin},
		{codec.GetNamesrvConfig, s.handleGetConfig, classAdmin, auth.ClassConfigRead},
		{codec.QueryDataVersion, s.handleQueryDataVersion, classRegistration, auth.ClassBrokerReport},
		{codec.AddWritePermOfBroker, s.handleAddWritePerm, classAdmin, auth.ClassAdmin},
		{codec.GetBrokerMemberGroup, s.handleBrokerMemberGroup, classAdmin, auth.ClassOpen},
		{codec.BrokerHeartbeat, s.handleHeartbeat, classRegistration, auth.ClassBrokerReport},
	}
}

// routeSample is how many route queries one latency sample stands for.
// Reading the clock twice costs about a fifth of a route query on a virtual
// machine's clock source, so a connection times its first route query and
// one in routeSample after it. A sample is weighted by the queries it
// stands for since the connection's previous one: 1 for the first, which
// is often the only one (admin tools, health checks, short-lived clients)
// and often slower than the rest, then routeSample. The quantiles and the
// mean stay right, and _count stays below the number of queries by at
// most routeSample-1 per connection (those after its last sample).
// Registrations and admin requests are rare and always timed.
const routeSample = 16

// dispatchTable is the code table as the listener routes it: the route
// class sampled, the protected codes behind the authorization check.
func (s *Server) dispatchTable() []remoting.Route {
	codes := s.codeTable()
	routes := make([]remoting.Route, len(codes))
	for i, c := range codes {
		routes[i] = remoting.Route{Code: c.code, Handler: s.fitReply(s.guard(c))}
		if c.class == classRoute {
			routes[i].TimeEvery = routeSample
			routes[i].Handler = s.guard(c) // checks its reply's size itself (replysize.go)
		}
	}
	return routes
}

// logRefusal logs a request a handler refused: admin requests are rare and
// made by people, worth a line; route misses and broker retries are not.
func (s *Server) logRefusal(c *remoting.Conn, req, resp *codec.Command, _ error) {
	level := slog.LevelDebug
	if s.metrics.classOf(req.Code) == classAdmin {
		level = slog.LevelInfo
	}
	s.log.Log(context.Background(), level, "request refused", "code", req.Code, "request", codec.RequestCodeName(req.Code),
		"peer", c.Peer(), "response", resp.Code, "remark", resp.Remark)
}
