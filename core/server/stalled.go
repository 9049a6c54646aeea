// stalled.go counts the connections the listener closes because the rest
// of a frame (or a TLS or protocol hello) did not arrive in time, and logs
// their number once a minute at info.

package server

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/rocketns/rocketns/core/logcap"
)

// stalledCloses is the line of the count. The slow-send attack holds
// connections by sending a frame a byte at a time, and each close is only
// the listener's debug line: invisible at info, however many.
const stalledCloses = "connections closed: the rest of a frame or handshake did not arrive in time"

// remotingLog is the listener's logger: the server's, counting the closes
// on the way. The listener logs per connection, not per request, so seeing
// its debug records costs nothing that matters.
func (s *Server) remotingLog() *slog.Logger {
	return slog.New(logcap.Counting(s.log.Handler(), isStalledClose, &s.stalled))
}

// isStalledClose matches the listener's debug line for a close whose error
// is a timeout: a read that waited the idle time for the rest of a frame.
func isStalledClose(r slog.Record) bool {
	if r.Level != slog.LevelDebug || !strings.HasPrefix(r.Message, "closing connection") {
		return false
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
	return found
}

// logStalled writes the count since the previous call, if any.
func (s *Server) logStalled() {
	if n := s.stalled.Swap(0); n > 0 {
		s.log.Info(stalledCloses, "count", n)
	}
}
