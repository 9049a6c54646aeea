// Package shard holds Table, a read-mostly map split into shards whose
// contents are immutable snapshots: readers never lock and never wait for a
// writer, writers copy a shard's map once per batch and publish it atomically.
package shard
