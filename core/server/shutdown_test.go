// shutdown_test.go checks what the admin listener promises at shutdown: an
// admin client that stops reading holds neither its handler nor the
// shutdown (core/remoting tests the remoting side of Shutdown).

package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/pprof"
)

// startOwned starts a server whose Shutdown the test calls and checks
// itself; the cleanup only makes sure the server ends when the test fails
// before that.
func startOwned(t *testing.T, cfg *config.Config, setup func(*Server)) *Server {
	t.Helper()
	s := newStarted(t, cfg, quietLog, setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

func adminOwned(t *testing.T, profiles http.Handler, writeTimeout time.Duration) *Server {
	t.Helper()
	cfg := testConfig(t)
	cfg.AdminListen = "127.0.0.1:0"
	return startOwned(t, cfg, func(s *Server) {
		s.ServeProfiles(profiles)
		s.adminHTTP.writeTimeout = writeTimeout
	})
}

// With profiles served, an admin answer still has a write timeout: a
// client that never reads does not pin the handler, nor Shutdown. The
// stand-in endpoint writes without end and does not ask for more time.
func TestAdminClientThatNeverReadsHoldsNothing(t *testing.T) {
	writeErr := make(chan error, 1)
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
	})
	s := adminOwned(t, endless, 200*time.Millisecond)
	nc, err := net.DialTimeout("tcp", s.AdminAddr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := fmt.Fprintf(nc, "GET /debug/pprof/endless HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-writeErr:
	case <-time.After(10 * time.Second):
		t.Fatal("an admin client that never reads holds its handler: the admin listener has no write timeout")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The profiles that run for a requested time still work when that time is
// longer than the write timeout.
func TestAdminProfileMayOutlastTheWriteTimeout(t *testing.T) {
	s := adminOwned(t, pprof.Handler(), time.Second)
	code, body := httpGet(t, "http://"+s.AdminAddr()+"/debug/pprof/allocs?seconds=2")
	if code != http.StatusOK || len(body) == 0 {
		t.Fatalf("a 2s profile under a 1s write timeout: status %d, %d bytes: %.200s", code, len(body), body)
	}
}
