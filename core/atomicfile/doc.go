// Package atomicfile replaces small files (the KV store, the persisted
// config) so that a crash at any moment leaves either the old or the new
// content on disk, never a torn file, and keeps the previous content in
// <path>.bak as the Java NameServer does.
package atomicfile
