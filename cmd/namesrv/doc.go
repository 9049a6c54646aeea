// Command namesrv runs a RocketMQ NameServer (namesrv -c namesrv.properties,
// as Java's mqnamesrv), with a 5.x controller node beside it when the file
// sets enableControllerInNamesrv=true, or a standalone controller node
// (namesrv controller -c controller.conf, as Java's mqcontroller): command
// line and config file handling, logging setup, start, and shutdown on
// SIGTERM/SIGINT/SIGHUP.
package main
