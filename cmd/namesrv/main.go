// main.go holds the command: flags, the config file and environment,
// logging, signals, start and shutdown.

package main

import (
	"context"
	"errors"
	"flag"
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

	"github.com/rocketns/rocketns/codec/properties"
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
	opts, code := parseFlags(args, stdout, stderr)
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

// options is the parsed command line.
type options struct {
	configFile string
	print      bool
	pprof      pprof.Options         // Addr "" = no profile listener
	overrides  []properties.Property // in command-line order; applied after the file
}

// parseFlags returns nil options and an exit code when the command should
// stop (help, version, or an error already reported on stderr).
func parseFlags(args []string, stdout, stderr io.Writer) (*options, int) {
	var o options
	var help, version bool
	fs := flag.NewFlagSet("namesrv", flag.ContinueOnError)
	// Errors are reported here, in one line and a pointer to -h, not
	// followed by the whole usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: namesrv [-c FILE] [-p] [-h] [--version] [-n ADDRS] [--KEY VALUE]... [--set KEY=VALUE]...\n"+
			"       namesrv controller -c FILE [-p] [-h] [--KEY VALUE]... [--set KEY=VALUE]...\n\n"+
			"Runs a RocketMQ NameServer, as Java's mqnamesrv; FILE is a Java namesrv.properties. With\n"+
			"enableControllerInNamesrv=true in it, a RocketMQ 5.x controller node runs inside it too.\n"+
			"'namesrv controller' runs a standalone controller node instead, as Java's mqcontroller, from a\n"+
			"Java controller.conf; 'namesrv controller -h' lists its options.\n\n")
		fs.PrintDefaults()
	}
	for _, name := range []string{"c", "configFile"} {
		fs.StringVar(&o.configFile, name, "", "Name server config properties `file`")
	}
	for _, name := range []string{"p", "printConfigItem"} {
		fs.BoolVar(&o.print, name, false, "Print all config items and exit")
	}
	for _, name := range []string{"h", "help"} {
		fs.BoolVar(&help, name, false, "Print help and exit")
	}
	fs.BoolVar(&version, "version", false, "Print the version and exit")
	for _, name := range []string{"n", "namesrvAddr"} {
		// Java's generic option; it means nothing to a NameServer.
		fs.String(name, "", "Accepted for compatibility with Java's mqnamesrv; ignored")
	}
	override := func(flagName, key, value string) error {
		// Check that the value parses now, so a mistyped flag fails as a
		// usage error; ranges and addresses are checked with the rest of
		// the configuration.
		if err := config.Default().Set(key, value); err != nil {
			return err
		}
		o.overrides = append(o.overrides, properties.Property{Key: key, Value: value, Origin: flagName})
		return nil
	}
	for _, key := range []string{"listenPort", "bindAddress", "kvConfigPath", "logLevel", "logFormat", config.KeyLogFile, config.KeyAdminListen} {
		fs.Func(key, "Set "+key+", overriding the config file", func(v string) error { return override("--"+key, key, v) })
	}
	fs.StringVar(&o.pprof.Addr, "pprof-addr", "", "Serve net/http/pprof on this `host:port` only (off by default; keep it on loopback); the admin listener's own address puts the profiles on it")
	fs.IntVar(&o.pprof.BlockRate, "pprof-block-rate", 10000, "With --pprof-addr: sample one blocking event per this many `ns` blocked")
	fs.IntVar(&o.pprof.MutexFraction, "pprof-mutex-fraction", 100, "With --pprof-addr: sample one in this many mutex contention events")
	fs.Func("set", "Set any config `key=value`, overriding the config file (repeatable)", func(v string) error {
		key, value, ok := strings.Cut(v, "=")
		if !ok || key == "" {
			return fmt.Errorf("want key=value, got %q", v)
		}
		return override("--set", key, value)
	})

	usageErr := func(format string, a ...any) (*options, int) {
		fmt.Fprintf(stderr, "namesrv: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run 'namesrv -h' for the options.")
		return nil, 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return usageErr("%v", err)
	}
	if help {
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, 0
	}
	if version {
		fmt.Fprintln(stdout, buildinfo.String("namesrv"))
		return nil, 0
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments: %q", fs.Args())
	}
	if o.pprof.Addr != "" {
		if err := config.CheckListenAddr(o.pprof.Addr); err != nil {
			return usageErr("bad --pprof-addr %q: %v", o.pprof.Addr, err)
		}
	}
	return &o, 0
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
