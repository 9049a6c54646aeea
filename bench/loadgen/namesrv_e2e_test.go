//go:build e2e

// namesrv_e2e_test.go builds the namesrv binary once for the e2e tests of
// this package that run it as a process.

package loadgen

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// namesrvBinary is the path of namesrv built for this test binary; the
// first caller builds it, the others wait for that build.
func namesrvBinary(t *testing.T) string {
	t.Helper()
	b := &namesrvBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "loadgen-namesrv-"); b.err != nil {
			return
		}
		b.exe = filepath.Join(b.dir, "namesrv")
		b.out, b.err = exec.Command("go", "build", "-o", b.exe, "github.com/rocketns/rocketns/cmd/namesrv").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("build namesrv: %v\n%s", b.err, b.out)
	}
	return b.exe
}
