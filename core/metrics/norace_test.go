//go:build !race

// norace_test.go: see race_test.go.

package metrics

const raceEnabled = false
