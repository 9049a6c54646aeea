// Package client is a small RocketMQ remoting client: one TCP connection,
// pipelined requests matched to responses by opaque, and helpers for the
// NameServer requests that tests, the admin tool and the load generator send.
package client
