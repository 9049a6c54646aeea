// auth_test.go drives authorization over real connections: refusals and
// their log lines, oneway refusals, broker registration, source allowlists,
// our client's credentials and the official Go client's signatures.

package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/client"
	"github.com/rocketns/rocketns/core/config"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

const testACL = `# test accounts
admin-key:admin-secret:admin
broker-key:broker-secret:broker
reader-key:reader-secret:readonly
`

// authConfig turns signatures on with the test accounts.
func authConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.AuthorizationEnable = true
	cfg.ACLFile = filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(cfg.ACLFile, []byte(testACL), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.ConfigStorePath = filepath.Join(t.TempDir(), "namesrv.properties")
	return cfg
}

// startAuthServer is startServer for a configuration with authorization.
func startAuthServer(t *testing.T, cfg *config.Config) (*Server, *remotingtest.Logs) {
	t.Helper()
	return startHooked(t, cfg, nil)
}

// signedBy signs req as the account ak/sk would.
func signedBy(req *codec.Command, ak, sk string) *codec.Command {
	req.SetExt(auth.FieldAccessKey, ak)
	req.SetExt(auth.FieldSignature, auth.Sign(sk, req.Ext, req.Body))
	return req
}

func dialClient(t *testing.T, addr string, cr client.Credentials) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetCredentials(cr)
	return c
}

// refusal checks err is NO_PERMISSION with a remark containing every want.
func refusal(t *testing.T, err error, want ...string) {
	t.Helper()
	var re *client.ResponseError
	if !errors.As(err, &re) || re.Code != codec.NoPermission {
		t.Fatalf("got %v, want NO_PERMISSION", err)
	}
	for _, w := range want {
		if !strings.Contains(re.Remark, w) {
			t.Fatalf("remark %q does not mention %q", re.Remark, w)
		}
	}
}

func TestAuthorizationOffByDefault(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	c := dialClient(t, s.Addr(), client.Credentials{})
	ctx := context.Background()
	if err := c.PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatalf("unsigned KV write refused with authorization off: %v", err)
	}
	if _, err := c.WipeWritePerm(ctx, "nobody"); err != nil {
		t.Fatalf("unsigned 205 refused with authorization off: %v", err)
	}
}

