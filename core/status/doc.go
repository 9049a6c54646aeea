// Package status renders the NameServer's human status page: clusters,
// brokers with their addresses, roles and heartbeat ages, topic counts, and a
// topic's route on request. Server-rendered HTML, no JavaScript.
package status
