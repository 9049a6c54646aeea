// The version stamp as the Makefile sets it: the variable the linker
// writes is buildinfo's, fed from git describe, on every binary it builds.

package deploy_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/core/buildinfo"
)

const makefilePath = "../Makefile"

func TestMakefileStampsTheVersion(t *testing.T) {
	text := string(readFile(t, makefilePath))
	assign := func(name string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `\s*[:?]?=\s*(.*)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("Makefile: no %s", name)
		}
		return strings.TrimSpace(m[1])
	}
	if v := assign("VERSION"); !strings.Contains(v, "git describe --tags --always --dirty") {
		t.Errorf("Makefile: VERSION = %s, want it from git describe --tags --always --dirty", v)
	}
	if l := assign("LDFLAGS"); !strings.Contains(l, "-X "+buildinfo.VersionVar+"=$(VERSION)") {
		t.Errorf("Makefile: LDFLAGS = %s, want -X %s=$(VERSION)", l, buildinfo.VersionVar)
	}
	// Every binary the Makefile builds gets the stamp.
	builds := regexp.MustCompile(`(?m)^\t\$\(GO\) build .*$`).FindAllString(text, -1)
	for _, pkg := range []string{"./cmd/namesrv", "./cmd/nsadmin", "./bench/cmd/nsbench"} {
		found := false
		for _, b := range builds {
			if strings.HasSuffix(b, " "+pkg) {
				found = true
				if !strings.Contains(b, "-ldflags '$(LDFLAGS)'") {
					t.Errorf("Makefile: %q builds %s without the version stamp", strings.TrimSpace(b), pkg)
				}
			}
		}
		if !found {
			t.Errorf("Makefile: no go build of %s", pkg)
		}
	}
	// The image gets the same version as the binaries.
	if !regexp.MustCompile(`(?m)^\tdocker build --build-arg VERSION=\$\(VERSION\) `).MatchString(text) {
		t.Error("Makefile: no image target passing --build-arg VERSION=$(VERSION)")
	}
}