func TestAuthorizationOverTheWire(t *testing.T) {
	cfg := authConfig(t)
	cfg.BrokerAllowCIDRs = "127.0.0.0/8"
	s, logs := startAuthServer(t, cfg)
	ctx := context.Background()
	anon := dialClient(t, s.Addr(), client.Credentials{})
	adminC := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"})
	brokerC := dialClient(t, s.Addr(), client.Credentials{AccessKey: "broker-key", SecretKey: "broker-secret"})
	reader := dialClient(t, s.Addr(), client.Credentials{AccessKey: "reader-key", SecretKey: "reader-secret"})
	forger := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "guessed-secret"})
	stranger := dialClient(t, s.Addr(), client.Credentials{AccessKey: "stranger-key", SecretKey: "admin-secret"})

	// Unsigned KV write: refused, not applied, logged.
	refusal(t, anon.PutKV(ctx, "ns", "k", "v"), "PUT_KV_CONFIG (100)", "not signed")
	if _, err := anon.GetKV(ctx, "ns", "k"); err == nil {
		t.Fatal("a refused KV write was applied")
	}
	line := logLine(t, logs, "request refused: not authorized", "code=100")
	for _, w := range []string{"peer=127.0.0.1:", `account=""`, `reason="not signed"`} {
		if !strings.Contains(line, w) {
			t.Fatalf("log line %q does not mention %q", line, w)
		}
	}

	refusal(t, forger.PutKV(ctx, "ns", "k", "v"), "signature does not match", `"admin-key"`)
	refusal(t, stranger.PutKV(ctx, "ns", "k", "v"), `unknown AccessKey "stranger-key"`)
	if l := logLine(t, logs, "request refused: not authorized", "account=stranger-key"); !strings.Contains(l, `reason="unknown account"`) {
		t.Fatalf("log line %q", l)
	}

	// The admin may do everything; reads stay open to all.
	if err := adminC.PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := anon.GetKV(ctx, "ns", "k"); err != nil || v != "v" {
		t.Fatalf("open read: %q, %v", v, err)
	}
	if err := adminC.UpdateNamesrvConfig(ctx, []properties.Property{{Key: "orderMessageEnable", Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := adminC.GetNamesrvConfig(ctx); err != nil {
		t.Fatal(err)
	}
	// Readonly: reads the config, changes nothing.
	if _, _, err := reader.GetNamesrvConfig(ctx); err != nil {
		t.Fatalf("readonly 319: %v", err)
	}
	refusal(t, reader.UpdateNamesrvConfig(ctx, []properties.Property{{Key: "orderMessageEnable", Value: "false"}}),
		"UPDATE_NAMESRV_CONFIG (318)", `account "reader-key" has role readonly; this code needs admin`)
	refusal(t, reader.DeleteKV(ctx, "ns", "k"), "DELETE_KV_CONFIG (102)", "role readonly")
	if _, _, err := anon.GetNamesrvConfig(ctx); err == nil {
		t.Fatal("unsigned 319 served")
	}

	// Brokers register unsigned from brokerAllowCIDRs
	// (authorizeBrokerRegistration is off), but an unregistration must be
	// signed by a broker or admin account.
	b := client.Broker{Cluster: "c1", Name: "broker-a", Addr: "127.0.0.1:10911", HAAddr: "127.0.0.1:10912", Version: 409}
	rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1},
		Topics: []body.TopicConfig{
			{TopicName: "T1", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			{TopicName: "T2", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		}}
	if _, _, err := anon.RegisterBroker(ctx, b, rb); err != nil {
		t.Fatalf("unsigned registration refused: %v", err)
	}
	refusal(t, anon.UnregisterBroker(ctx, b), "UNREGISTER_BROKER (104)", "not signed")
	refusal(t, brokerC.DeleteTopic(ctx, "T1", ""), "DELETE_TOPIC_IN_NAMESRV (216)", "role broker")
	_, err := brokerC.WipeWritePerm(ctx, "broker-a")
	refusal(t, err, "WIPE_WRITE_PERM_OF_BROKER (205)", "role broker")
	_, err = anon.WipeWritePerm(ctx, "broker-a")
	refusal(t, err, "not signed")
	if r, err := anon.Route(ctx, "T1"); err != nil || permOf(r, "broker-a") != 6 {
		t.Fatalf("route after refused wipes: %v perm %d", err, permOf(r, "broker-a"))
	}
	if n, err := adminC.WipeWritePerm(ctx, "broker-a"); err != nil || n != 2 {
		t.Fatalf("admin wipe: %d, %v", n, err)
	}
	// A broker account may not remove a broker registered without it; an
	// admin may.
	refusal(t, brokerC.UnregisterBroker(ctx, b), "UNREGISTER_BROKER (104)", "registered with other credentials")
	if err := adminC.UnregisterBroker(ctx, b); err != nil {
		t.Fatalf("admin-signed unregistration: %v", err)
	}
	if _, err := anon.Route(ctx, "T1"); err == nil {
		t.Fatal("route still there after the signed unregistration")
	}
}

// logLine returns the first log line containing every part.
func logLine(t *testing.T, logs *remotingtest.Logs, parts ...string) string {
	t.Helper()
	for _, l := range strings.Split(logs.String(), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return l
		}
	}
	t.Fatalf("no log line with %q in:\n%s", parts, logs.String())
	return ""
}

// A refused oneway request gets no answer and is not applied; the next
// answer on the connection is the next request's.
func TestRefusedOnewayIsDroppedSilently(t *testing.T) {
	s, logs := startAuthServer(t, authConfig(t))
	w := dialWire(t, s.Addr())
	put := request(codec.PutKVConfig, 1, "namespace", "ns", "key", "k", "value", "v")
	put.Flag = codec.FlagOneway
	w.Send(put)
	resp := w.Call(request(codec.GetKVConfig, 2, "namespace", "ns", "key", "k"))
	if resp.Code != codec.QueryNotFound {
		t.Fatalf("get after refused oneway put: %d %q", resp.Code, resp.Remark)
	}
	logLine(t, logs, "request refused: not authorized", "code=100", "oneway=true")

	// Signed, the same oneway write is applied.
	put = signedBy(request(codec.PutKVConfig, 3, "namespace", "ns", "key", "k", "value", "v"), "admin-key", "admin-secret")
	put.Flag = codec.FlagOneway
	w.Send(put)
	if resp := w.Call(request(codec.GetKVConfig, 4, "namespace", "ns", "key", "k")); resp.Code != codec.Success {
		t.Fatalf("get after signed oneway put: %d %q", resp.Code, resp.Remark)
	}
}

func TestAuthorizeBrokerRegistration(t *testing.T) {
	cfg := authConfig(t)
	cfg.AuthorizeBrokerRegistration = true
	s, _ := startAuthServer(t, cfg)
	w := dialWire(t, s.Addr())
	if resp := w.Call(registerFrame(t, 1, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2")); resp.Code != codec.NoPermission ||
		!strings.Contains(resp.Remark, "REGISTER_BROKER (103)") {
		t.Fatalf("unsigned registration: %d %q", resp.Code, resp.Remark)
	}
	if resp := w.Call(request(codec.GetRouteInfoByTopic, 2, "topic", "T1")); resp.Code != codec.TopicNotExist {
		t.Fatalf("route after refused registration: %d", resp.Code)
	}
	hb := request(codec.BrokerHeartbeat, 3, "clusterName", "c1", "brokerAddr", "127.0.0.1:10911", "brokerName", "broker-a")
	if resp := w.Call(hb); resp.Code != codec.NoPermission {
		t.Fatalf("unsigned heartbeat: %d", resp.Code)
	}
	reg := signedBy(registerFrame(t, 4, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"), "reader-key", "reader-secret")
	if resp := w.Call(reg); resp.Code != codec.NoPermission || !strings.Contains(resp.Remark, "role readonly") {
		t.Fatalf("readonly registration: %d %q", resp.Code, resp.Remark)
	}
	reg = signedBy(registerFrame(t, 5, "c1", "broker-a", "127.0.0.1:10911", 0, "T1", "T2"), "broker-key", "broker-secret")
	if resp := w.Call(reg); resp.Code != codec.Success {
		t.Fatalf("signed registration: %d %q", resp.Code, resp.Remark)
	}
	if resp := w.Call(request(codec.GetRouteInfoByTopic, 6, "topic", "T1")); resp.Code != codec.Success {
		t.Fatalf("route after signed registration: %d", resp.Code)
	}
}

func TestAdminAllowCIDRs(t *testing.T) {
	f := func(cidrs string, wantAllowed bool) {
		t.Helper()
		cfg := testConfig(t)
		cfg.AdminAllowCIDRs = cidrs
		s, logs := startAuthServer(t, cfg)
		c := dialClient(t, s.Addr(), client.Credentials{})
		ctx := context.Background()
		err := c.PutKV(ctx, "ns", "k", "v")
		if wantAllowed {
			if err != nil {
				t.Fatalf("%s: %v", cidrs, err)
			}
			return
		}
		refusal(t, err, "PUT_KV_CONFIG (100)", "source address 127.0.0.1:", "adminAllowCIDRs")
		logLine(t, logs, "request refused: not authorized", "code=100", `reason="source address not allowed"`)
		// Reads and broker reports stay open.
		if _, err := c.ClusterInfo(ctx); err != nil {
			t.Fatalf("%s: 106 refused: %v", cidrs, err)
		}
	}
	f("10.0.0.0/8", false)
	f("10.0.0.0/8, ::1", false)
	f("10.0.0.0/8, 127.0.0.0/8", true)
	f("127.0.0.1", true)
}

// Signatures and allowlist together: both must pass.
func TestAllowlistAndSignatures(t *testing.T) {
	cfg := authConfig(t)
	cfg.AdminAllowCIDRs = "127.0.0.1"
	s, _ := startAuthServer(t, cfg)
	ctx := context.Background()
	refusal(t, dialClient(t, s.Addr(), client.Credentials{}).PutKV(ctx, "ns", "k", "v"), "not signed")
	if err := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"}).PutKV(ctx, "ns", "k", "v"); err != nil {
		t.Fatal(err)
	}

	cfg = authConfig(t)
	cfg.AdminAllowCIDRs = "10.0.0.0/8"
	s, _ = startAuthServer(t, cfg)
	err := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"}).PutKV(ctx, "ns", "k", "v")
	refusal(t, err, "source address")
}

// A server started without Validate and a missing account file refuses the
// protected codes (fail closed) and keeps serving the rest.
func TestMisconfiguredAuthorizationFailsClosed(t *testing.T) {
	cfg := authConfig(t)
	cfg.ACLFile += ".missing"
	s, logs := startAuthServer(t, cfg)
	c := dialClient(t, s.Addr(), client.Credentials{AccessKey: "admin-key", SecretKey: "admin-secret"})
	ctx := context.Background()
	refusal(t, c.PutKV(ctx, "ns", "k", "v"), "authorization is misconfigured")
	if _, err := c.ClusterInfo(ctx); err != nil {
		t.Fatal(err)
	}
	logLine(t, logs, "authorization misconfigured")
}
