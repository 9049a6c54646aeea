// Package remoting serves the RocketMQ remoting protocol on one listener:
// the netpoll event loop, per-connection state, the read-dispatch-write
// loop over a table of request codes, pooled reply buffers, connection
// limits, TLS and other protocols told apart by a connection's first bytes,
// deferred replies, and shutdown.
//
// It knows frames and request codes, not what a code means: a NameServer
// or a controller builds a Server with its own dispatch table, options and
// hooks, and a process may run several of them side by side.
//
// # Buffers
//
// A handler's req aliases the connection's read buffer and the Command's
// own scratch: its strings and body are valid only until the handler
// returns (the same Command decodes the next frame, and the read buffer is
// released once the replies are flushed). Whatever must outlive the call
// has to be copied. A reply body may point into a buffer from Conn.Buffer
// or into memory that does not change (a cached encoding): netpoll may send
// it without copying, after the handler has returned.
//
// # Deferred replies
//
// A handler that cannot answer at once (a controller write waiting for its
// raft entry to commit) calls Conn.Defer and returns; the connection goes on
// serving its next requests, and the Pending is completed later from any
// goroutine. Replies may therefore leave out of order: peers match them by
// opaque.
//
// # Bounds
//
// netpoll reads whatever a peer sends, whether or not the connection is
// being served. A Budget shared by a process's listeners bounds what they
// hold together (budget.go): a frame's declared length is reserved before
// its body is waited for, the input and replies of a batch are charged as
// they grow, and a flush or a handler that blocks (Conn.BeginBlocking) is
// watched meanwhile. MaxConnectionsPerIP bounds the connections of one
// source address.
package remoting
