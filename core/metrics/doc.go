// Package metrics keeps what a remoting listener counts, in Prometheus
// form: requests per code, errors per code and response, latency per
// request class, and the listener's own events (rejected frames, refused
// connections, TLS handshakes).
//
// Each set is built from its server's tables, so a NameServer and a
// controller in one process keep apart series under their own prefixes,
// and every update is an index and an atomic add.
package metrics
