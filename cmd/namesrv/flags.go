// flags.go holds the command line of both modes (NameServer and standalone
// controller): one parser over Go's flag package, with Java's -c, -p, -h
// and -n, rocketns's --set and the per-key overrides, and one help printer.

package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/pprof"
)

// mode is what differs between the two modes' command lines.
type mode struct {
	prog  string // how errors and help name the command
	usage string // the usage lines and what the mode runs
	// what names the config file in -c's help.
	what string
	// base holds the defaults an override is checked against.
	base func() *config.Config
	// keys are the settings with a flag of their own (--listenPort).
	keys  []string
	pprof bool // the --pprof-* flags
}

var (
	nameServerMode = mode{
		prog: "namesrv",
		usage: "usage: namesrv [-c FILE] [-p] [-h] [--version] [-n ADDRS] [--KEY VALUE]... [--set KEY=VALUE]...\n" +
			"       namesrv controller -c FILE [-p] [-h] [--KEY VALUE]... [--set KEY=VALUE]...\n\n" +
			"Runs a RocketMQ NameServer, as Java's mqnamesrv; FILE is a Java namesrv.properties. With\n" +
			"enableControllerInNamesrv=true in it, a RocketMQ 5.x controller node runs inside it too.\n" +
			"'namesrv controller' runs a standalone controller node instead, as Java's mqcontroller, from a\n" +
			"Java controller.conf; 'namesrv controller -h' lists its options.\n",
		what:  "Name server",
		base:  config.Default,
		keys:  []string{"listenPort", "bindAddress", "kvConfigPath", "logLevel", "logFormat", config.KeyLogFile, config.KeyAdminListen},
		pprof: true,
	}
	standaloneControllerMode = mode{
		prog: "namesrv controller",
		usage: "usage: namesrv controller [-c FILE] [-p] [-h] [--version] [--KEY VALUE]... [--set KEY=VALUE]...\n\n" +
			"Runs a RocketMQ 5.x controller node, as Java's mqcontroller; FILE is a Java controller.conf.\n",
		what: "Controller",
		base: config.DefaultController,
		keys: []string{"bindAddress", "logLevel", "logFormat", config.KeyAdminListen, config.KeyControllerStorePath},
	}
)

// options is the parsed command line.
type options struct {
	configFile string
	print      bool
	pprof      pprof.Options         // Addr "" = no profile listener
	overrides  []properties.Property // in command-line order; applied after the file
}

// cmdFlag is one flag under one or two names (-c and --configFile); set
// takes its value. Only an override may be given more than once: the
// later one wins, as a later layer of the configuration does.
type cmdFlag struct {
	short, long string // long always; short "" for none
	arg, usage  string // arg "" for a switch
	repeat      bool
	set         func(string) error
}

