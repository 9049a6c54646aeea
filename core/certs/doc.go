// Package certs holds a listener's TLS certificate material: loading it
// from the configured files (or generating test mode's self-signed
// certificate), and reloading it when the files change. Serving TLS
// connections is core/remoting's.
package certs
