// Package loadgen drives a NameServer (rocketns or Java's) with route
// queries, registration storms, broker loss and big registrations, and
// measures it against a limit server that does no lookup at all.
package loadgen
