// handlers_config.go holds the configuration codes (318 UPDATE_NAMESRV_CONFIG,
// 319 GET_NAMESRV_CONFIG) and the copy-on-write configuration they swap.

package server

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
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

// blackListRemark is Java's remark for code 16.
const blackListRemark = "Can not update config in black list."

// handleUpdateConfig is UPDATE_NAMESRV_CONFIG. Unlike Java it accepts only
// run-time keys (config.RuntimeKeys), applies nothing unless every key is
// acceptable, and persists before the new values take effect, so a refused
// or failed update leaves memory and disk as they were. Only the updated keys
// are written into the file, in place (config.Config.PersistUpdate).
func (s *Server) handleUpdateConfig(c *remoting.Conn, req, resp *codec.Command) error {
	if len(req.Body) == 0 {
		return nil
	}
	props, err := properties.Parse(bytes.NewReader(req.Body))
	if err != nil {
		s.log.Warn("config update refused: bad properties", "peer", c.Peer(), "err", err)
		return refuse(codec.SystemError, "string2Properties error")
	}
	if len(props) == 0 {
		return nil
	}
	s.admin.updateMu.Lock()
	defer s.admin.updateMu.Unlock()
	next, err := s.conf().RuntimeUpdate(props)
	if err != nil {
		s.log.Warn("config update refused", "peer", c.Peer(), "err", err)
		remark := err.Error()
		var ue *config.UpdateError
		if errors.As(err, &ue) {
			// The key and the parse detail are the request's text.
			short := *ue
			short.Key, short.Detail = echoed(ue.Key), echoed(ue.Detail)
			remark = short.Error()
		}
		switch {
		case errors.Is(err, config.ErrBlackListed):
			return refuse(codec.NoPermission, blackListRemark)
		case errors.Is(err, config.ErrNotRuntime):
			return refuse(codec.NoPermission, remark)
		}
		return refuse(codec.SystemError, remark)
	}
	if path := next.ConfigStorePath; path != "" {
		keys := make([]string, len(props))
		for i, p := range props {
			keys[i] = p.Key
		}
		if err := next.PersistUpdate(path, keys); err != nil {
			s.log.Error("config update not applied: persist failed", "path", path, "err", err)
			// The error names the file; the answer does not.
			return refuse(codec.SystemError, "persist config: the configuration file could not be written; nothing was changed (the NameServer's log says why)")
		}
		if over := s.cfg.OverriddenAtStart(keys); len(over) > 0 {
			s.log.Warn("config update persisted, but set at start-up elsewhere, which wins at the next start", "keys", over, "path", path)
		}
	}
	s.admin.cfg.Store(next)
	s.routes.SetSupportActingMaster(next.SupportActingMaster)
	s.routes.SetDeleteTopicWithBrokerRegistration(next.DeleteTopicWithBrokerRegistration)
	keys := make([]string, 0, len(props))
	for _, p := range props {
		keys = append(keys, p.Key+"="+strings.TrimSpace(p.Value))
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
