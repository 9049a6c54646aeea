// Package jsontext holds the JSON string primitives the header and body
// codecs share, byte for byte as fastjson 1.2.83 writes and reads them:
// quoting in its default and BrowserCompatible forms, the quoted length,
// re-escaping, unescaping, and hex digits.
//
// Java writes a header and a body with the same fastjson encoder, so one
// writer serves both: what the two forms escape is decided here once.
// Strings reach Java as UTF-16 decoded from the peer's UTF-8, so bytes that
// are not UTF-8 are written as U+FFFD, one per byte (Java's decoder may
// fold a broken multi-byte sequence into one).
package jsontext
