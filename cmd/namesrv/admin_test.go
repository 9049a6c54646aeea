// Tests of the admin listener wiring: adminListen reaches the server, and
// with --pprof-addr the profiles move onto the admin listener.

package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/server"
)

// startedServer is the real server, reporting when Start returned.
type startedServer struct {
	*server.Server
	started chan struct{}
}

func (s *startedServer) Start() error {
	err := s.Server.Start()
	close(s.started)
	return err
}

func TestPprofMovesOntoTheAdminListener(t *testing.T) {
	withHome(t)
	created := make(chan *startedServer, 1)
	factory := func(cfg *config.Config, log *slog.Logger) (nameServer, error) {
		s, err := server.New(cfg, log)
		if err != nil {
			return nil, err
		}
		srv := &startedServer{Server: s, started: make(chan struct{})}
		created <- srv
		return srv, nil
	}
	sigs := make(chan os.Signal, 1)
	// Stops the command if the test fails before sending the signal.
	t.Cleanup(func() {
		select {
		case sigs <- syscall.SIGTERM:
		default:
		}
	})
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runWith([]string{"--listenPort", "0", "--bindAddress", "127.0.0.1", "--kvConfigPath", filepath.Join(t.TempDir(), "kv.json"),
			"--adminListen", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:1"}, nil, &stdout, &stderr, sigs, factory)
	}()
	var srv *startedServer
	select {
	case srv = <-created:
	case code := <-done:
		t.Fatalf("exit %d before starting: %s", code, stderr.String())
	}
	select {
	case <-srv.started:
	case code := <-done:
		t.Fatalf("exit %d while starting: %s", code, stderr.String())
	}
	get := func(path string) (int, string) {
		t.Helper()
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + srv.AdminAddr() + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/debug/pprof/cmdline"); code != 200 || !strings.Contains(body, "test") {
		t.Fatalf("pprof on the admin listener: %d %q", code, body)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
	sigs <- syscall.SIGTERM
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, "pprof served on the admin listener") || strings.Contains(logs, "pprof listening") {
		t.Fatalf("want the profiles on the admin listener and no second listener:\n%s", logs)
	}
}

// fakeAdmin is a fake server with an admin listener.
type fakeAdmin struct {
	fakeServer
	profiles http.Handler
}

func (f *fakeAdmin) ServeProfiles(h http.Handler) { f.profiles = h }
func (f *fakeAdmin) AdminAddr() string            { return "127.0.0.1:9877" }

func TestPprofWithoutAdminListenKeepsItsListener(t *testing.T) {
	withHome(t)
	f := func(args []string, wantOnAdmin bool) {
		t.Helper()
		fake := &fakeAdmin{}
		var stdout, stderr bytes.Buffer
		sigs := make(chan os.Signal, 1)
		sigs <- syscall.SIGTERM
		code := runWith(args, nil, &stdout, &stderr, sigs, func(cfg *config.Config, _ *slog.Logger) (nameServer, error) {
			fake.cfg = cfg
			return fake, nil
		})
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
		onAdmin := fake.profiles != nil
		if onAdmin != wantOnAdmin || strings.Contains(stderr.String(), "pprof listening") == wantOnAdmin {
			t.Fatalf("%q: profiles on the admin listener %v, want %v:\n%s", args, onAdmin, wantOnAdmin, stderr.String())
		}
	}
	f([]string{"--pprof-addr", "127.0.0.1:0"}, false)
	f([]string{"--pprof-addr", "127.0.0.1:0", "--adminListen", "127.0.0.1:0"}, true)
	f([]string{"--pprof-addr", "127.0.0.1:0", "--set", "adminListen=127.0.0.1:0"}, true)
}
