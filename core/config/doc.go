// Package config holds the NameServer's and the controller's configuration:
// the Java key names and defaults (NamesrvConfig, NettyServerConfig,
// ControllerConfig, JraftConfig), and the rules for applying, printing and
// updating it at run time; codec/properties reads and writes the text
// itself.
package config
