// Command nsbench is the NameServer load generator: it drives any
// NameServer on a loopback address (rocketns or Java's) or one started in
// process, and prints a table or JSON.
package main
