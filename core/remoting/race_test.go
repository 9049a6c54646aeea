//go:build race

// race_test.go: allocation counts are meaningless under the race detector.

package remoting

const raceEnabled = true
