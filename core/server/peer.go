// peer.go holds the route snapshot's peer copy: the answer to
// ROCKETNS_GET_ROUTE_SNAPSHOT, and a cold server's copy of another
// NameServer's table before its port opens.

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/remoting"
	"github.com/rocketns/rocketns/core/route"
	"github.com/rocketns/rocketns/core/routesnap"
)

// peerPrefix starts WarmStart.From for a table copied from another
// NameServer, "peer host:port", where a local one names its file.
const peerPrefix = "peer "

// handleRouteSnapshot answers ROCKETNS_GET_ROUTE_SNAPSHOT with the route
// table in the snapshot file's format (header, checksum, payload), for a
// peer's warm start. A heavy request: the export holds the writers' lock
// only as long as a background snapshot does, and the encoding grows with
// the table. A table whose encoding does not fit one frame is refused
// with the reason: the peer would refuse the frame and close the
// connection, an answer it cannot read.
func (s *Server) handleRouteSnapshot(c *remoting.Conn, req, resp *codec.Command) error {
	snap, _ := s.routes.Export()
	b := routesnap.Encode(snap)
	if limit := s.maxFrame() - topicListHeadroom; len(b) > limit {
		return refuse(codec.SystemError, fmt.Sprintf("the route table (%d brokers, %d topics, %d bytes encoded) does not fit a %d-byte frame (frameMaxLength); "+
			"raise frameMaxLength on both servers, or let the new server start cold", len(snap.Brokers), len(snap.Topics), len(b), s.maxFrame()))
	}
	s.log.Info("route table copied by a peer", "peer", c.Peer(), "bytes", len(b),
		"brokers", len(snap.Brokers), "topics", len(snap.Topics))
	resp.Body = b
	return nil
}

// copyFromPeers restores the table from the first peer that answers a
// usable, non-empty one; it returns false, with each peer's failure, when
// none did. Every peer gets at most routeSnapshotPeerTimeoutMs, from the
// dial to the last byte.
//
// Each broker keeps the age it had at the peer (route.RestoreAged), not
// the copy's time as a local snapshot's brokers do: the peer kept running
// until it answered, so a broker it had not heard from for 100 s is a
// broker that may be gone, and it expires here when it would have there,
// rather than living another full timeout. A restarted server's own file
// is different: nothing heard from any broker while it was down, so
// each counts from the snapshot's time, as the brokers' next
// registration will confirm or not.
func (s *Server) copyFromPeers(peers []string) (ok bool, failures []string) {
	cfg := s.cfg
	timeout := time.Duration(cfg.RouteSnapshotPeerTimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	var creds *client.Credentials
	switch acct, signed, err := cfg.SnapshotPeerAccount(); {
	case err != nil:
		return false, []string{err.Error()}
	case signed:
		creds = &client.Credentials{AccessKey: acct.AccessKey, SecretKey: acct.SecretKey,
			Strict: acct.Strict || cfg.ACLStrictSignature}
	}
	w := &s.warm
	for _, addr := range peers {
		begun := time.Now()
		snap, h, err := fetchSnapshot(addr, timeout, creds, s.maxFrame())
		if err == nil && len(snap.Brokers) == 0 && len(snap.Topics) == 0 {
			err = errors.New("its route table is empty")
		}
		if err == nil {
			err = s.routes.RestoreAged(snap)
		}
		if err != nil {
			failures = append(failures, addr+": "+err.Error())
			continue
		}
		w.start = WarmStart{Warm: true, From: peerPrefix + addr, TakenAt: time.UnixMilli(h.TakenAt),
			Brokers: len(snap.Brokers), Topics: len(snap.Topics)}
		// w.wrote stays false: the first background write saves the
		// copy, so a restart after it is warm from its own file.
		attrs := []any{"peer", addr, "taken", w.start.TakenAt.UTC().Format(time.RFC3339Nano),
			"brokers", w.start.Brokers, "topics", w.start.Topics, "entries", snap.Entries(),
			"copy_time", time.Since(begun).Round(time.Microsecond)}
		if len(failures) > 0 {
			attrs = append(attrs, "peers_failed", strings.Join(failures, "; "))
		}
		w.logStart = func() { s.log.Info("starting warm: route table copied from a peer", attrs...) }
		return true, nil
	}
	return false, failures
}

// fetchSnapshot asks the NameServer at addr for its route table, signed
// with creds when set, and decodes the answer. It speaks one request over
// its own connection: the answer's frame is bounded by this server's
// frameMaxLength, not the client library's default, and a peer that
// answers something else than one response frame to the request is an
// error like any other.
func fetchSnapshot(addr string, timeout time.Duration, creds *client.Credentials, maxFrame int) (*route.Snapshot, routesnap.Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, routesnap.Header{}, err
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	if err := conn.SetDeadline(dl); err != nil {
		return nil, routesnap.Header{}, err
	}
	req := &codec.Command{Code: codec.GetRouteSnapshot, Opaque: 1, Language: codec.LanguageGo,
		Version: codec.ServerVersion, HasExt: true}
	if creds != nil {
		creds.Sign(req)
	}
	frame, err := codec.EncodeFrame(nil, req)
	if err != nil {
		return nil, routesnap.Header{}, err
	}
	if _, err := conn.Write(frame); err != nil {
		return nil, routesnap.Header{}, fmt.Errorf("send the request: %w", err)
	}
	var prefix [4]byte
	if _, err := io.ReadFull(conn, prefix[:]); err != nil {
		return nil, routesnap.Header{}, fmt.Errorf("read the answer: %w", err)
	}
	n, err := codec.FrameLength(prefix[:], maxFrame)
	if err != nil {
		return nil, routesnap.Header{}, fmt.Errorf("the answer: %w", err)
	}
	frame = make([]byte, n)
	if _, err := io.ReadFull(conn, frame); err != nil {
		return nil, routesnap.Header{}, fmt.Errorf("read the answer: %w", err)
	}
	var resp codec.Command
	if err := codec.Decode(frame, &resp); err != nil {
		return nil, routesnap.Header{}, fmt.Errorf("the answer: %w", err)
	}
	switch {
	case resp.Flag&codec.FlagResponse == 0 || resp.Opaque != req.Opaque:
		return nil, routesnap.Header{}, errors.New("the answer is not the response to the request")
	case resp.Code == codec.RequestCodeNotSupported:
		return nil, routesnap.Header{}, fmt.Errorf("not a rocketns NameServer, or an older one (code %d %q)", resp.Code, shortRemark(resp.Remark))
	case resp.Code != codec.Success:
		return nil, routesnap.Header{}, fmt.Errorf("refused: code %d %q", resp.Code, shortRemark(resp.Remark))
	}
	return routesnap.Decode(resp.Body)
}

// shortRemark is at most a line of a peer's remark: it reaches the status
// page and the log.
func shortRemark(r string) string {
	const max = 300
	if len(r) > max {
		r = strings.ToValidUTF8(r[:max], "") + "..."
	}
	return r
}
