// Package config holds the NameServer's and the controller's configuration:
// one table of every key (table.go: the Java names and defaults of
// NamesrvConfig, NettyServerConfig, ControllerConfig and JraftConfig, and
// rocketns's own, with their types, ranges, roles and documentation), and
// the rules it drives for applying, checking, printing and updating the
// settings at run time; codec/properties reads and writes the text itself.
package config
