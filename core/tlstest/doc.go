// Package tlstest makes certificate authorities and certificates for tests
// of the TLS paths (the listener's modes, the material's reloads, the
// client's dial, nsadmin's flags): ECDSA P-256, valid from an hour ago for
// a day, leaves for 127.0.0.1. Nothing touches disk unless a test asks for
// files (CA.Files) or writes the PEM itself.
package tlstest
