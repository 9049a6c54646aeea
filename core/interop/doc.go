// Package interop checks rocketns against the official Go client,
// github.com/apache/rocketmq-client-go/v2. It lives in a module of its own
// so that the client and the modules it pulls in stay out of the server's
// go.mod; it holds only tests.
package interop
