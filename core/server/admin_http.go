// admin_http.go registers the NameServer with its admin HTTP listener
// (adminListen): its metrics, its readiness, the address-server answer
// /rocketmq/nsaddr and the status page.

package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rocketns/rocketns/core/adminhttp"
	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/status"
)

// newAdminHTTP makes the admin listener of s with the NameServer's
// sections; Start binds it when adminListen is set.
func (s *Server) newAdminHTTP() *adminhttp.Server {
	a := adminhttp.New(adminhttp.Options{Addr: s.cfg.AdminListen, Log: s.log})
	a.Register(s.collectors()...)
	a.Register(s.warmCollector())
	a.Ready("namesrv", s.ready)
	a.Note(func() string { return "start: " + s.warm.start.String() })
	a.Handle("GET /rocketmq/nsaddr", http.HandlerFunc(s.serveNsaddr))
	hist := status.NewHistory(0, 0, s.historyCounts, time.Now)
	a.Run(hist.Run)
	o := status.Options{Routes: s.routes, Clock: time.Now, Info: s.statusInfo, History: hist, CacheFor: status.DefaultCacheFor}
	if s.cfg.ControllerEnabled() {
		// cmd/namesrv serves the embedded controller's page there.
		o.ControllerPath = ControllerStatusPath
	}
	a.Handle("/", status.New(o))
	return a
}

// ControllerStatusPath is where the admin listener serves the status page
// of a controller embedded in the NameServer (enableControllerInNamesrv).
const ControllerStatusPath = "/controller"

// statusInfo is what the status page says of the process.
func (s *Server) statusInfo() status.Info {
	in := status.Info{Version: buildinfo.Version(), Listen: s.Addr(), Ready: s.ready(), Start: s.warm.start.String()}
	if s.listening.Load() {
		in.Started = s.started
	}
	return in
}

// ServeProfiles has the admin listener also serve h (the net/http/pprof
// endpoints) under /debug/pprof/. Call it before Start; it does nothing
// when adminListen is not set. The listener's write timeout applies to h:
// an endpoint that streams for longer must extend its own write deadline,
// as net/http/pprof's do for ?seconds=.
func (s *Server) ServeProfiles(h http.Handler) { s.adminHTTP.ServeProfiles(h) }

// AdminAddr is the address the admin listener is bound to, "" when it is
// off or not started (useful with port 0).
func (s *Server) AdminAddr() string { return s.adminHTTP.Addr() }

// Admin is the admin listener, for another server of the process (an
// embedded controller) to register its sections with before Start.
func (s *Server) Admin() *adminhttp.Server { return s.adminHTTP }

// AdminHandler serves the admin endpoints. The listener serves it; it is
// exported for embedding the endpoints in another server.
func (s *Server) AdminHandler() http.Handler { return s.adminHTTP.Handler() }

// ready returns why the server is not ready, "" when it is. The KV store
// was loaded by New (a server does not exist otherwise).
func (s *Server) ready() string {
	switch {
	case s.closing.Load():
		return "shutting down"
	case !s.listening.Load():
		return "not listening yet"
	}
	cfg := s.conf()
	if cfg.NeedWaitForService {
		if wait := secondsDuration(cfg.WaitSecondsForService); time.Since(s.started) < wait {
			return fmt.Sprintf("waiting %s after start before answering routes (needWaitForService)", wait)
		}
	}
	return ""
}

// serveNsaddr is the address server's answer: the NameServers as
// "ip:port;ip:port", which clients configured with a name-server domain
// fetch and split on ';'.
func (s *Server) serveNsaddr(w http.ResponseWriter, r *http.Request) {
	addrs := config.NsaddrEntries(s.cfg.NsaddrList)
	if len(addrs) == 0 {
		adminhttp.WriteText(w, http.StatusNotFound, config.KeyNsaddrList+" is not set on this NameServer: there is no address list to serve\n")
		return
	}
	adminhttp.WriteText(w, http.StatusOK, strings.Join(addrs, ";"))
}
