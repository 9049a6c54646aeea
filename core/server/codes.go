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
	// weigh picks the requests that wait for a turn in the heavy queue
	// (remoting.Route.Weigh); nil: answered at once. Heavy are those that
	// decode a body of a size the peer chooses or encode one that grows
	// with the route table. The KV and configuration writes wait for the
	// disk, not a core, behind the store's own lock: they take no turn.
	weigh remoting.Weigh
	auth  auth.Class
	// granted, when set, is the handler behind the authorization check:
	// it is told who asked (the registration's owner, a bound account's
	// brokers). handler is then granted with no grant.
	granted grantedHandler
}

// grantedHandler is a handler that acts on who asked.
type grantedHandler func(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error

// withGrant lets a grantedHandler serve unchecked requests as nobody's.
func withGrant(h grantedHandler) remoting.Handler {
	return func(c *remoting.Conn, req, resp *codec.Command) error { return h(c, req, resp, auth.Grant{}) }
}

// codeTable is every request code the NameServer serves. Its name is
// codec.RequestCodeName's; any other code is answered 3 and counted as
// UNKNOWN, in the admin class, open to everyone.
func (s *Server) codeTable() []requestCode {
	return []requestCode{
		{codec.PutKVConfig, s.handlePutKV, classAdmin, nil, auth.ClassAdmin, nil},
		{codec.GetKVConfig, s.handleGetKV, classAdmin, nil, auth.ClassOpen, nil},
		{codec.DeleteKVConfig, s.handleDeleteKV, classAdmin, nil, auth.ClassAdmin, nil},
		{codec.RegisterBroker, withGrant(s.handleRegister), classRegistration, weighRegistration, auth.ClassBrokerReport, s.handleRegister},
		{codec.UnregisterBroker, withGrant(s.handleUnregister), classRegistration, nil, auth.ClassBrokerWrite, s.handleUnregister},
		{codec.GetRouteInfoByTopic, s.handleRoute, classRoute, nil, auth.ClassOpen, nil},
		{codec.GetBrokerClusterInfo, s.handleClusterInfo, classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.WipeWritePermOfBroker, s.handleWipeWritePerm, classAdmin, remoting.Heavy, auth.ClassAdmin, nil},
		{codec.GetAllTopicListFromNameServer, s.handleAllTopicList, classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.DeleteTopicInNamesrv, s.handleDeleteTopic, classAdmin, remoting.Heavy, auth.ClassAdmin, nil},
		{codec.RegisterTopicInNamesrv, withGrant(s.handleRegisterTopic), classAdmin, remoting.Heavy, auth.ClassBrokerWrite, s.handleRegisterTopic},
		{codec.GetKVListByNamespace, s.handleKVList, classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.GetTopicsByCluster, s.handleTopicsByCluster, classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.GetSystemTopicListFromNS, s.handleSystemTopicList, classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.GetUnitTopicList, s.unitTopicHandler(route.UnitTopics), classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.GetHasUnitSubTopicList, s.unitTopicHandler(route.HasUnitSubTopics), classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.GetHasUnitSubUnUnitTopicList, s.unitTopicHandler(route.HasUnitSubUnunitTopics), classAdmin, remoting.Heavy, auth.ClassOpen, nil},
		{codec.UpdateNamesrvConfig, s.handleUpdateConfig, classAdmin, nil, auth.ClassAdmin, nil},
		{codec.GetNamesrvConfig, s.handleGetConfig, classAdmin, nil, auth.ClassConfigRead, nil},
		{codec.QueryDataVersion, s.handleQueryDataVersion, classRegistration, nil, auth.ClassBrokerReport, nil},
		{codec.AddWritePermOfBroker, s.handleAddWritePerm, classAdmin, remoting.Heavy, auth.ClassAdmin, nil},
		{codec.GetBrokerMemberGroup, s.handleBrokerMemberGroup, classAdmin, nil, auth.ClassOpen, nil},
		{codec.BrokerHeartbeat, s.handleHeartbeat, classRegistration, nil, auth.ClassBrokerReport, nil},
		// rocketns's own. Config-read: it changes nothing, but the table
		// (every broker address, account names of registrations) is for
		// the admin networks and, with signatures on, for a readonly or
		// admin account, so the copying server needs no admin key.
		{codec.GetRouteSnapshot, s.handleRouteSnapshot, classAdmin, remoting.Heavy, auth.ClassConfigRead, nil},
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
		routes[i] = remoting.Route{Code: c.code, Handler: s.guard(c), Weigh: c.weigh}
		if c.class == classRoute {
			routes[i].TimeEvery = routeSample
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
