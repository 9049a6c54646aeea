// Build-tag switch telling allocation tests whether the race detector runs.
//go:build !race

package codec

const raceEnabled = false
