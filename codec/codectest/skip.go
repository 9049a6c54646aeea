// skip.go holds the skip of single-goroutine tests under the race detector.

package codectest

import "testing"

// SkipUnderRace skips a test that runs on one goroutine over large inputs
// when the race detector is on: it can find nothing there and multiplies
// the test's cost. `make alloc`, which runs without it, runs every test
// that calls this (the Makefile finds them by this name) and fails if one
// skips, so none stops running.
func SkipUnderRace(tb testing.TB) {
	tb.Helper()
	if Race {
		tb.Skip("one goroutine over large inputs: run without the race detector by make alloc")
	}
}
