// Package controllertest loads the exchanges recorded with a Java 5.3.3
// controller (core/controller/testdata/vectors) for the tests that replay
// them, at the level of the decisions or over the wire.
//
// Script turns the files into the requests to send in order, each with its
// recorded reply; Compare tells how a reply differs from the recorded one,
// after leaving out what varies between runs (opaque, version).
package controllertest
