// Command nsadmin administers RocketMQ NameServers (rocketns or Java) with
// mqadmin's subcommand and flag names: argument parsing, help, fan-out over
// the -n address list and exit codes.
package main
