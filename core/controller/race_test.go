// Build-tag switch telling allocation tests whether the race detector runs.
//go:build race

package controller

const raceEnabled = true
