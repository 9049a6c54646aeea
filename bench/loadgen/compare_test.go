// Tests of the compare scenario's parts: the -pin and -targets syntax, a
// child started pinned, and a short compare run of a real namesrv binary
// against both echo servers, each pinned to this machine's first CPU.

package loadgen

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
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
	os.Exit(m.Run())
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

func TestStartPinned(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := StartPinned(cmd, []int{0}); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	aff, err := Affinity(cmd.Process.Pid)
	if err != nil || aff != "0" {
		t.Errorf("child affinity %q %v, want 0", aff, err)
	}
	self, err := Affinity(os.Getpid())
	if err != nil || (runtime.NumCPU() > 1 && self == "0") {
		t.Errorf("this process's affinity became %q %v", self, err)
	}
}

func TestCompareSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds namesrv and runs a compare of three targets")
	}
	exe := filepath.Join(t.TempDir(), "namesrv")
	build := exec.Command("go", "build", "-o", exe, "github.com/rocketns/rocketns/cmd/namesrv")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build namesrv: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := smokeOptions()
	o.Inproc = false
	o.Targets = []Target{{Name: "ns", Exe: exe}, {Name: EchoNetpoll, Echo: "netpoll"}, {Name: EchoStd, Echo: "std"}}
	o.Rounds = 2
	o.Duration = 300 * time.Millisecond
	// The echo children are this test binary, told its kind by the
	// environment: the shell gets "-echo-kind KIND" as $1 $2.
	o.LimitExe, o.LimitArgs = "/bin/sh", []string{"-c", `LOADGEN_ECHO_CHILD="$2" exec "$0"`, self}
	r, err := Run(context.Background(), ScenarioCompare, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	if len(r.Rows) != 2*3 {
		t.Fatalf("%d rows, want 6", len(r.Rows))
	}
	for _, row := range r.Rows {
		if row.QPS <= 0 || row.VsLimit <= 0 {
			t.Errorf("row %+v", row)
		}
	}
	for _, m := range []string{"ns_c2_d2_qps_min", "ns_c2_d2_vs_echo-netpoll_max", "echo-std_c2_d2_qps_max"} {
		if v, ok := r.Metric(m); !ok || v <= 0 {
			t.Errorf("metric %s = %v, %v", m, v, ok)
		}
	}
}
