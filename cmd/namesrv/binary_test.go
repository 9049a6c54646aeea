//go:build e2e

// binary_test.go builds the command once for every process test of a run
// (the durability, signal and controller process tests share it), the way
// the Makefile does: the version stamped through -ldflags -X and VCS
// stamping off as in CI. TestVersionStampedByTheLinker checks that stamp.

package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
)

// stampedVersion is the version the test binary is stamped with.
const stampedVersion = "v9.8.7-6-g1a2b3c4-dirty"

// built is the binary of this command, built at most once per run (TestMain
// removes it).
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildBinary builds this command into a temporary directory, once.
func buildBinary(t testing.TB) string {
	t.Helper()
	// go test puts its own GOROOT/bin first on the test's PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary with: %v", err)
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "namesrv-test"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "namesrv")
		build := exec.Command(goTool, "build", "-ldflags", "-X "+buildinfo.VersionVar+"="+stampedVersion, "-o", built.path, ".")
		build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// The stamp reaches --version of a binary built without VCS data (where
// the toolchain's own record is empty; buildinfo's tests cover the
// unstamped fallbacks).
func TestVersionStampedByTheLinker(t *testing.T) {
	out, err := exec.Command(buildBinary(t), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "namesrv "+stampedVersion+" (go") {
		t.Fatalf("--version: %q, %v", out, err)
	}
}
