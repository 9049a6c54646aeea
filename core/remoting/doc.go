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
//
// # Locks
//
//	lock order: asyncOut.wmu -> asyncOut.qmu
//	            asyncOut.wmu -> Conn.watchMu -> Budget.mu
//	leaves:     Server.connsMu, heavyQueue.mu, workers.mu, bufPool.mu
//	            (nothing is taken under them); handedConn.once -> Server.connsMu
//
// A connection is never closed with any of them held: netpoll may run
// the close callbacks (onClose: connsMu, then the connection's watchMu and
// wmu) on the closing goroutine, so a watch that closed another connection
// under its own watchMu could wait for that connection's watch, which may
// be waiting for it. The watch and the budget therefore hand back what is
// to be closed (watchInput, tryCharge) and close it after letting go.
// TestLockOrder checks the source against this order: each Lock, and each
// call of the package's functions and methods (by name) made while a lock
// is held.
//
// A connection's state is split by job, each in its own struct embedded
// in Conn: the request loop's (connLoop, one goroutine at a time), the
// budget account and input watch (connWatch), the TLS side and the
// hand-off to another protocol (connHandoff).
package remoting
