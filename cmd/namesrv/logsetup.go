// logsetup.go holds the bounds the logger puts on what peers can make it
// write (core/logcap): strings capped and repeated lines summarised.

package main

import (
	"log/slog"
	"time"

	"github.com/rocketns/rocketns/core/logcap"
)

// logFlushEvery is how often the lines suppressed by causes that then went
// quiet are summarised (a cause that logs again is summarised then).
const logFlushEvery = 10 * time.Second

// boundLog wraps h in the caps and starts the periodic flush; the
// returned function stops it after a last flush.
func boundLog(h slog.Handler) (*slog.Logger, func()) {
	c := logcap.New(h, logcap.Options{})
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
