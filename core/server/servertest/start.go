// start.go holds Start, a NameServer on loopback shut down when the test
// ends.

package servertest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

// Start runs a NameServer on 127.0.0.1 with an ephemeral port, its KV file
// and persisted configuration in the test's temporary directory, logging
// nowhere; edit, when not nil, changes the configuration first, and opts
// are passed to server.New (server.WithClock, say). The server is shut
// down when the test ends, and a failed shutdown fails it.
func Start(t testing.TB, edit func(*config.Config), opts ...server.Option) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.ListenPort = 0
	cfg.BindAddress = "127.0.0.1"
	cfg.KVConfigPath = filepath.Join(t.TempDir(), "kv.json")
	cfg.ConfigStorePath = filepath.Join(t.TempDir(), "namesrv.properties")
	if edit != nil {
		edit(cfg)
	}
	s, err := server.New(cfg, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}
