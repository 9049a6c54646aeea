// Package remotingtest holds what tests of remoting listeners share: a bare
// client connection that speaks frames, a request builder, and a log sink
// safe to read while the listener writes.
package remotingtest
