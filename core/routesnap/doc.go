// Package routesnap is the route snapshot file a NameServer writes in the
// background and loads at start for a warm restart: a versioned header
// (magic, format version, the time it was taken, the payload's length and
// CRC-32C) and a compact binary encoding of a route.Snapshot. A file that
// is stale, corrupt, truncated or of another format version is reported
// by Load as such, never half-read. The same bytes answer
// ROCKETNS_GET_ROUTE_SNAPSHOT, a peer's copy of the table, and Decode
// checks them the same way.
package routesnap
