// Tests of nsbench's command line: the help says what "vs limit" means and
// that a limit run comes first, the plan line, -version, one-line errors,
// and -hold keeping the brokers registered until the end.

package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketns/rocketns/bench/loadgen"
	"github.com/rocketns/rocketns/core/buildinfo"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/server/servertest"
)

// lockedBuffer is written by the command's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func runArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := runCtx(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHelpExplainsTheLimitRun(t *testing.T) {
	code, out, errOut := runArgs("-h")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{`"vs limit" is the route run's QPS divided by the limit run's`, "takes about 8 s", "-limit=false", "-hold", "-route-version"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestPlan(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		fl, err := parse(args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		o, err := fl.options(&bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fl.plan(o); got != want {
			t.Errorf("%q:\n got %s\nwant %s", args, got, want)
		}
	}
	f([]string{"-duration", "4s", "-inproc"}, "nsbench: route: 1 combination(s) of -conns x -depth, each a limit run, then the route run, 4s apiece: about 8s after setup")
	f([]string{"-duration", "4s", "-limit=false", "-conns", "8,16"}, "nsbench: route: 2 combination(s) of -conns x -depth, each the route run, 4s apiece: about 8s after setup")
	f([]string{"-scenario", "limit", "-duration", "2s", "-depth", "1,4"}, "nsbench: limit: 2 combination(s), 2s apiece against the limit server only: about 4s after setup")
	f([]string{"-scenario", "storm"}, "nsbench: storm")
	f([]string{"-scenario", "compare", "-targets", "a=/x/namesrv,echo-netpoll", "-depth", "1,4", "-duration", "2s", "-pin", "0/1"},
		"nsbench: compare: 2 target(s) x 2 combination(s) x 3 round(s), 2s apiece: about 24s after setup")
	f([]string{"-scenario", "rolling", "-register-every", "5s", "-warmup", "2s"},
		"nsbench: rolling: 4 round(s) (off,on,off,on), each 3 servers restarted one after the other after 2s of load and followed by 6s: about 32s plus the restarts")
}

// The rolling flags reach the spec (the binary's path made absolute, since
// the servers run in directories of their own), and bad ones are refused.
func TestRollingFlags(t *testing.T) {
	options := func(args ...string) (loadgen.Options, error) {
		fl, err := parse(append([]string{"-scenario", "rolling"}, args...), &bytes.Buffer{})
		if err != nil {
			return loadgen.Options{}, err
		}
		return fl.options(&bytes.Buffer{})
	}
	o, err := options("-namesrv", "bin/namesrv", "-warm", "on,off", "-servers", "2", "-clients", "3", "-failover", "-tail", "4s")
	if err != nil {
		t.Fatal(err)
	}
	rs := o.Rolling
	if !filepath.IsAbs(rs.Exe) || !strings.HasSuffix(rs.Exe, "/bin/namesrv") || fmt.Sprint(rs.Warm) != "[true false]" ||
		rs.Servers != 2 || rs.ClientsPerServer != 3 || !rs.Failover || rs.Tail != 4*time.Second || rs.RegisterEvery != 30*time.Second {
		t.Errorf("spec %+v", rs)
	}
	for _, bad := range [][]string{{"-warm", "maybe"}, {"-clients", "0"}, {"-register-every", "0s"}, {"-tail", "-1s"}} {
		if _, err := options(bad...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestVersionAndBadFlags(t *testing.T) {
	code, out, _ := runArgs("-version")
	if code != 0 || !strings.HasPrefix(out, "nsbench "+buildinfo.Version()+" (go") {
		t.Fatalf("-version: exit %d %q", code, out)
	}
	for _, args := range [][]string{{"-nosuch"}, {"-duration"}, {"extra"}, {"-hold", "-inproc"}, {"-scenario", "compare"}, {"-rounds", "0"}} {
		code, out, errOut := runArgs(args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) != 2 || lines[1] != "Run 'nsbench -h' for the flags." {
			t.Errorf("%q: exit %d stdout %q stderr:\n%s", args, code, out, errOut)
		}
	}
}

// -hold: after the run the brokers are registered on the server until
// the context ends, then unregistered.
func TestHold(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCtx(ctx, []string{"-addr", srv.Addr(), "-brokers", "3", "-topics", "20", "-duration", "100ms",
			"-limit=false", "-quiet", "-hold"}, strings.NewReader(""), &stdout, &stderr)
	}()
	for !strings.Contains(stderr.String(), "nsbench: holding 3 simulated brokers") {
		select {
		case code := <-done:
			t.Fatalf("exit %d before holding: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cl, err := client.Dial(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ci, err := cl.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, b := range ci.Brokers {
		names[b.BrokerName] = true
	}
	for i := 0; i < 3; i++ {
		if !names[loadgen.BrokerName(i)] {
			t.Errorf("broker %s not registered while holding: %v", loadgen.BrokerName(i), names)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "route") {
		t.Errorf("no report before holding:\n%s", stdout.String())
	}
}
