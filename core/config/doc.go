// Package config holds the NameServer's configuration: the Java key names and
// defaults (NamesrvConfig + NettyServerConfig), and the rules for applying
// and printing it; codec/properties reads and writes the text itself.
package config
