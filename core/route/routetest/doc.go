// Package routetest is a test helper shared by the chaos suites of core/route
// (the table on a fake clock) and core/server (the same cluster over the
// wire): the simulated cluster layout and a plain model of what the route
// table must hold, so both suites demand the very same bytes.
//
// It does not import core/route: core/route's own tests import it.
package routetest
