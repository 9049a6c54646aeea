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
// adminListen is set) that can carry the profiles too.
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

	cfg := config.Default()
	var warnings []string
	if opts.configFile != "" {
		w, err := loadConfigFile(cfg, opts.configFile)
		if err != nil {
			fmt.Fprintf(stderr, "namesrv: %v\n", err)
			return 1
		}
		warnings = append(warnings, w...)
		// Java makes the -c file the place UPDATE_NAMESRV_CONFIG persists to.
		cfg.ConfigStorePath = opts.configFile
		fmt.Fprintf(stdout, "load config properties file OK, %s\n", opts.configFile)
	}
	// The environment sits between the file and the command line: an image's
	// or unit's ROCKETNS_ variables override its properties file, and a flag
	// typed by hand overrides both.
	envProps, err := config.FromEnv(environ)
	if err == nil {
		_, err = cfg.Apply(envProps)
	}
	if err != nil {
		fmt.Fprintf(stderr, "namesrv: %v\n", err)
		return 1
	}
	w, err := cfg.Apply(opts.overrides)
	if err != nil {
		// Values were checked while parsing flags; this is only defensive.
		fmt.Fprintf(stderr, "namesrv: %v\n", err)
		return 2
	}
	warnings = append(warnings, w...)
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "namesrv: %v\n", err)
		return 1
	}

	log, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "namesrv: %v\n", err)
		return 1
	}
	for _, w := range warnings {
		log.Warn(w)
	}

	if opts.print {
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
// stop (help, or an error already reported on stderr).
func parseFlags(args []string, stdout, stderr io.Writer) (*options, int) {
	var o options
	var help bool
	fs := flag.NewFlagSet("namesrv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: namesrv [-c FILE] [-p] [-h] [-n ADDRS] [--KEY VALUE]... [--set KEY=VALUE]...\n\n")
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
	for _, name := range []string{"n", "namesrvAddr"} {
		// Java's generic option; it means nothing to a NameServer.
		fs.String(name, "", "Accepted for compatibility with Java's mqnamesrv; ignored")
	}
	override := func(key, value string) error {
		// Check the value now so a bad flag fails as a usage error.
		if err := config.Default().Set(key, value); err != nil {
			return err
		}
		o.overrides = append(o.overrides, properties.Property{Key: key, Value: value})
		return nil
	}
	for _, key := range []string{"listenPort", "bindAddress", "kvConfigPath", "logLevel", "logFormat", config.KeyAdminListen} {
		fs.Func(key, "Set "+key+", overriding the config file", func(v string) error { return override(key, v) })
	}
	fs.StringVar(&o.pprof.Addr, "pprof-addr", "", "Serve net/http/pprof on this `host:port` (off by default; keep it on loopback); with adminListen set, on the admin listener instead")
	fs.IntVar(&o.pprof.BlockRate, "pprof-block-rate", 10000, "With --pprof-addr: sample one blocking event per this many `ns` blocked")
	fs.IntVar(&o.pprof.MutexFraction, "pprof-mutex-fraction", 100, "With --pprof-addr: sample one in this many mutex contention events")
	fs.Func("set", "Set any config `key=value`, overriding the config file (repeatable)", func(v string) error {
		key, value, ok := strings.Cut(v, "=")
		if !ok || key == "" {
			return fmt.Errorf("want key=value, got %q", v)
		}
		return override(key, value)
	})

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	if help {
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "namesrv: unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		return nil, 2
	}
	return &o, 0
}

// loadConfigFile applies a Java properties file to cfg.
func loadConfigFile(cfg *config.Config, path string) (warnings []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	warnings, err = cfg.Apply(props)
	if err != nil {
		return nil, fmt.Errorf("config file %s:\n%w", path, err)
	}
	return warnings, nil
}

func newLogger(cfg *config.Config, w io.Writer) (*slog.Logger, error) {
	level, err := cfg.Level()
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// serve starts the server and blocks until a signal arrives.
func serve(cfg *config.Config, opts *options, log *slog.Logger, stdout io.Writer, signals <-chan os.Signal, newSrv serverFactory) int {
	log.Info("configuration",
		"bindAddress", cfg.BindAddress, "listenPort", cfg.ListenPort,
		"kvConfigPath", cfg.KVConfigPath, "configStorePath", cfg.ConfigStorePath, "adminListen", cfg.AdminListen)
	srv, err := newSrv(cfg, log)
	if err != nil {
		log.Error("cannot initialise the name server; fix the cause and start again", "err", err)
		return 1
	}
	// One HTTP listener is enough: with adminListen set, the profiles move
	// onto it and --pprof-addr only turns them on.
	var admin adminServer
	if opts.pprof.Addr != "" && strings.TrimSpace(cfg.AdminListen) != "" {
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
	log.Info(banner)
	fmt.Fprintln(stdout, banner)

	if admin != nil {
		runtime.SetBlockProfileRate(opts.pprof.BlockRate)
		runtime.SetMutexProfileFraction(opts.pprof.MutexFraction)
		defer func() {
			runtime.SetBlockProfileRate(0)
			runtime.SetMutexProfileFraction(0)
		}()
		log.Info("pprof served on the admin listener under /debug/pprof/; --pprof-addr is not opened",
			"admin_addr", admin.AdminAddr(), "pprof_addr", opts.pprof.Addr,
			"block_rate", opts.pprof.BlockRate, "mutex_fraction", opts.pprof.MutexFraction)
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
