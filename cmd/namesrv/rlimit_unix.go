//go:build unix

// rlimit_unix.go raises the soft file-descriptor limit to the hard one.

package main

import "syscall"

// raiseFDLimit raises RLIMIT_NOFILE's soft limit to its hard limit, where
// allowed, and returns the soft limit in force after. Go's runtime does
// the same at start on some systems; doing it here makes it explicit and
// gives the number maxConnections must fit.
func raiseFDLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = raised.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
		// Not allowed (some systems refuse an unlimited soft limit):
		// the current one stands.
	}
	return uint64(lim.Cur), nil
}
