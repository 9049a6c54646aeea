// version_test.go builds the command the way the Makefile does, with the
// version stamped through -ldflags -X and VCS stamping off as in CI, and
// checks that --version reports it.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
)

func TestVersionStampedByTheLinker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not with -short")
	}
	bin := filepath.Join(t.TempDir(), "namesrv")
	const version = "v9.8.7-6-g1a2b3c4-dirty"
	build := exec.Command("go", "build", "-ldflags", "-X "+buildinfo.VersionVar+"="+version, "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "namesrv "+version+" (go") {
		t.Fatalf("--version: %q, %v", out, err)
	}
	// Without the stamp and without VCS data there is nothing to go by.
	plain := exec.Command("go", "build", "-o", bin, ".")
	plain.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := plain.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "namesrv devel (go") {
		t.Fatalf("--version unstamped: %q, %v", out, err)
	}
}
