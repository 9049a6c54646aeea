// repo.go finds files of the checkout without the compiler's file paths,
// which -trimpath (the Makefile's test targets) removes.

package codectest

import (
	"bytes"
	"os"
	"path/filepath"
)

const modulePath = "github.com/rocketns/rocketns"

// RepoPath joins elem to the root of the checkout: the nearest directory
// above the working directory (go test runs a package's tests in its own
// directory) whose go.mod declares the rocketns module. Outside a checkout
// it returns elem joined as is, relative, so that the caller's open fails
// naming the file it looked for.
func RepoPath(elem ...string) string {
	rel := filepath.Join(elem...)
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(mod, modulePath) {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel
		}
		dir = parent
	}
}

// declares reports whether a go.mod's module line names path.
func declares(mod []byte, path string) bool {
	for _, line := range bytes.Split(mod, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 2 && string(f[0]) == "module" && string(f[1]) == path {
			return true
		}
	}
	return false
}
