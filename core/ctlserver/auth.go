// Who may send what on the controller port: each request's authorization
// class, the check in front of the handlers (core/auth's policy, the one
// the NameServer's port enforces), and the NO_PERMISSION refusal.

package ctlserver

import (
	"errors"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting"
)

// requestClass is the authorization class of a request on the controller
// port, following the NameServer's: what brokers send in their normal run
// is a broker code, what only mqadmin sends to change state is an admin
// code, the configuration read is a config read, and the other reads
// (1004, 1005, 1006, 1012) stay open.
//
// 1002 is both: a broker asks for its own set's election with
// designateElect=false and its own id (Java's ofBrokerTrigger), an
// operator names the master with designateElect=true (mqadmin electMaster),
// and brokerId -1 is the controller's own trigger, which no peer sends.
// Only the first is a broker code.
func requestClass(req *codec.Command) auth.Class {
	switch req.Code {
	case codec.BrokerHeartbeat, codec.ControllerAlterSyncStateSet, codec.ControllerRegisterBroker,
		codec.ControllerApplyBrokerID:
		return auth.ClassBrokerReport
	case codec.ControllerElectMaster:
		if r := controller.ParseElectMaster(req); !r.DesignateElect && r.BrokerID >= 0 {
			return auth.ClassBrokerReport
		}
		return auth.ClassAdmin
	case codec.UpdateControllerConfig, codec.CleanBrokerData:
		return auth.ClassAdmin
	case codec.GetControllerConfig:
		return auth.ClassConfigRead
	}
	return auth.ClassOpen
}

// grantedHandler is a handler told who asked: the account that signed
// the request, or nobody (a request admitted by its source address, or
// served with no policy).
type grantedHandler func(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error

// plain makes a handler that does not care who asked a grantedHandler.
func plain(h remoting.Handler) grantedHandler {
	return func(c *remoting.Conn, req, resp *codec.Command, _ auth.Grant) error { return h(c, req, resp) }
}

// guard is h behind the authorization check of each request's class.
// With no policy, or one that checks nothing, it is h itself told nobody
// asked, so the check costs nothing. A refused request gets NO_PERMISSION
// (nothing for a oneway one) and is not applied.
func (s *Server) guard(h grantedHandler) remoting.Handler {
	p := s.cfg.Auth
	if p == nil || !p.Enabled() {
		return func(c *remoting.Conn, req, resp *codec.Command) error { return h(c, req, resp, auth.Grant{}) }
	}
	return func(c *remoting.Conn, req, resp *codec.Command) error {
		class := requestClass(req)
		if class == auth.ClassOpen {
			return h(c, req, resp, auth.Grant{})
		}
		g, err := p.Authorize(class, req, c.Peer())
		if err != nil {
			var d *auth.Denial
			if !errors.As(err, &d) {
				d = &auth.Denial{Code: req.Code, Class: class}
			}
			s.refuseAuthorization(c, req, resp, d)
			return nil
		}
		return h(c, req, resp, g)
	}
}

// refuseAuthorization answers NO_PERMISSION for d, with the NameServer's
// remark, counts and logs it.
func (s *Server) refuseAuthorization(c *remoting.Conn, req, resp *codec.Command, d *auth.Denial) {
	resp.Code = codec.NoPermission
	resp.Remark = d.Error()
	resp.Body = nil
	resp.HasExt, resp.Ext = false, resp.Ext[:0]
	s.counts.refused(refusalAuth(d.Reason))
	s.log.Warn("controller: request refused: not authorized",
		"code", req.Code, "request", codec.RequestCodeName(req.Code), "peer", c.Peer(),
		"account", d.AccessKey, "reason", d.Reason.String(), "oneway", req.IsOneway())
}
