// trust_test.go drives the attacks on broker trust over real connections:
// registering over a broker from outside the allowlist, taking over a
// broker's group with other credentials, binding broker accounts, and
// replaying a signed request as another code.

package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/route"
)

// dialFrom connects to addr from the loopback address local, so that one
// test has peers inside and outside an allowlist.
func dialFrom(t *testing.T, local, addr string) *remotingtest.Wire {
	t.Helper()
	d := net.Dialer{Timeout: remotingtest.Hang, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return remotingtest.Over(t, nc)
}

// trustReg is a REGISTER_BROKER of name id at addr whose topics T1 and T2
// have perm, with DataVersion counter.
func trustReg(t *testing.T, name, addr string, id int64, perm int32, counter int64) *codec.Command {
	t.Helper()
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: counter, Timestamp: 1700000000000 + counter}}
	for _, tp := range []string{"T1", "T2"} {
		rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: tp, ReadQueueNums: 4, WriteQueueNums: 4, Perm: perm, TopicFilterType: "SINGLE_TAG"})
	}
	b, err := body.EncodeRegisterBroker(rb, false, 479)
	if err != nil {
		t.Fatal(err)
	}
	req := request(codec.RegisterBroker, 1, "brokerName", name, "brokerAddr", addr, "clusterName", "c1",
		"haServerAddr", "", "brokerId", "0", "enableActingMaster", "false", "compressed", "false", "bodyCrc32", "0")
	if id != 0 {
		req.SetExt("brokerId", "1")
	}
	req.Body = b
	return req
}

// brokerOf returns broker name's id-0 address and T1's perm on it.
func brokerOf(t *testing.T, s *Server, name string) (addr string, perm int) {
	t.Helper()
	r, ok := s.Routes().Route("T1")
	if !ok {
		return "", -1
	}
	for _, bd := range r.BrokerDatas {
		if bd.BrokerName == name {
			for _, a := range bd.Addrs {
				if a.ID == 0 {
					addr = a.Addr
				}
			}
		}
	}
	for _, q := range r.QueueDatas {
		if q.BrokerName == name {
			perm = int(q.Perm)
		}
	}
	return addr, perm
}

func wantCode(t *testing.T, what string, resp *codec.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("%s: code %d %q, want %d", what, resp.Code, resp.Remark, code)
	}
}

// closeAndWait closes w and waits until the server dropped what the
// connection registered.
func closeAndWait(t *testing.T, w *remotingtest.Wire, closed <-chan route.ConnID) {
	t.Helper()
	w.NC.Close()
	select {
	case <-closed:
	case <-time.After(remotingtest.Hang):
		t.Fatal("the close was not seen")
	}
}

func closedHook(ch chan route.ConnID) func(*Server) {
	return func(s *Server) { s.hooks.connClosed = func(id route.ConnID) { ch <- id } }
}

