// Package codectest loads the recorded Java NameServer exchanges kept in
// codec/testdata/vectors, for the tests of every package.
package codectest
