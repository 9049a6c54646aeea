// count.go holds Counting, the handler that counts chosen records whatever
// the log level.

package logcap

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// Counting wraps inner: every record match accepts adds one to n, and is
// then handled by inner if inner's level takes it. It sees every level, so
// each call builds its record (about a microsecond): give it to a logger
// that logs per connection, not per request. For events logged one by one
// at debug whose number matters at info (connections closed for stalling).
func Counting(inner slog.Handler, match func(slog.Record) bool, n *atomic.Uint64) slog.Handler {
	return &counting{inner: inner, match: match, n: n}
}

type counting struct {
	inner slog.Handler
	match func(slog.Record) bool
	n     *atomic.Uint64
}

func (h *counting) Enabled(context.Context, slog.Level) bool { return true }

func (h *counting) Handle(ctx context.Context, r slog.Record) error {
	if h.match(r) {
		h.n.Add(1)
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h *counting) WithAttrs(as []slog.Attr) slog.Handler {
	return &counting{inner: h.inner.WithAttrs(as), match: h.match, n: h.n}
}

func (h *counting) WithGroup(name string) slog.Handler {
	return &counting{inner: h.inner.WithGroup(name), match: h.match, n: h.n}
}
