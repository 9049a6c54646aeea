// buildinfo_test.go checks the version rules: the stamp first, then the
// module version, then the VCS revision.

package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	f := func(stamp string, bi *debug.BuildInfo, want Info) {
		t.Helper()
		got := resolve(stamp, bi)
		if want.GoVersion == "" {
			want.GoVersion = got.GoVersion
		}
		if got != want {
			t.Errorf("resolve(%q, %+v) = %+v, want %+v", stamp, bi, got, want)
		}
	}
	rev := "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	f("v1.2.0", nil, Info{Version: "v1.2.0", From: "ldflags"})
	f("v1.2.0-3-g1a2b3c4-dirty", nil, Info{Version: "v1.2.0-3-g1a2b3c4-dirty", Commit: "1a2b3c4", Dirty: true, From: "ldflags"})
	f("1a2b3c4", nil, Info{Version: "1a2b3c4", Commit: "1a2b3c4", From: "ldflags"})
	f("1a2b3c4-dirty\n", nil, Info{Version: "1a2b3c4-dirty", Commit: "1a2b3c4", Dirty: true, From: "ldflags"})
	// The stamp wins over what the toolchain recorded.
	f("v2.0.0", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.0.0"}, Settings: vcs(rev, "true")},
		Info{Version: "v2.0.0", From: "ldflags", GoVersion: "go1.26.0"})
	// No stamp: the module version, then the revision.
	f("", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, Info{Version: "v1.3.0", From: "module"})
	f("", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.1-0.20250101120000-1a2b3c4d5e6f+dirty"}, Settings: vcs(rev, "true")},
		Info{Version: "v1.3.1-0.20250101120000-1a2b3c4d5e6f+dirty", Commit: "1a2b3c4d5e6f", Dirty: true, From: "module"})
	f("", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")},
		Info{Version: "1a2b3c4d5e6f-dirty", Commit: "1a2b3c4d5e6f", Dirty: true, From: "vcs"})
	f("", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
		Info{Version: "1a2b3c4d5e6f", Commit: "1a2b3c4d5e6f", From: "vcs"})
	// -buildvcs=false and no stamp: nothing to go by.
	f("", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Info{Version: "devel", From: "none"})
	f("", nil, Info{Version: "devel", From: "none"})
}

func TestString(t *testing.T) {
	t.Parallel()
	s := String("namesrv")
	if !strings.HasPrefix(s, "namesrv "+Version()+" (go") {
		t.Fatalf("String = %q", s)
	}
}
