// Package routetest holds the models the route table's tests compare it
// with: the simulated cluster of the chaos suites (Layout, Model), and Java,
// the route rules of the Java 5.3.3 NameServer with a switch for each place
// rocketns differs on purpose, which the randomized differential suites of
// core/route (in process) and core/server (over the wire) run against.
//
// It does not import core/route: core/route's own tests import it.
package routetest
