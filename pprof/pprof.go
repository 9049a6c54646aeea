// pprof.go holds the profile listener and the profiling rates it sets.

package pprof

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"runtime"
	"time"
)

// Options says where to listen and how much blocking and contention to
// record. Rates cost CPU on every blocking event and lock handoff, so they
// are off (0) unless set.
type Options struct {
	Addr string // host:port; loopback unless the operator knows why not
	// BlockRate is runtime.SetBlockProfileRate's argument: one sample per
	// this many nanoseconds spent blocked (1 = every event).
	BlockRate int
	// MutexFraction is runtime.SetMutexProfileFraction's argument: one in
	// this many contention events is sampled.
	MutexFraction int
}

// Server is a running profile listener.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Handler returns the profile endpoints under /debug/pprof/ on a private mux
// (never http.DefaultServeMux, which any imported package may write to).
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	return mux
}

// Start sets the profiling rates and serves Handler on opts.Addr.
func Start(opts Options, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listen %s: %w", opts.Addr, err)
	}
	if host, _, err := net.SplitHostPort(opts.Addr); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			log.Warn("pprof listens beyond loopback: profiles reveal the server's internals", "addr", ln.Addr().String())
		}
	}
	runtime.SetBlockProfileRate(opts.BlockRate)
	runtime.SetMutexProfileFraction(opts.MutexFraction)
	s := &Server{ln: ln, srv: &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof listener stopped", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String(), "block_rate", opts.BlockRate, "mutex_fraction", opts.MutexFraction)
	return s, nil
}

// Addr is the address the profiles are served on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the listener and resets the profiling rates.
func (s *Server) Close(ctx context.Context) error {
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(0)
	return s.srv.Shutdown(ctx)
}
