// norace.go: whether the race detector is on, for the tests that skip under it.
//go:build !race

package codectest

// Race is true in a binary built with -race.
const Race = false
