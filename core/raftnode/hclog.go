// An hclog.Logger that writes to slog, so raft's own log lines land in the
// server's structured log: hclog's printf-style values formatted, and the
// warnings and errors raft repeats while a peer is down spaced out.

package raftnode

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter forwards hclog calls to a slog.Logger. raft's levels map one
// to one and the slog handler's level decides; warnings and errors go
// through limit.
type hclogAdapter struct {
	l       *slog.Logger
	name    string
	implied []any
	// limit is shared by the loggers derived with With and Named.
	limit *limiter
}

func newHCLog(l *slog.Logger) hclog.Logger { return newHCLogClock(l, time.Now) }

func newHCLogClock(l *slog.Logger, now func() time.Time) hclog.Logger {
	return &hclogAdapter{l: l, name: "raft", limit: newLimiter(repeatEvery, now)}
}

// repeatEvery is how often one raft warning or error about one peer is
// written while it repeats. With a follower down the leader's raft logs a
// failed heartbeat and a failed append about three times a second each,
// and a failed contact every lease timeout: without a limit that is about
// 100 ERROR lines in 30 s saying the same thing. The peer tracker
// (peers.go) says when a peer went down, reminds every repeatEvery and says
// when it is back.
const repeatEvery = 30 * time.Second

// maxLimited bounds the (message, peer) pairs tracked. Peers are few, but
// a vote request names its sender, which anyone who can reach the raft
// port chooses; past the bound, lines are limited by message alone.
const maxLimited = 256

// peerKeys are the keys under which raft names the peer a line is about.
var peerKeys = []string{"peer", "server-id", "target", "from", "candidate"}

type limitKey struct {
	level     hclog.Level
	msg, peer string
}

type limitState struct {
	last       time.Time // when a line was last written
	suppressed int
}

// limiter lets one line per (level, message, peer) through per every and
// counts the rest.
type limiter struct {
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	seen  map[limitKey]*limitState
}

func newLimiter(every time.Duration, now func() time.Time) *limiter {
	return &limiter{every: every, now: now, seen: map[limitKey]*limitState{}}
}

// admit reports whether a line may be written now and, when it may, how
// many of its kind were left out since the last one written, over how long.
func (l *limiter) admit(level hclog.Level, msg, peer string) (write bool, suppressed int, over time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := limitKey{level, msg, peer}
	st := l.seen[k]
	if st == nil {
		if len(l.seen) >= maxLimited {
			for old, s := range l.seen {
				if now.Sub(s.last) >= l.every && s.suppressed == 0 {
					delete(l.seen, old)
				}
			}
		}
		if len(l.seen) >= maxLimited {
			k.peer = ""
			if st = l.seen[k]; st == nil && len(l.seen) >= maxLimited {
				// Make room for the message alone: an entry with lines
				// still to report loses its count, which is bounded
				// noise, not lost information about the group.
				for old := range l.seen {
					delete(l.seen, old)
					break
				}
			}
		}
		if st == nil {
			l.seen[k] = &limitState{last: now}
			return true, 0, 0
		}
	}
	if now.Sub(st.last) < l.every {
		st.suppressed++
		return false, 0, 0
	}
	suppressed, over = st.suppressed, now.Sub(st.last)
	st.last, st.suppressed = now, 0
	return true, suppressed, over
}

// len is the number of entries tracked (tests).
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// peerOf is the value of the first peer key in args, then in implied.
func peerOf(args, implied []any) string {
	for _, kv := range [][]any{args, implied} {
		for i := 0; i+1 < len(kv); i += 2 {
			k, _ := kv[i].(string)
			for _, pk := range peerKeys {
				if k == pk {
					return fmt.Sprint(kv[i+1])
				}
			}
		}
	}
	return ""
}

// hclogValue is v as hclog's own logger writes it: hclog.Fmt values
// formatted (raft logs its configuration with hclog.Fmt("%+v", servers)),
// and hclog's number and quoting types spelt out.
func hclogValue(v any) any {
	switch x := v.(type) {
	case hclog.Format:
		if len(x) == 0 {
			return ""
		}
		if f, ok := x[0].(string); ok {
			return fmt.Sprintf(f, x[1:]...)
		}
		return fmt.Sprint(x...)
	case hclog.Hex:
		return "0x" + strconv.FormatUint(uint64(x), 16)
	case hclog.Octal:
		return "0" + strconv.FormatUint(uint64(x), 8)
	case hclog.Binary:
		return "0b" + strconv.FormatUint(uint64(x), 2)
	case hclog.Quote:
		return strconv.Quote(string(x))
	}
	return v
}

// appendArgs appends hclog's key-value args to all with their values
// formatted.
func appendArgs(all, args []any) []any {
	for i, v := range args {
		if i%2 == 1 {
			v = hclogValue(v)
		}
		all = append(all, v)
	}
	return all
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	lv := slogLevel(level)
	if !a.l.Enabled(context.Background(), lv) {
		return
	}
	var suppressed int
	var over time.Duration
	if level >= hclog.Warn && a.limit != nil {
		var write bool
		if write, suppressed, over = a.limit.admit(level, msg, peerOf(args, a.implied)); !write {
			return
		}
	}
	all := make([]any, 0, len(a.implied)+len(args)+6)
	all = append(all, "component", a.name)
	all = appendArgs(all, a.implied)
	all = appendArgs(all, args)
	if suppressed > 0 {
		all = append(all, "suppressed", suppressed, "over", over.Round(time.Millisecond))
	}
	a.l.Log(context.Background(), lv, msg, all...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(level hclog.Level) bool {
	return a.l.Enabled(context.Background(), slogLevel(level))
}

func (a *hclogAdapter) IsTrace() bool { return false }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.implied = append(append([]any(nil), a.implied...), args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	c := *a
	c.name = a.name + "." + name
	return &c
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

// SetLevel is ignored: the slog handler owns the level.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

func (a *hclogAdapter) GetLevel() hclog.Level {
	switch {
	case a.IsDebug():
		return hclog.Debug
	case a.IsInfo():
		return hclog.Info
	case a.IsWarn():
		return hclog.Warn
	}
	return hclog.Error
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		a.Info(strings.TrimSpace(string(p)))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
