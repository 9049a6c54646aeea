// Package pprof serves Go's runtime profiles (net/http/pprof) on a listener
// of its own, only when the operator asks for one, and sets the block and
// mutex profiling rates that make those two profiles useful.
package pprof
