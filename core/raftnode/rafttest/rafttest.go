// Package rafttest plays a raft peer's side of a connection by hand, for
// tests that attack a node's raft transport from outside the package: dial
// from any source address, claim any id, prove a cluster secret or only
// guess it, then send hashicorp/raft's own msgpack RPCs through its
// NetworkTransport, exactly as a member would.
//
// It implements the dialer's opening exchange independently of raftnode
// (only the preamble and acknowledgement constants are shared), so a test
// through it also checks the wire as documented in raftnode.
package rafttest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketns/rocketns/core/raftnode"
)

// ErrRefused is a dial the acceptor refused with a status.
var ErrRefused = errors.New("raft connection refused")

// Dialer opens raft connections as a peer would, with the identity and
// knowledge a test gives it.
type Dialer struct {
	// Source is the local address to dial from ("": the system's choice);
	// loopback tests use other 127.x addresses to play strangers.
	Source string
	// ID is the id claimed in the hello.
	ID string
	// Secret is proven when set; when nil and the acceptor wants a proof,
	// a guess of zeros is sent.
	Secret []byte
}

// Dial connects to addr and plays the dialer's exchange; the connection
// returned carries raft RPCs next.
func (d Dialer) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	nd := net.Dialer{Timeout: timeout}
	if d.Source != "" {
		nd.LocalAddr = &net.TCPAddr{IP: net.ParseIP(d.Source)}
	}
	c, err := nd.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := d.exchange(c, timeout); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// hello is a nonce and an id as the wire carries them.
type hello struct {
	nonce [32]byte
	id    string
}

func (h hello) append(b []byte) []byte {
	b = append(b, h.nonce[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.id)))
	return append(b, h.id...)
}

func readHello(r io.Reader) (hello, error) {
	var h hello
	var head [34]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return h, err
	}
	copy(h.nonce[:], head[:32])
	id := make([]byte, binary.BigEndian.Uint16(head[32:]))
	if _, err := io.ReadFull(r, id); err != nil {
		return h, err
	}
	h.id = string(id)
	return h, nil
}

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

// exchange plays the dialer's side (without TLS): the preamble, the
// acknowledgement with the acceptor's hello, the hello and proof, the
// status and the acceptor's proof.
func (d Dialer) exchange(c net.Conn, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(raftnode.Preamble)); err != nil {
		return err
	}
	ack := make([]byte, len(raftnode.PreambleAck)+1)
	if _, err := io.ReadFull(c, ack); err != nil {
		return fmt.Errorf("acknowledgement: %w", err)
	}
	if string(ack[:len(raftnode.PreambleAck)]) != raftnode.PreambleAck {
		return fmt.Errorf("acknowledgement %q", ack)
	}
	wantsSecret := ack[len(raftnode.PreambleAck)]&1 != 0
	if ack[len(raftnode.PreambleAck)]&2 != 0 {
		return errors.New("the acceptor wants TLS")
	}
	theirs, err := readHello(c)
	if err != nil {
		return fmt.Errorf("acceptor's hello: %w", err)
	}
	ours := hello{id: d.ID}
	rand.Read(ours.nonce[:])
	msg := ours.append(nil)
	switch {
	case d.Secret != nil:
		msg = append(msg, proof(d.Secret, "dialer", ours, theirs)...)
	case wantsSecret:
		msg = append(msg, make([]byte, sha256.Size)...)
	}
	if _, err := c.Write(msg); err != nil {
		return err
	}
	st := make([]byte, 1)
	if _, err := io.ReadFull(c, st); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if st[0] != 0 {
		return fmt.Errorf("%w: status %d", ErrRefused, st[0])
	}
	if wantsSecret {
		got := make([]byte, sha256.Size)
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if d.Secret == nil || !bytes.Equal(got, proof(d.Secret, "acceptor", ours, theirs)) {
			return errors.New("the acceptor did not prove the secret")
		}
	}
	return nil
}

// stream is a raft.StreamLayer that only dials, as d.
type stream struct {
	d      Dialer
	closed chan struct{}
}

func (s *stream) Accept() (net.Conn, error) { <-s.closed; return nil, net.ErrClosed }
func (s *stream) Close() error              { return nil }
func (s *stream) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 66), Port: 1} }
func (s *stream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.d.Dial(string(addr), timeout)
}

// Transport is a NetworkTransport dialing as d, without a pool (each RPC on
// a connection of its own), closed when the test ends.
func (d Dialer) Transport(t testing.TB) *raft.NetworkTransport {
	s := &stream{d: d, closed: make(chan struct{})}
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: s, MaxPool: 0, Timeout: 5 * time.Second,
		Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { tr.Close(); close(s.closed) })
	return tr
}

// Header is an RPC header claiming id at addr.
func Header(id, addr string) raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte(addr)}
}
