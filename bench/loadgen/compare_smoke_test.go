//go:build e2e

// A short compare run of a real namesrv binary, built for it, against both
// echo servers started as children (this test binary, see TestMain), and a
// child started pinned to a CPU.

package loadgen

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestCompareSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds namesrv and runs a compare of three targets")
	}
	exe := namesrvBinary(t)
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
