// Package server is the NameServer: its request handlers and dispatch
// table on a remoting listener, the periodic tasks (liveness scan, KV
// dump), the 905 notifier, metrics and the admin listener. How a route is
// built lives in core/route, how requests travel in core/remoting.
package server
