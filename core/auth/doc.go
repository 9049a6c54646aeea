// Package auth decides whether a request may be served: the classes of
// request codes and the roles that may send each, the accounts, the
// RocketMQ ACL signature (the HMAC-SHA1 scheme the official clients already
// use with credentials) and source-address allowlists. It is pure logic:
// the server hands it a decoded request, its code's class and the peer
// address, and acts on the answer.
package auth
