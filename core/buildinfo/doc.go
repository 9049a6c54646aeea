// Package buildinfo says which build of rocketns is running: the tag or
// commit it was built from and whether the tree had uncommitted changes.
//
// The Makefile and the Dockerfile stamp it at link time from
// `git describe --tags --always --dirty`:
//
//	go build -ldflags "-X github.com/rocketns/rocketns/core/buildinfo.version=v1.2.0-3-g1a2b3c4-dirty"
//
// Without a stamp it falls back to what the Go toolchain recorded (the
// module version of a `go install ...@version`, or the VCS revision), which
// a build with -buildvcs=false, as in many CI and image builds, does not
// have; then the version is "devel".
package buildinfo
