//go:build race

// race_test.go tells the allocation guards that the race detector runs,
// which allocates on its own.

package ctlserver

const raceEnabled = true
