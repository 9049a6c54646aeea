// The raft connection's opening exchange (wire generation 3): the
// preamble and its acknowledgement, which carries the acceptor's hello,
// mutual TLS when configured, then the dialer's hello and proof and the
// acceptor's verdict and proof. Two round trips, three with TLS.
//
//	dialer   -> acceptor  Preamble "RNSRAFT3"
//	acceptor -> dialer    PreambleAck "RNSOK3", flags (1 byte: 1 secret, 2 TLS),
//	                      nonce (32 bytes), id (2-byte length, bytes)
//	                      [TLS handshake, both sides presenting certificates]
//	dialer   -> acceptor  nonce, id, proof (32 bytes, with a secret)
//	acceptor -> dialer    status (1 byte, 0 accepted), proof (with a secret and status 0)
//
// A proof is HMAC-SHA256 under the secret over a label naming the side
// ("dialer"/"acceptor"), both nonces and both ids: each side proves it
// knows the secret over the other side's fresh nonce, so a recorded
// exchange does not replay and one side's proof does not pass as the
// other's. The dialer proves first, so a stranger gets no proof to study.
// The acceptor checks the source address before it answers anything.
//
// The flags are sent in the clear and are not trusted: each side requires
// what it is configured with, so flipping them only fails the exchange.
// The dialer waits for the acknowledgement before sending anything else: a
// listener that sniffed the preamble may be taking the connection off its
// poller (the remoting Sniffer contract).

package raftnode

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Preamble opens every raft connection. A listener shared with the
// RocketMQ remoting protocol matches it to hand the connection to
// StreamLayer.Handoff. Its first byte can never start a remoting frame (a
// 4-byte big-endian length capped at 16 MiB, so 0x00 or 0x01) nor a TLS
// record (0x16): 'R' is 0x52. The digit is the raft wire generation, bumped
// whenever the exchange changes (2 added PreambleAck, 3 the hello, the
// secret's proofs and TLS): a peer of another generation is refused at the
// first bytes.
const Preamble = "RNSRAFT3"

// PreambleAck is what the accepting side writes once it has read the
// preamble from an allowed address, followed by one byte of flags; the
// dialer sends nothing else before it has read them.
const PreambleAck = "RNSOK3"

// Flags of the acknowledgement: what the acceptor requires.
const (
	flagSecret byte = 1
	flagTLS    byte = 2
)

// Status byte of the acceptor's last message.
const (
	statusOK        byte = 0
	statusNotMember byte = 1
	statusBadProof  byte = 2
)

const (
	nonceLen = 32
	proofLen = sha256.Size
	// maxIDLen bounds an id in the hello; a jRaft id is host:port.
	maxIDLen = 1024
	// MinSecretLen is the shortest shared secret accepted.
	MinSecretLen = 16
)

// PreambleTimeout bounds the whole opening exchange of an accepted
// connection (preamble, TLS, hello, proofs): one that takes longer is
// dropped, and its place in the caps freed. A member dialing waits only as
// long as raft's RPC timeout (2 s by default), so this bounds what a silent
// or slow connection holds, with room for a starved machine; a dialer
// waits as long when raft gives it no timeout.
const PreambleTimeout = 10 * time.Second

// PeerTLS is the material of mutual TLS between raft peers. Each node
// presents one certificate both when it dials and when it accepts, and
// requires the other side's to chain to Roots and to name a member's host
// (the dialed host, for the acceptor's): DNS or IP subject alternative
// names, as for any TLS server. Both are called per handshake, so reloaded
// files apply to new connections.
type PeerTLS struct {
	Certificate func() (*tls.Certificate, error)
	Roots       func() *x509.CertPool
}

var (
	errNoPreamble   = errors.New("connection did not start with the raft preamble")
	errBadAck       = errors.New("peer did not acknowledge the raft preamble")
	errModeMismatch = errors.New("raft peers disagree on authentication")
	errNotMember    = errors.New("not a member of the raft group")
	errBadProof     = errors.New("raft peer did not prove the cluster secret")
	errRefused      = errors.New("raft peer refused the connection")
)

// flags is what this layer requires.
func (s *StreamLayer) flags() byte {
	var f byte
	if len(s.secret) > 0 {
		f |= flagSecret
	}
	if s.tls != nil {
		f |= flagTLS
	}
	return f
}

// describeFlags names a flags byte for an operator.
func describeFlags(f byte) string {
	switch f {
	case 0:
		return "no authentication"
	case flagSecret:
		return "the cluster secret"
	case flagTLS:
		return "mutual TLS"
	case flagSecret | flagTLS:
		return "mutual TLS and the cluster secret"
	}
	return fmt.Sprintf("flags %#x", f)
}

