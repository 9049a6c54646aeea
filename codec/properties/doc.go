// Package properties reads and writes the java.util.Properties text
// format: the NameServer's and the controller's configuration files and
// the bodies of the config update and query codes (318/319, 1009/1010).
//
// Parse reads a text into its key/value pairs and Append writes pairs back.
// Document keeps a text byte for byte so that a key can be changed where it
// is written, as a person editing the file would, without losing its
// comments, blank lines, continuations or order.
package properties
