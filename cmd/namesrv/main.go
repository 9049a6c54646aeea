// main.go holds the command: flags, the config file and environment,
// logging, signals, start and shutdown.

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/pprof"
)

// shutdownTimeout bounds how long in-flight requests and the final KV flush
// may take after a signal.
const shutdownTimeout = 30 * time.Second

// nameServer is what the command needs from a server; core/server's *Server
// provides it, tests provide a fake.
type nameServer interface {
	Start() error
	Addr() string
	Shutdown(ctx context.Context) error
}

type serverFactory func(cfg *config.Config, log *slog.Logger) (nameServer, error)

// adminServer is a server with an admin HTTP listener (core/server's when
// adminListen is set) that can carry the profiles too, when --pprof-addr
// names the admin listener's address.
type adminServer interface {
	ServeProfiles(h http.Handler)
	AdminAddr() string
}

func main() {
	// SIGHUP too: the JVM runs its shutdown hook on it, and so a Java
	// NameServer shuts down cleanly when its terminal or unit goes away.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt, syscall.SIGHUP)
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	go dumpOnQuit(quit, os.Stderr)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, signals))
}

// dumpOnQuit writes every goroutine's stack to w on each SIGQUIT and keeps
// serving. Operators send kill -3 to a Java NameServer for a thread dump;
// Go's default for the signal is to dump and exit, which would drop every
// broker connection.
func dumpOnQuit(quit <-chan os.Signal, w io.Writer) {
	for range quit {
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		fmt.Fprintf(w, "goroutine dump on SIGQUIT (%s)\n%s\ngoroutine dump end\n", time.Now().UTC().Format(time.RFC3339), buf)
	}
}

// run is the whole command; it returns the exit code: 0 after a clean
// shutdown or -p/-h, 2 for a bad command line, 1 for anything else.
func run(args []string, stdout, stderr io.Writer, signals <-chan os.Signal) int {
	if len(args) > 0 && args[0] == controllerMode {
		return runController(args[1:], os.Environ(), stdout, stderr, signals) // controller.go
	}
	return runWith(args, os.Environ(), stdout, stderr, signals, newServer)
}

func runWith(args, environ []string, stdout, stderr io.Writer, signals <-chan os.Signal, newSrv serverFactory) int {
	opts, code := parseFlags(nameServerMode, args, stdout, stderr) // flags.go
	if opts == nil {
		return code
	}

	// The environment sits between the file and the command line: an image's
	// or unit's ROCKETNS_ variables override its properties file, and a flag
	// typed by hand overrides both.
	cfg, log, closeLog, ok := loadConfig("namesrv", config.LoadInput{File: opts.configFile, Environ: environ, Flags: opts.overrides}, stdout, stderr)
	if !ok {
		return 1
	}
	defer closeLog()

	if opts.print {
		if cfg.ControllerEnabled() {
			if _, ok := checkController("namesrv", cfg, true, stderr); !ok {
				return 1
			}
		}
		_, _ = stdout.Write(cfg.AppendTextWithController(nil))
		return 0
	}
	return serve(cfg, opts, log, stdout, signals, newSrv)
}

// serve starts the server and blocks until a signal arrives.
func serve(cfg *config.Config, opts *options, log *slog.Logger, stdout io.Writer, signals <-chan os.Signal, newSrv serverFactory) int {
	log.Info("starting "+buildinfo.String("namesrv"), "version", buildinfo.Version())
	log.Info("configuration",
		"bindAddress", cfg.BindAddress, "listenPort", cfg.ListenPort,
		"kvConfigPath", cfg.KVConfigPath, "configStorePath", cfg.ConfigStorePath, "adminListen", cfg.AdminListen)
	fitConnectionsToFDs(cfg, log, raiseFDLimit) // rlimit.go
	srv, err := newSrv(cfg, log)
	if err != nil {
		log.Error("cannot initialise the name server; fix the cause and start again", "err", err)
		return 1
	}
	// The profiles go exactly where --pprof-addr says: onto the admin
	// listener only when that is its address, else a listener of their
	// own, so asking for loopback profiles never puts them on an admin
	// listener that faces the network.
	var admin adminServer
	if opts.pprof.Addr != "" && strings.TrimSpace(cfg.AdminListen) == opts.pprof.Addr {
		if a, ok := srv.(adminServer); ok {
			a.ServeProfiles(pprof.Handler())
			admin = a
		}
	}
	if err := srv.Start(); err != nil {
		log.Error("cannot start the name server; is the address in use?", "err", err,
			"address", fmt.Sprintf("%s:%d", cfg.BindAddress, cfg.ListenPort), "adminListen", cfg.AdminListen)
		return 1
	}
	// Java's banner, on the log and on stdout, which scripts wait for.
	banner := "The Name Server boot success. serializeType=JSON, address " + srv.Addr()
	log.Info(banner, "version", buildinfo.Version())
	fmt.Fprintln(stdout, banner)

	if admin != nil {
		runtime.SetBlockProfileRate(opts.pprof.BlockRate)
		runtime.SetMutexProfileFraction(opts.pprof.MutexFraction)
		defer func() {
			runtime.SetBlockProfileRate(0)
			runtime.SetMutexProfileFraction(0)
		}()
		log.Info("pprof served on the admin listener under /debug/pprof/ (--pprof-addr is its address)",
			"admin_addr", admin.AdminAddr(), "block_rate", opts.pprof.BlockRate, "mutex_fraction", opts.pprof.MutexFraction)
	} else if opts.pprof.Addr != "" {
		prof, err := pprof.Start(opts.pprof, log)
		if err != nil {
			log.Error("cannot start the pprof listener", "err", err)
			shutdown(srv, log)
			return 1
		}
		defer prof.Close(context.Background())
	}

	sig := <-signals
	log.Info("shutting down", "signal", fmt.Sprint(sig), "timeout", shutdownTimeout)
	if !shutdown(srv, log) {
		return 1
	}
	log.Info("the name server has stopped")
	return 0
}

// shutdown stops srv within shutdownTimeout and reports whether it stopped
// cleanly.
func shutdown(srv nameServer, log *slog.Logger) bool {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("shutdown did not complete cleanly", "err", err)
		return false
	}
	return true
}
