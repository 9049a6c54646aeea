// auth.go holds the authorization check that guards the protected codes:
// the policy built from the configuration and the NO_PERMISSION refusal.

package server

import (
	"errors"
	"os"
	"strings"
	"sync"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/remoting"
)

// authState is the authorization side of a Server. Its zero value is ready;
// the policy is built from the configuration on the first request that
// needs it. The settings are start-up only (not run-time keys), so it never
// changes after that. config.Validate reads the same file and networks at
// start-up, so a bad setting normally stops the process before it serves.
type authState struct {
	once   sync.Once
	policy *auth.Policy
	err    error
}

// authEnabled reports whether the configuration asks for any check.
func (s *Server) authEnabled() bool { return s.cfg.AuthEnabled() }

// guard is the handler of c behind the authorization check c's class
// needs; with authorization off, and for open codes, it is the handler
// itself, so they cost nothing. A refused request gets NO_PERMISSION (not
// sent for a oneway request, which is simply not applied). A code whose
// handler needs to know who asked (c.granted) is handed the grant.
func (s *Server) guard(c requestCode) remoting.Handler {
	class := c.auth
	if class == auth.ClassOpen || !s.authEnabled() {
		return c.handler
	}
	if g := c.granted; g != nil {
		return func(conn *remoting.Conn, req, resp *codec.Command) error {
			grant, ok := s.checkAuthorization(class, conn, req, resp)
			if !ok {
				return nil
			}
			return g(conn, req, resp, grant)
		}
	}
	h := c.handler
	return func(conn *remoting.Conn, req, resp *codec.Command) error {
		if _, ok := s.checkAuthorization(class, conn, req, resp); !ok {
			return nil
		}
		return h(conn, req, resp)
	}
}

func (s *Server) checkAuthorization(class auth.Class, c *remoting.Conn, req, resp *codec.Command) (auth.Grant, bool) {
	p, err := s.authPolicy()
	if err != nil {
		// Fail closed: a policy that cannot be built protects nothing, and
		// serving protected codes unchecked is what the operator turned off.
		resp.Code = codec.NoPermission
		resp.Remark = "no permission for " + codec.RequestCodeName(req.Code) + ": authorization is misconfigured on this NameServer"
		resp.Body = nil
		s.metrics.authRefusal(0)
		s.log.Error("request refused: authorization misconfigured", "code", req.Code, "peer", c.Peer(), "err", err)
		return auth.Grant{}, false
	}
	grant, err := p.Authorize(class, req, c.Peer())
	if err == nil {
		return grant, true
	}
	var d *auth.Denial
	if !errors.As(err, &d) {
		d = &auth.Denial{Code: req.Code}
	}
	s.refuseAuthorization(c, req, resp, d)
	return auth.Grant{}, false
}

// refuseAuthorization answers NO_PERMISSION for d, counts and logs it.
func (s *Server) refuseAuthorization(c *remoting.Conn, req, resp *codec.Command, d *auth.Denial) {
	resp.Code = codec.NoPermission
	resp.Remark = d.Error()
	resp.Body = nil
	s.metrics.authRefusal(d.Reason)
	s.log.Warn("request refused: not authorized",
		"code", req.Code, "request", codec.RequestCodeName(req.Code), "peer", c.Peer(),
		"account", d.AccessKey, "reason", d.Reason.String(), "oneway", req.IsOneway())
}

// AuthPolicy is the policy the NameServer's port enforces, built once from
// the configuration: a controller embedded in the process enforces the
// same one on its port (its accounts, networks and strict-signature replay
// cache). With no authorization setting it refuses nothing.
func (s *Server) AuthPolicy() (*auth.Policy, error) { return s.authPolicy() }

// authPolicy builds the policy once.
func (s *Server) authPolicy() (*auth.Policy, error) {
	a := &s.admin.auth
	a.once.Do(func() {
		a.policy, a.err = s.cfg.AuthPolicy()
		if a.err != nil {
			s.log.Error("authorization misconfigured: protected requests will be refused", "err", a.err)
			return
		}
		s.log.Info("authorization on", "signatures", s.cfg.AuthorizationEnable,
			"acl_file", s.cfg.ACLFile, "broker_registration", s.cfg.AuthorizeBrokerRegistration,
			"admin_allow_cidrs", s.cfg.AdminAllowCIDRs, "broker_allow_cidrs", s.brokerAllowCIDRs(),
			"strict_signature", s.cfg.ACLStrictSignature)
		if s.cfg.AuthorizationEnable && s.brokerAllowCIDRs() == "" {
			s.log.Warn("brokerAllowCIDRs is empty: only brokers that sign with a broker account can register")
		}
		if u := a.policy.UnboundBrokers(); len(u) > 0 {
			s.log.Warn("broker accounts bound to no brokerName may register as any broker; bind them in aclFile (accessKey brokers=...)",
				"accounts", strings.Join(u, ","))
		}
		if s.cfg.AuthorizationEnable {
			if fi, err := os.Stat(s.cfg.ACLFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
				s.log.Warn("aclFile holds secret keys but others may read it; chmod 600 it",
					"acl_file", s.cfg.ACLFile, "mode", fi.Mode().Perm().String())
			}
		}
	})
	return a.policy, a.err
}

// brokerAllowCIDRs is brokerAllowCIDRs, or adminAllowCIDRs when it is not
// set.
func (s *Server) brokerAllowCIDRs() string {
	if strings.TrimSpace(s.cfg.BrokerAllowCIDRs) != "" {
		return s.cfg.BrokerAllowCIDRs
	}
	return s.cfg.AdminAllowCIDRs
}
