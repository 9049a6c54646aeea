//go:build !race

// norace_test.go: see race_test.go.

package ctlserver

const raceEnabled = false