// With adminAllowCIDRs set, a peer outside it can no longer reach the
// broker codes: it cannot wipe a broker's write permission by registering
// over it, send clients to its own address, or remove the broker by
// closing the connection it registered over.
func TestAllowlistGuardsBrokerCodes(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminAllowCIDRs = "127.0.0.2"
	closed := make(chan route.ConnID, 4)
	s, _ := startHooked(t, cfg, closedHook(closed))
	inside := dialFrom(t, "127.0.0.2", s.Addr())
	wantCode(t, "real broker", inside.Call(trustReg(t, "broker-a", "127.0.0.2:10911", 0, 6, 1)), codec.Success)

	outside := dialFrom(t, "127.0.0.1", s.Addr())
	resp := outside.Call(trustReg(t, "broker-a", "127.0.0.2:10911", 0, 4, 2))
	wantCode(t, "perm 4 from outside", resp, codec.NoPermission)
	wantCode(t, "id 0 elsewhere from outside", outside.Call(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 6, 3)), codec.NoPermission)
	for _, req := range []*codec.Command{
		request(codec.QueryDataVersion, 2, "brokerName", "broker-a", "brokerAddr", "127.0.0.2:10911", "clusterName", "c1", "brokerId", "0"),
		request(codec.BrokerHeartbeat, 3, "brokerName", "broker-a", "brokerAddr", "127.0.0.2:10911", "clusterName", "c1"),
		request(codec.UnregisterBroker, 4, "brokerName", "broker-a", "brokerAddr", "127.0.0.2:10911", "clusterName", "c1", "brokerId", "0"),
	} {
		wantCode(t, codec.RequestCodeName(req.Code)+" from outside", outside.Call(req), codec.NoPermission)
	}
	closeAndWait(t, outside, closed)
	if addr, perm := brokerOf(t, s, "broker-a"); addr != "127.0.0.2:10911" || perm != 6 {
		t.Fatalf("broker-a after the attacks: %q perm %d", addr, perm)
	}
	// Inside, the broker's own reports go on.
	wantCode(t, "322 inside", inside.Call(request(codec.QueryDataVersion, 5, "brokerName", "broker-a",
		"brokerAddr", "127.0.0.2:10911", "clusterName", "c1", "brokerId", "0")), codec.Success)

	// brokerAllowCIDRs of its own: brokers from there, admins from theirs.
	cfg = testConfig(t)
	cfg.AdminAllowCIDRs = "127.0.0.2"
	cfg.BrokerAllowCIDRs = "127.0.0.3"
	s, _ = startServer(t, cfg)
	wantCode(t, "broker network", dialFrom(t, "127.0.0.3", s.Addr()).Call(trustReg(t, "broker-a", "127.0.0.3:10911", 0, 6, 1)), codec.Success)
	wantCode(t, "admin network", dialFrom(t, "127.0.0.2", s.Addr()).Call(trustReg(t, "broker-b", "127.0.0.2:10911", 0, 6, 1)), codec.Success)
	wantCode(t, "elsewhere", dialFrom(t, "127.0.0.1", s.Addr()).Call(trustReg(t, "broker-c", "127.0.0.1:10911", 0, 6, 1)), codec.NoPermission)
	wipe := request(codec.WipeWritePermOfBroker, 2, "brokerName", "broker-a")
	wantCode(t, "205 from the broker network", dialFrom(t, "127.0.0.3", s.Addr()).Call(wipe), codec.NoPermission)
}

const trustACL = `admin-key:admin-secret:admin
broker-key:broker-secret:broker
broker-a-key:broker-a-secret:broker
broker-a-key brokers=broker-a addrs=127.0.0.0/8
broker-b-key:broker-b-secret:broker
broker-b-key brokers=broker-b
strict-key:strict-secret:admin
strict-key strict
`

func authReasonIndex(t *testing.T, name string) int {
	t.Helper()
	for i, r := range authReasons {
		if r.name == name {
			return i
		}
	}
	t.Fatalf("no auth reason %q", name)
	return 0
}

func trustConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.AuthorizationEnable = true
	cfg.ACLFile = filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(cfg.ACLFile, []byte(trustACL), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A broker registered with one account cannot be taken over by a
// registration with other credentials: another account, or none from the
// broker network. The same account over a new connection (a reconnect),
// an admin, and an account bound to the broker's name may.
func TestBrokerTakeoverNeedsTheSameCredentials(t *testing.T) {
	cfg := trustConfig(t)
	cfg.BrokerAllowCIDRs = "127.0.0.2"
	closed := make(chan route.ConnID, 8)
	s, logs := startHooked(t, cfg, closedHook(closed))
	real := dialFrom(t, "127.0.0.1", s.Addr())
	wantCode(t, "real broker", real.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 6, 1), "broker-a-key", "broker-a-secret")), codec.Success)

	thief := dialFrom(t, "127.0.0.1", s.Addr())
	resp := thief.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:9999", 0, 6, 2), "broker-key", "broker-secret"))
	wantCode(t, "another account, id 0 elsewhere", resp, codec.NoPermission)
	if want := "broker-a id 0 is registered with other credentials"; !strings.Contains(resp.Remark, want) {
		t.Fatalf("remark %q", resp.Remark)
	}
	logLine(t, logs, "request refused: not authorized", "code=103", `reason="broker registered with other credentials"`)
	wantCode(t, "another account, perm 4", thief.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 4, 3), "broker-key", "broker-secret")), codec.NoPermission)
	wantCode(t, "unsigned from the broker network", dialFrom(t, "127.0.0.2", s.Addr()).Call(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 4, 4)), codec.NoPermission)
	wantCode(t, "an account bound elsewhere", thief.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 4, 5), "broker-b-key", "broker-b-secret")), codec.NoPermission)
	wantCode(t, "a bound account, address outside", thief.Call(signedBy(trustReg(t, "broker-a", "10.0.0.1:10911", 0, 6, 6), "broker-a-key", "broker-a-secret")), codec.NoPermission)
	unreg := request(codec.UnregisterBroker, 9, "brokerName", "broker-a", "brokerAddr", "127.0.0.1:10911", "clusterName", "c1", "brokerId", "0")
	wantCode(t, "104 by another account", thief.Call(signedBy(unreg, "broker-key", "broker-secret")), codec.NoPermission)
	if n := s.metrics.authRefused[authReasonIndex(t, "takeover")].Load(); n != 4 {
		t.Fatalf("%d takeovers counted, want 4", n)
	}
	closeAndWait(t, thief, closed)
	if addr, perm := brokerOf(t, s, "broker-a"); addr != "127.0.0.1:10911" || perm != 6 {
		t.Fatalf("broker-a after the attacks: %q perm %d", addr, perm)
	}

	// The broker reconnects: same account, new connection.
	again := dialFrom(t, "127.0.0.1", s.Addr())
	wantCode(t, "reconnect", again.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 6, 7), "broker-a-key", "broker-a-secret")), codec.Success)
	// Its first connection closing now removes nothing: the newer
	// registration replaced what it made.
	closeAndWait(t, real, closed)
	if addr, _ := brokerOf(t, s, "broker-a"); addr != "127.0.0.1:10911" {
		t.Fatalf("broker-a gone with its old connection: %q", addr)
	}
	// An admin may move it, and the broker's own bound account take it
	// back and unregister it.
	wantCode(t, "admin", again.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10912", 0, 6, 8), "admin-key", "admin-secret")), codec.Success)
	wantCode(t, "bound account back", again.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 6, 9), "broker-a-key", "broker-a-secret")), codec.Success)
	wantCode(t, "104 by its account", again.Call(signedBy(unreg, "broker-a-key", "broker-a-secret")), codec.Success)
	if addr, _ := brokerOf(t, s, "broker-a"); addr != "" {
		t.Fatalf("broker-a still at %q after its own unregistration", addr)
	}

	// An unsigned broker from the broker network is not taken over by a
	// broker account either; another unsigned peer there may (nothing
	// tells them apart).
	net2 := dialFrom(t, "127.0.0.2", s.Addr())
	wantCode(t, "unsigned broker-c", net2.Call(trustReg(t, "broker-c", "127.0.0.2:10911", 0, 6, 1)), codec.Success)
	wantCode(t, "account over unsigned", dialFrom(t, "127.0.0.1", s.Addr()).Call(signedBy(trustReg(t, "broker-c", "127.0.0.2:10911", 0, 4, 2), "broker-key", "broker-secret")), codec.NoPermission)
	wantCode(t, "unsigned over unsigned", dialFrom(t, "127.0.0.2", s.Addr()).Call(trustReg(t, "broker-c", "127.0.0.2:10911", 0, 6, 3)), codec.Success)
}

// A bound broker account may register topics (217) only for its brokers.
func TestRegisterTopicBinding(t *testing.T) {
	s, _ := startServer(t, trustConfig(t))
	w := dialWire(t, s.Addr())
	topic := func(broker string) *codec.Command {
		req := request(codec.RegisterTopicInNamesrv, 1, "topic", "TX")
		req.Body = body.AppendTopicRoute(nil, &body.TopicRoute{QueueDatas: []body.QueueData{{BrokerName: broker, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}},
			BrokerDatas: []body.BrokerData{}}, body.Standard)
		return signedBy(req, "broker-a-key", "broker-a-secret")
	}
	resp := w.Call(topic("broker-b"))
	wantCode(t, "217 for another broker", resp, codec.NoPermission)
	if !strings.Contains(resp.Remark, `account "broker-a-key" is not bound to broker "broker-b"`) {
		t.Fatalf("remark %q", resp.Remark)
	}
	wantCode(t, "217 for its broker", w.Call(topic("broker-a")), codec.Success)
}