// hello is one side's nonce and id.
type hello struct {
	nonce [nonceLen]byte
	id    string
}

func newHello(id string) (hello, error) {
	h := hello{id: id}
	if _, err := rand.Read(h.nonce[:]); err != nil {
		return h, fmt.Errorf("raft hello nonce: %w", err)
	}
	return h, nil
}

func writeHello(w io.Writer, h hello) error {
	if len(h.id) > maxIDLen {
		return fmt.Errorf("raft id of %d bytes is too long", len(h.id))
	}
	b := make([]byte, 0, nonceLen+2+len(h.id))
	b = append(b, h.nonce[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.id)))
	b = append(b, h.id...)
	_, err := w.Write(b)
	return err
}

func readHello(r io.Reader) (hello, error) {
	var h hello
	var head [nonceLen + 2]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return h, fmt.Errorf("read raft hello: %w", err)
	}
	copy(h.nonce[:], head[:nonceLen])
	n := int(binary.BigEndian.Uint16(head[nonceLen:]))
	if n > maxIDLen {
		return h, fmt.Errorf("raft hello: id of %d bytes", n)
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(r, id); err != nil {
		return h, fmt.Errorf("read raft hello: %w", err)
	}
	h.id = string(id)
	return h, nil
}

// proof is one side's HMAC over the exchange.
func proof(secret []byte, side string, dialer, acceptor hello) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rocketns raft3 " + side + "\x00"))
	m.Write(dialer.nonce[:])
	m.Write(acceptor.nonce[:])
	var n [2]byte
	for _, id := range []string{dialer.id, acceptor.id} {
		binary.BigEndian.PutUint16(n[:], uint16(len(id)))
		m.Write(n[:])
		m.Write([]byte(id))
	}
	return m.Sum(nil)
}

// readPreamble reads and checks the preamble, failing as soon as a byte
// differs.
func readPreamble(c net.Conn) error {
	var buf [len(Preamble)]byte
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if n > 0 && string(buf[:n]) != Preamble[:n] {
			return fmt.Errorf("%w: got %q", errNoPreamble, buf[:n])
		}
		if err != nil {
			return fmt.Errorf("read raft preamble: %w", err)
		}
	}
	return nil
}

// accepted is the outcome of an acceptor's exchange.
type accepted struct {
	conn net.Conn // c, or the TLS connection over it
	peer string   // the dialer's id
}

// acceptHandshake runs the acceptor's side over c (whose source address
// was checked) within the layer's handshake timeout.
func (s *StreamLayer) acceptHandshake(c net.Conn) (accepted, error) {
	c.SetDeadline(time.Now().Add(s.handshakeTimeout))
	if err := readPreamble(c); err != nil {
		return accepted{}, err
	}
	ours, err := newHello(s.selfID())
	if err != nil {
		return accepted{}, err
	}
	var ack bytes.Buffer
	ack.WriteString(PreambleAck)
	ack.WriteByte(s.flags())
	if err := writeHello(&ack, ours); err != nil {
		return accepted{}, err
	}
	if _, err := c.Write(ack.Bytes()); err != nil {
		return accepted{}, fmt.Errorf("write raft preamble acknowledgement: %w", err)
	}
	conn := c
	if s.tls != nil {
		tc := tls.Server(c, s.serverTLS())
		if err := tc.Handshake(); err != nil {
			return accepted{}, fmt.Errorf("raft TLS handshake: %w", err)
		}
		conn = tc
	}
	theirs, err := readHello(conn)
	if err != nil {
		return accepted{}, err
	}
	status, refusal := statusOK, error(nil)
	if len(s.secret) > 0 {
		var got [proofLen]byte
		if _, err := io.ReadFull(conn, got[:]); err != nil {
			return accepted{}, fmt.Errorf("read raft proof: %w", err)
		}
		if !hmac.Equal(got[:], proof(s.secret, "dialer", theirs, ours)) {
			status, refusal = statusBadProof, errBadProof
		}
	}
	if status == statusOK && !s.peers.allowID(theirs.id) {
		status, refusal = statusNotMember, fmt.Errorf("%w: id %q", errNotMember, theirs.id)
	}
	reply := []byte{status}
	if status == statusOK && len(s.secret) > 0 {
		reply = append(reply, proof(s.secret, "acceptor", theirs, ours)...)
	}
	if _, err := conn.Write(reply); err != nil && refusal == nil {
		return accepted{}, fmt.Errorf("write raft handshake status: %w", err)
	}
	if refusal != nil {
		return accepted{peer: theirs.id}, refusal
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return accepted{}, err
	}
	return accepted{conn: conn, peer: theirs.id}, nil
}

