// Package servertest starts NameServers for tests outside core/server: the
// replay of the recordings, and the interop module's tests.
package servertest
