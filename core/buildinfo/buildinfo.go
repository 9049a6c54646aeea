// buildinfo.go holds the link-time stamp and the rules that turn it, or
// the toolchain's record, into a version.

package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set by the linker (-ldflags -X, see the package comment) and
// never written at run time.
var version string

// VersionVar is the linker symbol the Makefile and the Dockerfile stamp.
const VersionVar = "github.com/rocketns/rocketns/core/buildinfo.version"

// Info describes the running build.
type Info struct {
	// Version is the tag or commit: "v1.2.0", "v1.2.0-3-g1a2b3c4-dirty",
	// "1a2b3c4" (no tag), or "devel" when nothing was recorded.
	Version string
	// Commit is the abbreviated revision when known.
	Commit string
	// Dirty: the tree had uncommitted changes.
	Dirty bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
	// From says where Version came from: "ldflags", "module", "vcs" or
	// "none".
	From string
}

// Get returns the running build's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(version, bi)
}

// Version is Get().Version.
func Version() string { return Get().Version }

// String is the --version line: "namesrv v1.2.0-3-g1a2b3c4-dirty (go1.26.8
// linux/amd64)".
func String(program string) string {
	i := Get()
	return fmt.Sprintf("%s %s (%s %s/%s)", program, i.Version, i.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// resolve turns the stamp, else the toolchain's record, into an Info.
func resolve(stamp string, bi *debug.BuildInfo) Info {
	i := Info{GoVersion: runtime.Version(), Version: "devel", From: "none"}
	if bi != nil && bi.GoVersion != "" {
		i.GoVersion = bi.GoVersion
	}
	if stamp = strings.TrimSpace(stamp); stamp != "" {
		i.Version, i.From = stamp, "ldflags"
		i.Dirty = strings.HasSuffix(stamp, "-dirty")
		i.Commit = describeCommit(strings.TrimSuffix(stamp, "-dirty"))
		return i
	}
	if bi == nil {
		return i
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	i.Commit, i.Dirty = rev, modified
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		// A module version: a `go install ...@v1.2.0`, or since Go 1.24
		// what the toolchain derives from the repository's tags
		// ("v1.2.1-0.20250101120000-1a2b3c4d5e6f+dirty").
		i.Version, i.From = v, "module"
		i.Dirty = i.Dirty || strings.HasSuffix(v, "+dirty")
		return i
	}
	if rev != "" {
		i.Version, i.From = rev, "vcs"
		if modified {
			i.Version += "-dirty"
		}
	}
	return i
}

// describeCommit finds the commit in git describe's output: the hash after
// "-g" of "v1.2.0-3-g1a2b3c4", or the whole of a bare hash (--always on a
// repository without tags); "" for a plain tag.
func describeCommit(d string) string {
	if i := strings.LastIndex(d, "-g"); i >= 0 && isHex(d[i+2:]) {
		return d[i+2:]
	}
	if len(d) >= 7 && isHex(d) {
		return d
	}
	return ""
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
