// Package properties reads and writes the java.util.Properties text
// format: the NameServer's and the controller's configuration files and
// the bodies of the config update and query codes (318/319, 1009/1010).
package properties
