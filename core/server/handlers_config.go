// handlers_config.go holds the configuration codes (318 UPDATE_NAMESRV_CONFIG,
// 319 GET_NAMESRV_CONFIG) and the copy-on-write configuration they swap.

package server

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting"
)

// adminState is what the admin codes add to a Server. Its zero value is
// ready: until the first update the configuration is Server.cfg.
type adminState struct {
	// cfg is the current configuration, replaced whole on every accepted
	// update and never modified after it is stored, so request handlers
	// read it without a lock. nil means Server.cfg.
	cfg atomic.Pointer[config.Config]
	// updateMu serialises updates: check, persist, swap.
	updateMu sync.Mutex

	notify notifier

	auth authState // auth.go
}

// conf returns the configuration to use for this request. Settings that are
// not run-time keys never change, so Server.cfg stays right for them.
func (s *Server) conf() *config.Config {
	if c := s.admin.cfg.Load(); c != nil {
		return c
	}
	return s.cfg
}

// handleUpdateConfig is UPDATE_NAMESRV_CONFIG. Unlike Java it accepts only
// run-time keys (config.RuntimeKeys), applies nothing unless every key is
// acceptable, and persists before the new values take effect, so a refused
// or failed update leaves memory and disk as they were. Only the updated keys
// are written into the file, in place (config.Config.PersistUpdate). The
// controller's 1009 follows the same rules (config.Refusal says how both
// answer a refusal).
func (s *Server) handleUpdateConfig(c *remoting.Conn, req, resp *codec.Command) error {
	props, err := config.UpdateBody(req.Body)
	if err == nil && len(props) == 0 {
		return nil
	}
	s.admin.updateMu.Lock()
	defer s.admin.updateMu.Unlock()
	var next *config.Config
	if err == nil {
		next, err = s.conf().RuntimeUpdate(props)
	}
	keys := make([]string, len(props))
	for i, p := range props {
		keys[i] = p.Key
	}
	if err == nil && next.ConfigStorePath != "" {
		err = next.PersistUpdate(next.ConfigStorePath, keys)
		if over := s.cfg.OverriddenAtStart(keys); err == nil && len(over) > 0 {
			s.log.Warn("config update persisted, but set at start-up elsewhere, which wins at the next start", "keys", over, "path", next.ConfigStorePath)
		}
	}
	switch {
	case errors.Is(err, config.ErrNotPersisted):
		s.log.Error("config update not applied: persist failed", "err", err)
		return refuse(config.Refusal(err))
	case err != nil:
		s.log.Warn("config update refused", "peer", c.Peer(), "err", err)
		return refuse(config.Refusal(err))
	}
	s.admin.cfg.Store(next)
	s.routes.SetSupportActingMaster(next.SupportActingMaster)
	s.routes.SetDeleteTopicWithBrokerRegistration(next.DeleteTopicWithBrokerRegistration)
	for i, p := range props {
		keys[i] = p.Key + "=" + strings.TrimSpace(p.Value)
	}
	s.log.Info("config updated", "changes", keys, "persisted_to", next.ConfigStorePath, "peer", c.Peer())
	return nil
}

// handleGetConfig is GET_NAMESRV_CONFIG: every setting as sorted key=value
// lines. There is always a body (the Java admin client fails without one).
func (s *Server) handleGetConfig(c *remoting.Conn, req, resp *codec.Command) error {
	buf := c.Buffer()
	buf.B = s.conf().AppendText(buf.B[:0])
	resp.Body = buf.B
	return nil
}
