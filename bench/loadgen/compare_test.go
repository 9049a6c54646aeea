// Tests of the compare scenario's parts: the -pin and -targets syntax. A
// child started pinned and the whole scenario are in compare_smoke_test.go
// (make e2e): they start processes.

package loadgen

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMain makes the test binary an echo child when asked, so the compare
// run can start echo servers without nsbench.
func TestMain(m *testing.M) {
	if kind := os.Getenv("LOADGEN_ECHO_CHILD"); kind != "" {
		if err := ServeLimitChild(kind, "127.0.0.1:0", os.Stdin, os.Stdout); err != nil {
			io.WriteString(os.Stderr, err.Error()+"\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if namesrvBuild.dir != "" {
		os.RemoveAll(namesrvBuild.dir)
	}
	os.Exit(code)
}

// namesrvBuild is the namesrv binary the e2e tests build once
// (namesrvBinary), removed when they are done.
var namesrvBuild struct {
	once sync.Once
	dir  string
	exe  string
	err  error
	out  []byte
}

func TestParsePin(t *testing.T) {
	f := func(in, want, wantErr string) {
		t.Helper()
		p, err := ParsePin(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%q: err %v, want one containing %q", in, err, wantErr)
			}
			return
		}
		if err != nil || p.String() != want {
			t.Errorf("%q: %q %v, want %q", in, p.String(), err, want)
		}
	}
	f("", "", "")
	f("0/1", "0/1", "")
	f("0, 1/2,3", "0,1/2,3", "")
	f("0", "", "want SERVER_CPUS/GENERATOR_CPUS")
	f("0/0", "", "CPU 0 is on both sides")
	f("a/1", "", "not a CPU number")
	f("0/", "", "not a CPU number")
}

func TestParseTargets(t *testing.T) {
	ts, err := ParseTargets("before=/x/namesrv, echo-netpoll,echo-std,after=/y/namesrv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{Name: "before", Exe: "/x/namesrv"}, {Name: EchoNetpoll, Echo: "netpoll"}, {Name: EchoStd, Echo: "std"}, {Name: "after", Exe: "/y/namesrv"}}
	if len(ts) != len(want) {
		t.Fatalf("got %v", ts)
	}
	for i := range want {
		if ts[i] != want[i] {
			t.Errorf("target %d: %+v, want %+v", i, ts[i], want[i])
		}
	}
	// Each namesrv child runs in a directory of its own: a relative path
	// must name the binary from where nsbench was started.
	rel, err := ParseTargets("main=bin/namesrv")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "bin", "namesrv"); rel[0].Exe != want {
		t.Errorf("relative target: %q, want %q", rel[0].Exe, want)
	}
	for _, bad := range []string{"", "namesrv", "a=/x,a=/y", "echo-x=/bin/true", "echo-fast"} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
