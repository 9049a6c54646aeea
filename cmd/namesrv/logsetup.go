// logsetup.go holds the bounds the logger puts on what peers can make it
// write (core/logcap): strings capped, repeated lines summarised, and
// connections closed for stalling counted at info.

package main

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/rocketns/rocketns/core/logcap"
)

// logFlushEvery is how often the counted closes and the lines suppressed
// by causes that then went quiet are written, like the summary line.
const logFlushEvery = time.Minute

// stalledCloses is the summary of connections closed because a frame (or
// a TLS or protocol hello) stopped arriving half way: the slow-send attack
// holds connections that way, and each close is only a debug line.
const stalledCloses = "connections closed: the rest of a frame or handshake did not arrive in time"

// countStalled names the records of such closes: the listener's debug
// line for a close, with an error that is a timeout.
func countStalled(r slog.Record) string {
	if r.Level != slog.LevelDebug || !strings.HasPrefix(r.Message, "closing connection") {
		return ""
	}
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "err" {
			return true
		}
		var to interface{ Timeout() bool }
		if err, ok := a.Value.Any().(error); ok && errors.As(err, &to) && to.Timeout() {
			found = true
		}
		return false
	})
	if found {
		return stalledCloses
	}
	return ""
}

// boundLog wraps h in the caps and starts the periodic flush; the
// returned function stops it after a last flush.
func boundLog(h slog.Handler) (*slog.Logger, func()) {
	c := logcap.New(h, logcap.Options{Count: countStalled})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				c.Flush()
				return
			case <-t.C:
				c.Flush()
			}
		}
	}()
	return slog.New(c), func() {
		close(stop)
		<-done
	}
}
