// Who may send what on the controller port: the check in front of the
// handlers of each request's authorization class (core/auth's policy, the
// one the NameServer's port enforces; the classes are in the code table),
// and the NO_PERMISSION refusal.

package ctlserver

import (
	"errors"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/remoting"
)

// grantedHandler is a handler told who asked: the account that signed
// the request, or nobody (a request admitted by its source address, or
// served with no policy).
type grantedHandler func(c *remoting.Conn, req, resp *codec.Command, g auth.Grant) error

// plain makes a handler that does not care who asked a grantedHandler.
func plain(h remoting.Handler) grantedHandler {
	return func(c *remoting.Conn, req, resp *codec.Command, _ auth.Grant) error { return h(c, req, resp) }
}

// guard is the handler of rc behind the authorization check of each
// request's class (rc.auth). With no policy, or one that checks nothing,
// it is the handler itself told nobody asked, so the check costs nothing;
// a request of an open class is served the same way. A refused request
// gets NO_PERMISSION (nothing for a oneway one) and is not applied.
func (s *Server) guard(rc requestCode) remoting.Handler {
	h, classOf := rc.handler, rc.auth
	p := s.cfg.Auth
	if p == nil || !p.Enabled() {
		return func(c *remoting.Conn, req, resp *codec.Command) error { return h(c, req, resp, auth.Grant{}) }
	}
	return func(c *remoting.Conn, req, resp *codec.Command) error {
		class := classOf(req)
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
