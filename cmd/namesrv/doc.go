// Command namesrv runs a RocketMQ NameServer: command line and config file
// handling, logging setup, start, and shutdown on SIGTERM/SIGINT.
package main
