// Package auth decides whether a request may be served: the classes of
// request codes and the roles that may send each, the accounts and their
// broker bindings, the RocketMQ ACL signature (the HMAC-SHA1 scheme the
// official clients already use with credentials), rocketns's strict
// signature scheme (code, time and nonce signed, with its replay cache),
// and source-address allowlists for admins and brokers. It is pure logic
// with an injected clock: the server hands it a decoded request, its
// code's class and the peer address, and acts on the answer, a Grant
// naming who asked or a Denial saying why not.
package auth
