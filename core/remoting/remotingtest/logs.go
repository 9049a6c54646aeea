// logs.go holds Logs, a log sink that tests read while listeners write.

package remotingtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Logs collects a listener's log lines so a test can assert on them;
// connection goroutines write while the test reads.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger is a text logger writing into l at debug level and above.
func (l *Logs) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