// dialHandshake runs the dialer's side over c, connected to address,
// before deadline. It returns the connection raft uses and the acceptor's
// id.
func (s *StreamLayer) dialHandshake(c net.Conn, address string, deadline time.Time) (net.Conn, string, error) {
	c.SetDeadline(deadline)
	if _, err := c.Write([]byte(Preamble)); err != nil {
		return nil, "", fmt.Errorf("send raft preamble: %w", err)
	}
	var ack [len(PreambleAck) + 1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return nil, "", fmt.Errorf("read raft preamble acknowledgement: %w", err)
	}
	if string(ack[:len(PreambleAck)]) != PreambleAck {
		return nil, "", fmt.Errorf("%w: got %q", errBadAck, ack[:])
	}
	if theirs, ours := ack[len(PreambleAck)], s.flags(); theirs != ours {
		return nil, "", fmt.Errorf("%w: the peer requires %s, this node %s", errModeMismatch, describeFlags(theirs), describeFlags(ours))
	}
	theirs, err := readHello(c)
	if err != nil {
		return nil, "", err
	}
	conn := c
	if s.tls != nil {
		host, _, _ := net.SplitHostPort(address)
		tc := tls.Client(c, s.clientTLS(host))
		if err := tc.Handshake(); err != nil {
			return nil, "", fmt.Errorf("raft TLS handshake: %w", err)
		}
		conn = tc
	}
	ours, err := newHello(s.selfID())
	if err != nil {
		return nil, "", err
	}
	var msg bytes.Buffer
	if err := writeHello(&msg, ours); err != nil {
		return nil, "", err
	}
	if len(s.secret) > 0 {
		msg.Write(proof(s.secret, "dialer", ours, theirs))
	}
	if _, err := conn.Write(msg.Bytes()); err != nil {
		return nil, "", fmt.Errorf("send raft hello: %w", err)
	}
	var status [1]byte
	if _, err := io.ReadFull(conn, status[:]); err != nil {
		return nil, "", fmt.Errorf("read raft handshake status: %w", err)
	}
	switch status[0] {
	case statusOK:
	case statusBadProof:
		return nil, "", fmt.Errorf("%w: it does not share this node's cluster secret", errRefused)
	case statusNotMember:
		return nil, "", fmt.Errorf("%w: this node (%s) is not in its membership", errRefused, s.selfID())
	default:
		return nil, "", fmt.Errorf("%w: status %d", errRefused, status[0])
	}
	if len(s.secret) > 0 {
		var got [proofLen]byte
		if _, err := io.ReadFull(conn, got[:]); err != nil {
			return nil, "", fmt.Errorf("read raft proof: %w", err)
		}
		if !hmac.Equal(got[:], proof(s.secret, "acceptor", ours, theirs)) {
			return nil, "", errBadProof
		}
	}
	if !s.peers.allowID(theirs.id) {
		return nil, "", fmt.Errorf("%w: %s answered as %q", errNotMember, address, theirs.id)
	}
	if want := s.peers.idForAddr(address); want != "" && want != theirs.id {
		return nil, "", fmt.Errorf("%w: %s answered as %q, the membership names %q there", errNotMember, address, theirs.id, want)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return nil, "", err
	}
	return conn, theirs.id, nil
}

// serverTLS is the acceptor's TLS configuration: this node's certificate,
// a client certificate required and checked by verifyPeer against every
// member host.
func (s *StreamLayer) serverTLS() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.tls.Certificate()
		},
		ClientAuth: tls.RequireAnyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyPeer(cs, s.tls.Roots(), s.peers.hosts())
		},
	}
}

// clientTLS is the dialer's: the server's certificate must name host.
// crypto/tls's own verification is replaced by verifyPeer, which accepts
// any extended key usage so that one certificate serves both sides.
func (s *StreamLayer) clientTLS(host string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ServerName: host,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return s.tls.Certificate()
		},
		InsecureSkipVerify: true, // verifyPeer below does it
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyPeer(cs, s.tls.Roots(), []string{host})
		},
	}
}

// verifyPeer checks the peer's chain against roots and that its leaf names
// one of hosts.
func verifyPeer(cs tls.ConnectionState, roots *x509.CertPool, hosts []string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("raft peer sent no certificate")
	}
	if roots == nil {
		return errors.New("no trusted roots for raft peers")
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("raft peer certificate: %w", err)
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) == nil {
			return nil
		}
	}
	return fmt.Errorf("raft peer certificate (subject %q) names none of the members' hosts %v", leaf.Subject.String(), hosts)
}