// A captured signed request replayed as another code: refused where its
// fields show it, and in the strict scheme always.
func TestSignedReplayAcrossCodes(t *testing.T) {
	s, _ := startServer(t, trustConfig(t))
	w := dialWire(t, s.Addr())
	wantCode(t, "register", w.Call(signedBy(trustReg(t, "broker-a", "127.0.0.1:10911", 0, 6, 1), "broker-a-key", "broker-a-secret")), codec.Success)
	replay := func(req *codec.Command, code int32) *codec.Command {
		c := *req
		c.Code = code
		c.Opaque++
		return &c
	}

	// The broker's 322, replayed as 104.
	dv := body.AppendDataVersion(nil, body.DataVersion{Counter: 1, Timestamp: 1700000000001})
	query := request(codec.QueryDataVersion, 2, "brokerName", "broker-a", "brokerAddr", "127.0.0.1:10911", "clusterName", "c1", "brokerId", "0")
	query.Body = dv
	query = signedBy(query, "broker-a-key", "broker-a-secret")
	wantCode(t, "322", w.Call(query), codec.Success)
	resp := w.Call(replay(query, codec.UnregisterBroker))
	wantCode(t, "322 as 104", resp, codec.NoPermission)
	if addr, _ := brokerOf(t, s, "broker-a"); addr == "" {
		t.Fatal("the replayed 322 unregistered broker-a")
	}

	// A PUT_KV replayed as DELETE_KV.
	put := signedBy(request(codec.PutKVConfig, 4, "namespace", "ns", "key", "k", "value", "v"), "admin-key", "admin-secret")
	wantCode(t, "put", w.Call(put), codec.Success)
	wantCode(t, "put as delete", w.Call(replay(put, codec.DeleteKVConfig)), codec.NoPermission)
	if v, ok := s.kv.Get("ns", "k"); !ok || v != "v" {
		t.Fatalf("the replayed put deleted the key: %q %v", v, ok)
	}

	// 327 and 205 carry the same fields: in the compat scheme a replay
	// passes (the documented limit); in the strict scheme it does not.
	ctx := context.Background()
	strict := dialClient(t, s.Addr(), client.Credentials{AccessKey: "strict-key", SecretKey: "strict-secret", Strict: true})
	if _, err := strict.AddWritePerm(ctx, "broker-a"); err != nil {
		t.Fatal(err)
	}
	add := request(codec.AddWritePermOfBroker, 6, "brokerName", "broker-a")
	add = signedBy(add, "admin-key", "admin-secret")
	wantCode(t, "compat 327", w.Call(add), codec.Success)
	wantCode(t, "compat 327 as 205 (not detectable)", w.Call(replay(add, codec.WipeWritePermOfBroker)), codec.Success)
	wantCode(t, "restore", w.Call(replay(add, codec.AddWritePermOfBroker)), codec.Success)

	sadd := request(codec.AddWritePermOfBroker, 8, "brokerName", "broker-a")
	auth.SignStrict(sadd, "admin-key", "admin-secret", time.Now(), "nonce-1")
	wantCode(t, "strict 327", w.Call(sadd), codec.Success)
	wantCode(t, "strict 327 as 205", w.Call(replay(sadd, codec.WipeWritePermOfBroker)), codec.NoPermission)
	wantCode(t, "strict 327 again", w.Call(replay(sadd, codec.AddWritePermOfBroker)), codec.NoPermission)
	if _, perm := brokerOf(t, s, "broker-a"); perm != 6 {
		t.Fatalf("broker-a perm %d after the strict replays", perm)
	}

	// The strict-only account refuses the compat scheme.
	wantCode(t, "strict-key compat", w.Call(signedBy(request(codec.GetNamesrvConfig, 10), "strict-key", "strict-secret")), codec.NoPermission)
	if _, _, err := strict.GetNamesrvConfig(ctx); err != nil {
		t.Fatal(err)
	}
}

// aclStrictSignature requires the strict scheme of every account; our
// client and a Java-style compat signer side by side.
func TestStrictSignatureRequired(t *testing.T) {
	cfg := trustConfig(t)
	cfg.ACLStrictSignature = true
	s, _ := startServer(t, cfg)
	ctx := context.Background()
	refusal(t, dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"}).PutKV(ctx, "ns", "k", "v"),
		"must sign with the strict scheme")
	if err := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret", Strict: true}).PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
}
