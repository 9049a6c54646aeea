// rlimit.go fits maxConnections to the process's file-descriptor limit: a
// connection accepted beyond it gets no descriptor, so it hangs instead of
// being refused, and the KV file cannot be written either.

package main

import (
	"log/slog"

	"github.com/rocketns/rocketns/core/config"
)

// fdReserve is what connections leave of the descriptors: the listeners,
// the admin listener's connections, the KV and config files and their
// temporary files, the log file, the event loop's pollers, the controller's
// files and peers. A quarter of a small limit (a container's 1024).
const fdReserve = 256

// connectionsForFDs returns the most connections an fd limit of nofile
// leaves room for, and whether maxConns had to be lowered to it. 0 (not
// known) and the largest value (unlimited) leave maxConns as it is.
func connectionsForFDs(maxConns int, nofile uint64) (int, bool) {
	if nofile == 0 || nofile == ^uint64(0) {
		return maxConns, false
	}
	reserve := min(uint64(fdReserve), nofile/4)
	allowed := max(nofile-reserve, 1)
	if uint64(maxConns) <= allowed {
		return maxConns, false
	}
	return int(allowed), true
}

// fitConnectionsToFDs lowers cfg.MaxConnections to what the limit that
// limit reports leaves room for, with a warning. An error reading it is
// only logged: the setting is then used as it is.
func fitConnectionsToFDs(cfg *config.Config, log *slog.Logger, limit func() (uint64, error)) {
	nofile, err := limit()
	if err != nil {
		log.Warn("cannot read the file-descriptor limit; maxConnections used as set", "err", err)
		return
	}
	n, lowered := connectionsForFDs(cfg.MaxConnections, nofile)
	if !lowered {
		return
	}
	log.Warn("maxConnections is more than the file-descriptor limit leaves room for; lowered (raise the hard limit, ulimit -n or LimitNOFILE=, to serve more)",
		"maxConnections", cfg.MaxConnections, "lowered_to", n, "fd_limit", nofile, "reserved", nofile-uint64(n))
	cfg.MaxConnections = n
}
