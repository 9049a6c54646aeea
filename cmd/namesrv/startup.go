// startup.go holds what both modes (NameServer and standalone controller)
// do before they differ: read the configuration, report it and open the log,
// and the checks -p shares with start-up.

package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/rocketns/rocketns/core/config"
)

// loadConfig reads the configuration in describes and opens the logger it
// names. Errors go to stderr under prog's name, every one of them with its
// source, and the warnings with them, since no log exists yet; once the log
// is open, the warnings and the list of Java keys kept as is go there. ok is
// false when start-up must end with exit code 1.
func loadConfig(prog string, in config.LoadInput, stdout, stderr io.Writer) (cfg *config.Config, log *slog.Logger, closeLog func(), ok bool) {
	loaded, err := config.Load(in)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "%s: %s\n", prog, line)
		}
		if loaded != nil {
			for _, w := range loaded.Warnings {
				fmt.Fprintf(stderr, "%s: warning: %s\n", prog, w)
			}
		}
		return nil, nil, nil, false
	}
	if in.File != "" {
		fmt.Fprintf(stdout, "load config properties file OK, %s\n", in.File)
	}
	log, closeLog, err = newLogger(loaded.Config, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return nil, nil, nil, false
	}
	for _, w := range loaded.Warnings {
		log.Warn(w)
	}
	if len(loaded.Ignored) > 0 {
		log.Info("config: Java settings rocketns does not use, kept as is: " + strings.Join(loaded.Ignored, ", "))
	}
	return loaded.Config, log, closeLog, true
}

// checkController reads the controller's settings from cfg as start-up
// does (the membership with Java's messages, the timings, the store path)
// and reports every problem on stderr under prog's name. -p runs it, so a
// configuration it prints is one that starts: a controller that cannot
// start is otherwise seen only when the node is started (no peers, a self
// id that is not a peer).
func checkController(prog string, cfg *config.Config, embedded bool, stderr io.Writer) (*config.Controller, bool) {
	k, err := cfg.Controller(embedded)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "%s: %s\n", prog, line)
		}
		return nil, false
	}
	return k, true
}
