// Package metrics keeps what a remoting listener counts and exports it
// through prometheus/client_golang: requests per code, errors per code and
// response, latency per request class, the listener's own events (rejected
// frames, refused connections, TLS handshakes), and the building blocks a
// server uses for its own series (fixed counter sets, scrape-time values).
//
// The counters are plain atomics resolved when a set is built, so every
// update on a request path is an index and an atomic add with no
// allocation; each set is a prometheus.Collector that turns them into
// constant metrics when scraped. Each set is built from its server's
// tables, so a NameServer and a controller in one process keep apart
// series under their own prefixes.
package metrics
