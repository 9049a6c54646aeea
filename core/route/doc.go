// Package route holds the NameServer's state and rules: broker registration,
// liveness, unregistration and topic route assembly, as pure logic over an
// injected clock. It opens no sockets, starts no goroutines and never reads
// the wall clock; the server calls it and does the I/O.
//
// # Concurrency
//
// Writers (every method that changes state) serialise on Table.mu, which
// guards the broker tables: broker groups, clusters, liveness, filter servers,
// the brokerName -> topics index and the expiry heap. Topic queue data lives
// in a shard.Table whose per-shard writer locks are only ever taken while
// holding Table.mu:
//
//	lock order: Table.mu -> shard writer lock (inside shard.Table)
//
// A writer first works out everything it changes without changing anything:
// it stages groups, live entries, topic entries and the next broker view in
// a write (write.go), then commits them, which only stores what was
// prepared. A write is therefore applied whole, or, when it panics while
// preparing, not at all; readers see nothing of it before its commit, which
// publishes the topic entries shard by shard (shard.Table.UpdateMany).
//
// Readers (RouteBody, Route, AppendClusterInfo, the topic lists) take no lock:
// they read an immutable brokerView published through an atomic pointer and
// immutable topicEntry values from the shard table. A commit publishes the
// new view before the topic entries that depend on it, so a reader that sees
// a topic entry sees a view at least as new; a topic entry's cached body is
// therefore never built from broker data older than the entry. The encoded
// topic lists are kept per generation, which a commit counts after its
// topic entries (lists.go).
package route