// parseFlags reads m's command line. It returns nil options and an exit
// code when the command should stop: 0 after help or the version, 2 after
// a bad command line, reported on stderr in one line and a pointer to -h.
func parseFlags(m mode, args []string, stdout, stderr io.Writer) (*options, int) {
	var o options
	var help, version bool
	override := func(origin, key, value string) error {
		// Check that the value parses now, so a mistyped flag fails as a
		// usage error; ranges and addresses are checked with the rest of
		// the configuration.
		if err := m.base().Set(key, value); err != nil {
			return err
		}
		o.overrides = append(o.overrides, properties.Property{Key: key, Value: value, Origin: origin})
		return nil
	}
	str := func(p *string) func(string) error { return func(s string) error { *p = s; return nil } }
	on := func(p *bool) func(string) error {
		return func(s string) (err error) { *p, err = strconv.ParseBool(s); return err }
	}
	num := func(p *int) func(string) error {
		return func(s string) (err error) {
			if *p, err = strconv.Atoi(s); err != nil {
				return errors.New("want an integer")
			}
			return nil
		}
	}
	flags := []cmdFlag{
		{short: "c", long: "configFile", arg: "file", usage: m.what + " config properties file", set: str(&o.configFile)},
		{short: "p", long: "printConfigItem", usage: "Print all config items and exit", set: on(&o.print)},
		{short: "h", long: "help", usage: "Print help and exit", set: on(&help)},
		{long: "version", usage: "Print the version and exit", set: on(&version)},
		// Java's generic option; it means nothing to a NameServer or a
		// controller.
		{short: "n", long: "namesrvAddr", arg: "addrs", usage: "Accepted for compatibility with Java's start scripts; ignored",
			set: func(string) error { return nil }},
	}
	for _, key := range m.keys {
		flags = append(flags, cmdFlag{long: key, arg: "value", usage: "Set " + key + ", overriding the config file (the last one given wins)", repeat: true,
			set: func(v string) error { return override("--"+key, key, v) }})
	}
	flags = append(flags, cmdFlag{long: "set", arg: "key=value", usage: "Set any config key, overriding the config file (repeatable)", repeat: true,
		set: func(v string) error {
			key, value, ok := strings.Cut(v, "=")
			if !ok || key == "" {
				return fmt.Errorf("want key=value, got %q", v)
			}
			return override("--set", key, value)
		}})
	if m.pprof {
		o.pprof.BlockRate, o.pprof.MutexFraction = 10000, 100
		flags = append(flags,
			cmdFlag{long: "pprof-addr", arg: "host:port", usage: "Serve net/http/pprof on this address only (off by default; keep it on loopback);\n" +
				"the admin listener's own address puts the profiles on it", set: str(&o.pprof.Addr)},
			cmdFlag{long: "pprof-block-rate", arg: "ns", usage: "With --pprof-addr: sample one blocking event per this many ns blocked (default 10000)",
				set: num(&o.pprof.BlockRate)},
			cmdFlag{long: "pprof-mutex-fraction", arg: "n", usage: "With --pprof-addr: sample one in this many mutex contention events (default 100)",
				set: num(&o.pprof.MutexFraction)})
	}

	usageErr := func(format string, a ...any) (*options, int) {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{m.prog}, a...)...)
		fmt.Fprintf(stderr, "Run '%s -h' for the options.\n", m.prog)
		return nil, 2
	}
	fs := flag.NewFlagSet(m.prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var dup error
	for i := range flags {
		f := &flags[i]
		given := false
		set := func(s string) error {
			if given && !f.repeat {
				dup = fmt.Errorf("flag %s is given twice: give it once", f.names("/"))
				return dup
			}
			given = true
			return f.set(s)
		}
		for _, name := range []string{f.short, f.long} {
			switch {
			case name == "":
			case f.arg == "":
				fs.BoolFunc(name, "", set)
			default:
				fs.Func(name, "", set)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return usageErr("%v", cmp.Or(dup, err))
	}
	switch {
	case help:
		printFlagsHelp(stdout, m, flags)
		return nil, 0
	case version:
		fmt.Fprintln(stdout, buildinfo.String("namesrv"))
		return nil, 0
	case fs.NArg() > 0:
		return usageErr("unexpected arguments: %q", fs.Args())
	}
	if o.pprof.Addr != "" {
		if err := config.CheckListenAddr(o.pprof.Addr); err != nil {
			return usageErr("bad --pprof-addr %q: %v", o.pprof.Addr, err)
		}
	}
	return &o, 0
}

// names is how help and errors name f: -c, --configFile with sep ", ".
func (f *cmdFlag) names(sep string) string {
	if f.short == "" {
		return "--" + f.long
	}
	return "-" + f.short + sep + "--" + f.long
}

func printFlagsHelp(w io.Writer, m mode, flags []cmdFlag) {
	fmt.Fprintf(w, "%s\nOptions (each name takes one dash or two, its value after a space or '='):\n", m.usage)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range flags {
		names := f.names(", ")
		if f.arg != "" {
			names += " " + f.arg
		}
		for _, line := range strings.Split(f.usage, "\n") {
			fmt.Fprintf(tw, "  %s\t%s\n", names, line)
			names = ""
		}
	}
	tw.Flush()
}
