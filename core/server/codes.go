// codes.go holds the NameServer's dispatch table: each request code it
// serves and its handler.

package server

import (
	"context"
	"log/slog"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
)

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

// dispatchTable is every code the NameServer serves, with its handler;
// the authorization check wraps the protected ones.
func (s *Server) dispatchTable() []remoting.Route {
	routes := []remoting.Route{
		{Code: codec.GetRouteInfoByTopic, Handler: s.handleRoute, TimeEvery: routeSample},
		{Code: codec.RegisterBroker, Handler: s.handleRegister},
		{Code: codec.QueryDataVersion, Handler: s.handleQueryDataVersion},
		{Code: codec.BrokerHeartbeat, Handler: s.handleHeartbeat},
		{Code: codec.UnregisterBroker, Handler: s.handleUnregister},
		{Code: codec.GetBrokerClusterInfo, Handler: s.handleClusterInfo},
		{Code: codec.PutKVConfig, Handler: s.handlePutKV},
		{Code: codec.GetKVConfig, Handler: s.handleGetKV},
		{Code: codec.DeleteKVConfig, Handler: s.handleDeleteKV},
		{Code: codec.GetKVListByNamespace, Handler: s.handleKVList},
		{Code: codec.WipeWritePermOfBroker, Handler: s.handleWipeWritePerm},
		{Code: codec.AddWritePermOfBroker, Handler: s.handleAddWritePerm},
		{Code: codec.GetAllTopicListFromNameServer, Handler: s.handleAllTopicList},
		{Code: codec.DeleteTopicInNamesrv, Handler: s.handleDeleteTopic},
		{Code: codec.RegisterTopicInNamesrv, Handler: s.handleRegisterTopic},
		{Code: codec.GetTopicsByCluster, Handler: s.handleTopicsByCluster},
		{Code: codec.GetSystemTopicListFromNS, Handler: s.handleSystemTopicList},
		{Code: codec.GetUnitTopicList, Handler: s.unitTopicHandler(route.UnitTopics)},
		{Code: codec.GetHasUnitSubTopicList, Handler: s.unitTopicHandler(route.HasUnitSubTopics)},
		{Code: codec.GetHasUnitSubUnUnitTopicList, Handler: s.unitTopicHandler(route.HasUnitSubUnunitTopics)},
		{Code: codec.UpdateNamesrvConfig, Handler: s.handleUpdateConfig},
		{Code: codec.GetNamesrvConfig, Handler: s.handleGetConfig},
		{Code: codec.GetBrokerMemberGroup, Handler: s.handleBrokerMemberGroup},
	}
	for i := range routes {
		routes[i].Handler = s.guard(routes[i].Code, routes[i].Handler)
	}
	return routes
}

// logRefusal logs a request a handler refused: admin requests are rare and
// made by people, worth a line; route misses and broker retries are not.
func (s *Server) logRefusal(c *remoting.Conn, req, resp *codec.Command, _ error) {
	level := slog.LevelDebug
	if classOf(req.Code) == classAdmin {
		level = slog.LevelInfo
	}
	s.log.Log(context.Background(), level, "request refused", "code", req.Code, "request", codec.RequestCodeName(req.Code),
		"peer", c.Peer(), "response", resp.Code, "remark", resp.Remark)
}
