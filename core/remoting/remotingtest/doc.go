// Package remotingtest holds what tests of remoting listeners share: a bare
// client connection that speaks frames, and a request builder.
package remotingtest
