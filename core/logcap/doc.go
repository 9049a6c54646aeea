// Package logcap bounds what a peer can make the log cost: every string a
// record carries is capped, a line repeated faster than a set rate is
// counted instead of written and summarised as "suppressed N", and chosen
// records, even below the log level, can be counted (Counting).
package logcap
