// Package codec holds the RocketMQ remoting wire format: frames, the JSON and
// ROCKETMQ binary header encodings, request and response codes with their
// Java names.
//
// Decoded strings point into the frame (or into the Command's own scratch
// buffer when a JSON string had escapes): they are valid until the next
// Decode into the same Command or until the netpoll Reader the frame came
// from is released, whichever comes first. Anything that must outlive the
// request (a topic stored in the route table) has to be cloned by its keeper.
package codec
