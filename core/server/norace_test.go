//go:build !race

// norace_test.go: see race_test.go.

package server

const raceEnabled = false
