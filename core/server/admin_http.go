// admin_http.go holds the optional admin HTTP listener (adminListen):
// /metrics, /healthz, /readyz, the address-server answer /rocketmq/nsaddr,
// the status page, and the runtime profiles when the command asks for them.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/status"
)

// adminHTTP is the admin listener of a Server; nil fields until Start.
type adminHTTP struct {
	// profiles is served under /debug/pprof/ when set (ServeProfiles).
	profiles http.Handler
	ln       net.Listener
	srv      *http.Server
	done     chan struct{} // closed when Serve returned
	// writeTimeout replaces adminWriteTimeout when set (tests).
	writeTimeout time.Duration
}

// adminWriteTimeout bounds writing one admin answer, so a client that stops
// reading cannot hold a goroutine and its connection, nor the listener's
// shutdown, for ever.
const adminWriteTimeout = 30 * time.Second

// ServeProfiles has the admin listener also serve h (the net/http/pprof
// endpoints) under /debug/pprof/. Call it before Start; it does nothing
// when adminListen is not set. The listener's write timeout applies to h:
// an endpoint that streams for longer must extend its own write deadline,
// as net/http/pprof's do for ?seconds=.
func (s *Server) ServeProfiles(h http.Handler) { s.adminHTTP.profiles = h }

// AdminAddr is the address the admin listener is bound to, "" when it is
// off or not started (useful with port 0).
func (s *Server) AdminAddr() string {
	if s.adminHTTP.ln == nil {
		return ""
	}
	return s.adminHTTP.ln.Addr().String()
}

// AdminHandler serves the admin endpoints. The listener serves it; it is
// exported for embedding the endpoints in another server.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET /readyz", s.serveReady)
	mux.HandleFunc("GET /rocketmq/nsaddr", s.serveNsaddr)
	if h := s.adminHTTP.profiles; h != nil {
		mux.Handle("/debug/pprof/", h)
	}
	mux.Handle("/", status.Handler(s.routes, time.Now))
	return mux
}

func writeText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	s.writeMetrics(w)
}

// serveReady is 200 only when route queries get real answers: probes that
// take a NameServer out of rotation use it during start and shutdown.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if why := s.ready(); why != "" {
		writeText(w, http.StatusServiceUnavailable, "not ready: "+why+"\n")
		return
	}
	writeText(w, http.StatusOK, "ready\n")
}

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
		writeText(w, http.StatusNotFound, config.KeyNsaddrList+" is not set on this NameServer: there is no address list to serve\n")
		return
	}
	writeText(w, http.StatusOK, strings.Join(addrs, ";"))
}

// listenAdmin binds the admin listener; Start calls it before anything else
// so a taken port fails start-up cheaply.
func (s *Server) listenAdmin() error {
	addr := strings.TrimSpace(s.cfg.AdminListen)
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", addr, err)
	}
	s.adminHTTP.ln = ln
	return nil
}

// serveAdmin serves the bound admin listener on a goroutine of its own.
func (s *Server) serveAdmin() {
	a := &s.adminHTTP
	if a.ln == nil {
		return
	}
	writeTimeout := adminWriteTimeout
	if a.writeTimeout > 0 {
		writeTimeout = a.writeTimeout
	}
	// The write timeout holds for the profiles too: those that run for a
	// requested time (?seconds= of a CPU profile, a trace or a delta
	// profile) push their own connection's deadline out by that time
	// through http.ResponseController, which net/http/pprof does itself.
	a.srv = &http.Server{
		Handler:           s.AdminHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin listener stopped; metrics and probes are unavailable", "addr", a.ln.Addr().String(), "err", err)
		}
	}()
	attrs := []any{"addr", a.ln.Addr().String(), "pprof", a.profiles != nil}
	s.log.Info("admin listener serving /metrics, /healthz, /readyz, /rocketmq/nsaddr and /", attrs...)
	if a.profiles != nil && !isLoopback(a.ln.Addr()) {
		s.log.Warn("pprof is served on an admin listener beyond loopback: profiles reveal the server's internals",
			"addr", a.ln.Addr().String(), "setting", config.KeyAdminListen)
	}
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// closeAdmin stops the admin listener; Shutdown calls it last, so /readyz
// answers 503 for as long as the shutdown takes.
func (s *Server) closeAdmin(ctx context.Context) error {
	a := &s.adminHTTP
	if a.srv == nil {
		if a.ln == nil {
			return nil
		}
		err := a.ln.Close() // Start failed after binding it
		a.ln = nil
		return err
	}
	if err := a.srv.Shutdown(ctx); err != nil {
		a.srv.Close()
		return fmt.Errorf("stop admin listener: %w", err)
	}
	<-a.done
	return nil
}
