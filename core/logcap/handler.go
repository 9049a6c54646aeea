// handler.go holds Handler, the slog.Handler wrapper that caps strings and
// rate-limits repeated lines per cause.

package logcap

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Options configure a Handler. The zero value caps strings at
// DefaultMaxString and lets DefaultBurst lines of one cause through per
// DefaultWindow.
type Options struct {
	// MaxString caps every string value and key, and four times it the
	// message (messages are the code's own text, a few of them listing
	// settings); 0 is DefaultMaxString.
	MaxString int
	// Burst lines of one cause (level and message) are written per
	// Window; the rest are counted and summarised. 0 is DefaultBurst,
	// negative writes every line.
	Burst  int
	Window time.Duration // 0 is DefaultWindow
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Defaults: 100 lines of one cause a second is far above what a healthy
// server writes (a few lines a minute), and what a flood of it costs stays
// a few hundred KiB a second per cause instead of one connection's 77k.
const (
	DefaultBurst  = 100
	DefaultWindow = time.Second
)

// maxCauses bounds the causes tracked between two Flushes; messages are
// almost all constants, but a few carry text.
const maxCauses = 4096

// Handler wraps another slog.Handler. Handlers derived by WithAttrs and
// WithGroup share its counters.
type Handler struct {
	inner slog.Handler
	st    *state
}

type state struct {
	opts Options

	mu     sync.Mutex
	causes map[cause]*window
}

type cause struct {
	level slog.Level
	msg   string
}

type window struct {
	start      time.Time
	n          int
	suppressed uint64
	first      time.Time // of the first suppressed line
}

// New wraps inner.
func New(inner slog.Handler, o Options) *Handler {
	if o.MaxString <= 0 {
		o.MaxString = DefaultMaxString
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{inner: inner, st: &state{opts: o, causes: make(map[cause]*window)}}
}

// Enabled is the inner handler's answer.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle rate-limits and caps r, then hands it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	st := h.st
	if st.opts.Burst > 0 {
		write, summary := st.admit(cause{r.Level, Cut(r.Message, st.opts.MaxString)})
		if summary != nil {
			if err := h.inner.Handle(ctx, *summary); err != nil {
				return err
			}
		}
		if !write {
			return nil
		}
	}
	return h.inner.Handle(ctx, st.capRecord(r))
}

// admit reports whether a line of c may be written now, and the summary of
// c's previous window when that window ended with lines suppressed.
func (st *state) admit(c cause) (bool, *slog.Record) {
	now := st.opts.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	w := st.causes[c]
	if w == nil {
		if len(st.causes) >= maxCauses {
			st.pruneLocked(now, true)
		}
		w = &window{start: now}
		st.causes[c] = w
	}
	var summary *slog.Record
	if now.Sub(w.start) >= st.opts.Window {
		summary = st.summaryLocked(c, w, now)
		w.start, w.n = now, 0
	}
	w.n++
	if w.n <= st.opts.Burst {
		return true, summary
	}
	if w.suppressed == 0 {
		w.first = now
	}
	w.suppressed++
	return false, summary
}

// summaryLocked is the record saying how many lines of c were suppressed,
// and resets the count; nil when none were.
func (st *state) summaryLocked(c cause, w *window, now time.Time) *slog.Record {
	if w.suppressed == 0 {
		return nil
	}
	r := slog.NewRecord(now, c.level, "log lines suppressed", 0)
	r.AddAttrs(slog.String("cause", c.msg), slog.Uint64("suppressed", w.suppressed),
		slog.Duration("over", now.Sub(w.first).Round(time.Millisecond)),
		slog.Int("limit_per_window", st.opts.Burst), slog.Duration("window", st.opts.Window))
	w.suppressed = 0
	return &r
}

// pruneLocked forgets the causes whose window has ended (all of them with
// all), after summarising what they suppressed.
func (st *state) pruneLocked(now time.Time, all bool) []slog.Record {
	var out []slog.Record
	for c, w := range st.causes {
		if !all && now.Sub(w.start) < st.opts.Window {
			continue
		}
		if s := st.summaryLocked(c, w, now); s != nil {
			out = append(out, *s)
		}
		delete(st.causes, c)
	}
	return out
}

// Flush writes the summaries of the lines suppressed in windows that have
// ended by causes that stayed quiet since (a cause that logs again gets its
// summary then). Call it periodically.
func (h *Handler) Flush() {
	st := h.st
	now := st.opts.Now()
	st.mu.Lock()
	out := st.pruneLocked(now, false)
	st.mu.Unlock()
	ctx := context.Background()
	for _, r := range out {
		if h.inner.Enabled(ctx, r.Level) {
			_ = h.inner.Handle(ctx, r)
		}
	}
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	capped := make([]slog.Attr, len(as))
	for i, a := range as {
		capped[i] = h.st.capAttr(a)
	}
	return &Handler{inner: h.inner.WithAttrs(capped), st: h.st}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(Cut(name, h.st.opts.MaxString)), st: h.st}
}

// capRecord is r with its message and every string in it capped.
func (st *state) capRecord(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, Cut(r.Message, 4*st.opts.MaxString), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(st.capAttr(a))
		return true
	})
	return out
}

// maxListed bounds the elements of a []string value written.
const maxListed = 64

// capAttr caps a's key and value: strings, errors and Stringers by their
// text, []string by element and count, groups recursively. Other values
// (numbers, durations, times) are bounded already.
func (st *state) capAttr(a slog.Attr) slog.Attr {
	max := st.opts.MaxString
	a.Key = Cut(a.Key, max)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); len(s) > max {
			v = slog.StringValue(Cut(s, max))
		}
	case slog.KindGroup:
		g := v.Group()
		capped := make([]slog.Attr, len(g))
		for i, ga := range g {
			capped[i] = st.capAttr(ga)
		}
		v = slog.GroupValue(capped...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			v = slog.StringValue(Cut(x.Error(), max))
		case []string:
			n := min(len(x), maxListed)
			out := make([]string, n, n+1)
			for i := range n {
				out[i] = Cut(x[i], max)
			}
			if len(x) > n {
				out = append(out, fmt.Sprintf("...(%d in all)", len(x)))
			}
			v = slog.AnyValue(out)
		case []byte:
			v = slog.StringValue(Cut(string(x), max))
		case fmt.Stringer:
			v = slog.StringValue(Cut(x.String(), max))
		}
	}
	a.Value = v
	return a
}
