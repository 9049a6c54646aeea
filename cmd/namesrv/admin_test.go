// Tests of the admin listener wiring: adminListen reaches the server, and
// the profiles are served only where --pprof-addr says.

package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
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

// runReal runs the command with the real server until the test sends
// SIGTERM through stop, and returns the server once it has started.
func runReal(t *testing.T, args ...string) (srv *startedServer, logs *syncBuffer, stop func() (int, string)) {
	t.Helper()
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
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	args = append([]string{"--listenPort", "0", "--bindAddress", "127.0.0.1", "--kvConfigPath", filepath.Join(t.TempDir(), "kv.json")}, args...)
	go func() { done <- runWith(args, nil, &stdout, &stderr, sigs, factory) }()
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
	return srv, &stderr, func() (int, string) {
		sigs <- syscall.SIGTERM
		code := <-done
		return code, stderr.String()
	}
}

// syncBuffer is a bytes.Buffer safe for the command's goroutine and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute} // bounds a hang only
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With adminListen and a different --pprof-addr, the profiles are served
// on --pprof-addr only: never on the admin listener, which may face the
// network while the profiles were asked for on loopback.
func TestPprofOnlyWherePprofAddrSays(t *testing.T) {
	withHome(t)
	pprofAddr := remotingtest.FreeAddrs(t, 1)[0]
	srv, logs, stop := runReal(t, "--adminListen", "127.0.0.1:0", "--pprof-addr", pprofAddr)
	// The profile listener starts after the server.
	remotingtest.WaitFor(t, "the pprof listener", func() bool { return strings.Contains(logs.String(), "pprof listening") })
	if code, body := httpGet(t, "http://"+pprofAddr+"/debug/pprof/cmdline"); code != 200 || !strings.Contains(body, "test") {
		t.Fatalf("pprof on --pprof-addr: %d %q", code, body)
	}
	if code, _ := httpGet(t, "http://"+srv.AdminAddr()+"/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Fatalf("pprof on the admin listener: %d, want 404", code)
	}
	if code, _ := httpGet(t, "http://"+srv.AdminAddr()+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
	code, out := stop()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if !strings.Contains(out, "pprof listening") || strings.Contains(out, "pprof served on the admin listener") {
		t.Fatalf("want the profiles on a listener of their own:\n%s", out)
	}
}

// With --pprof-addr the admin listener's own address, the profiles are on
// the admin listener and no second listener is opened.
func TestPprofOnTheAdminListenerWhenItsAddress(t *testing.T) {
	withHome(t)
	addr := remotingtest.FreeAddrs(t, 1)[0]
	srv, _, stop := runReal(t, "--adminListen", addr, "--pprof-addr", addr)
	if srv.AdminAddr() != addr {
		t.Fatalf("admin listener on %s, want %s", srv.AdminAddr(), addr)
	}
	if code, body := httpGet(t, "http://"+addr+"/debug/pprof/cmdline"); code != 200 || !strings.Contains(body, "test") {
		t.Fatalf("pprof on the admin listener: %d %q", code, body)
	}
	code, logs := stop()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, logs)
	}
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

func TestPprofListenerUnlessAdminAddress(t *testing.T) {
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
	f([]string{"--pprof-addr", "127.0.0.1:0", "--adminListen", "127.0.0.1:18082"}, false)
	f([]string{"--pprof-addr", "127.0.0.1:0", "--set", "adminListen=0.0.0.0:9877"}, false)
	f([]string{"--pprof-addr", "127.0.0.1:18082", "--adminListen", "127.0.0.1:18082"}, true)
	f([]string{"--pprof-addr", "127.0.0.1:18082", "--set", "adminListen=127.0.0.1:18082"}, true)
}
