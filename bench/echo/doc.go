// Package echo holds the ceilings the NameServer is measured against: two
// minimal servers that split RocketMQ frames and answer each request with one
// canned route body, a netpoll one (one event loop, the NameServer's network
// stack) and a standard-library one (a goroutine per connection with bufio).
// Neither shares any code with the NameServer's connection loop or codec, so
// a ratio to them prices everything the NameServer does per request.
package echo
