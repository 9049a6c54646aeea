// tlstest.go holds CA and the certificates and keys it issues.

package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made in the test.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte
}

// NewCA makes a self-signed CA called name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := NewKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// NewKey makes a P-256 key.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Pool is a pool trusting only ca.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue signs a leaf for 127.0.0.1 for key (a new one when nil), for server
// or, with client, client authentication, and returns the PEM certificate,
// the PEM (PKCS #8) key and the key.
func (ca *CA) Issue(t testing.TB, serial int64, client bool, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, _ *ecdsa.PrivateKey) {
	t.Helper()
	if key == nil {
		key = NewKey(t)
	}
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "rocketns-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), key
}

// Pair issues a leaf as Issue does and returns it ready for a tls.Config.
func (ca *CA) Pair(t testing.TB, serial int64, client bool) tls.Certificate {
	t.Helper()
	c, k, _ := ca.Issue(t, serial, client, nil)
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// WriteAtomic replaces path's content in one rename, as a certificate
// rotation tool does.
func WriteAtomic(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Files are a server certificate, its key and a trust file (the CA's) in
// a directory of the test's.
type Files struct {
	Dir, Cert, Key, Trust string
}

// Files writes a server leaf of ca with serial, its key and ca's
// certificate as the trust file.
func (ca *CA) Files(t testing.TB, serial int64) Files {
	t.Helper()
	dir := t.TempDir()
	f := Files{Dir: dir, Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server.key"), Trust: filepath.Join(dir, "ca.pem")}
	c, k, _ := ca.Issue(t, serial, false, nil)
	WriteAtomic(t, f.Cert, c)
	WriteAtomic(t, f.Key, k)
	WriteAtomic(t, f.Trust, ca.PEM)
	return f
}
