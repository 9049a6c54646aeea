// Tests of broker trust: the broker allowlist, account bindings, the strict
// signature scheme and its replay cache, and the replays across codes the
// compat scheme lets through unless their fields give them away.

package auth

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
)

func TestParseAccountOptions(t *testing.T) {
	t.Parallel()
	accts, err := ParseAccounts(strings.NewReader(`
admin-key:admin-secret:admin
broker-a-key:broker-secret:broker
broker-a-key brokers=broker-a,broker-a-s addrs=10.0.1.0/24,fd00::/8
broker-b-key : se:cr et : broker
broker-b-key	strict
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(accts) != 3 {
		t.Fatalf("%d accounts: %+v", len(accts), accts)
	}
	a := accts[1]
	if a.AccessKey != "broker-a-key" || strings.Join(a.Brokers, " ") != "broker-a broker-a-s" ||
		len(a.Addrs) != 2 || a.Addrs[1] != netip.MustParsePrefix("fd00::/8") || a.Strict {
		t.Fatalf("bound account: %+v", a)
	}
	if b := accts[2]; b.SecretKey != "se:cr et" || !b.Strict || b.Brokers != nil {
		t.Fatalf("strict account: %+v", b)
	}
	if accts[0].Brokers != nil || accts[0].Strict {
		t.Fatalf("admin: %+v", accts[0])
	}
}

func TestParseAccountOptionsErrors(t *testing.T) {
	t.Parallel()
	f := func(text string, wantSub ...string) {
		t.Helper()
		_, err := ParseAccounts(strings.NewReader(text))
		if err == nil {
			t.Fatalf("ParseAccounts(%q) accepted", text)
		}
		for _, s := range wantSub {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("ParseAccounts(%q) = %v, want it to mention %q", text, err, s)
			}
		}
		if strings.Contains(err.Error(), "topsecret") {
			t.Fatalf("error echoes a secret: %v", err)
		}
	}
	const acct = "broker-key:topsecret:broker\n"
	f("nobody-key brokers=a\n", "line 1", "no line defines")
	f(acct+"broker-key brokers=a\nbroker-key strict\n", "line 3", "already given on line 2")
	f(acct+"broker-key brokers=a,,b\n", "line 2", "empty broker name")
	f(acct+"broker-key addrs=10.0.0.0/33\n", "line 2", "addrs")
	f(acct+"broker-key addrs=\n", "line 2", "no network")
	f(acct+"broker-key brokers=a color=red\n", "line 2", `unknown option "color"`)
	f(acct+"broker-key strict strict\n", "line 2", "twice")
	f(acct+"broker-key strict mq:topsecret\n", "line 2", "not name=value")
	f("admin-key:topsecret:admin\nadmin-key brokers=a\n", "line 2", "bind a broker account")
	// A mistyped account line is still reported as one.
	f("rocket mq:topsecret:admin\n", "line 1", "blanks")
}

// boundPolicy has broker-a-key bound to broker-a at 10.0.1.0/24, an unbound
// broker account and an admin; no allowlist, so every broker code must be
// signed.
func boundPolicy(t *testing.T, o Options) *Policy {
	t.Helper()
	o.Signatures = true
	o.Accounts = append(o.Accounts,
		Account{AccessKey: "admin-key", SecretKey: "admin-secret", Role: RoleAdmin},
		Account{AccessKey: "broker-key", SecretKey: "broker-secret", Role: RoleBroker},
		Account{AccessKey: "broker-a-key", SecretKey: "broker-a-secret", Role: RoleBroker,
			Brokers: []string{"broker-a"}, Addrs: []netip.Prefix{netip.MustParsePrefix("10.0.1.0/24")}},
	)
	return mustPolicy(t, o)
}

func denied(t *testing.T, err error, want Reason) *Denial {
	t.Helper()
	var d *Denial
	if want == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return nil
	}
	if !errors.As(err, &d) || d.Reason != want {
		t.Fatalf("got %v, want a denial for %s", err, want)
	}
	return d
}

func TestBrokerAccountBindings(t *testing.T) {
	t.Parallel()
	p := boundPolicy(t, Options{})
	f := func(class Class, req *codec.Command, want Reason) *Denial {
		t.Helper()
		return denied(t, p.Check(class, req, "192.168.9.9:1"), want)
	}
	reg := func(ak, sk, name, addr string) *codec.Command {
		return signed(103, ak, sk, "{}", "brokerName", name, "brokerAddr", addr, "clusterName", "c1", "brokerId", "0")
	}
	f(ClassBrokerReport, reg("broker-a-key", "broker-a-secret", "broker-a", "10.0.1.5:10911"), 0)
	d := f(ClassBrokerReport, reg("broker-a-key", "broker-a-secret", "broker-b", "10.0.1.5:10911"), ReasonBinding)
	if msg := d.Error(); !strings.Contains(msg, `account "broker-a-key" is not bound to broker "broker-b" at "10.0.1.5:10911"`) {
		t.Fatalf("remark %q", msg)
	}
	f(ClassBrokerReport, reg("broker-a-key", "broker-a-secret", "broker-a", "10.0.2.5:10911"), ReasonBinding)
	f(ClassBrokerReport, reg("broker-a-key", "broker-a-secret", "broker-a", "broker-host:10911"), ReasonBinding)
	unreg := signed(104, "broker-a-key", "broker-a-secret", "", "brokerName", "broker-b", "brokerAddr", "10.0.1.5:1", "clusterName", "c1", "brokerId", "0")
	f(ClassBrokerWrite, unreg, ReasonBinding)
	// A heartbeat naming no broker is bound by its address alone.
	f(ClassBrokerReport, signed(904, "broker-a-key", "broker-a-secret", "", "clusterName", "c1", "brokerAddr", "10.0.1.5:1"), 0)
	f(ClassBrokerReport, signed(904, "broker-a-key", "broker-a-secret", "", "clusterName", "c1", "brokerAddr", "10.9.1.5:1"), ReasonBinding)
	// Unbound accounts and admins act for any broker.
	f(ClassBrokerReport, reg("broker-key", "broker-secret", "broker-b", "1.2.3.4:5"), 0)
	f(ClassBrokerReport, reg("admin-key", "admin-secret", "broker-b", "1.2.3.4:5"), 0)
	if got := p.UnboundBrokers(); strings.Join(got, " ") != "broker-key" {
		t.Fatalf("UnboundBrokers = %q", got)
	}

	g, err := p.Authorize(ClassBrokerReport, reg("broker-a-key", "broker-a-secret", "broker-a", "10.0.1.5:10911"), "1.1.1.1:1")
	if err != nil || g.AccessKey != "broker-a-key" || !g.Owns("broker-a") || g.Owns("broker-b") ||
		!g.MayActFor("broker-a") || g.MayActFor("broker-b") {
		t.Fatalf("bound grant %+v, %v", g, err)
	}
	g, _ = p.Authorize(ClassBrokerReport, reg("broker-key", "broker-secret", "broker-a", "1.1.1.1:1"), "1.1.1.1:1")
	if g.AccessKey != "broker-key" || g.Owns("broker-a") || !g.MayActFor("broker-z") {
		t.Fatalf("unbound grant %+v", g)
	}
	g, _ = p.Authorize(ClassBrokerReport, reg("admin-key", "admin-secret", "broker-a", "1.1.1.1:1"), "1.1.1.1:1")
	if !g.Owns("broker-a") {
		t.Fatalf("admin grant %+v", g)
	}
}

func TestBrokerAllowFrom(t *testing.T) {
	t.Parallel()
	brokers := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
	admins := []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}
	f := func(p *Policy, class Class, req *codec.Command, peer string, want Reason) {
		t.Helper()
		denied(t, p.Check(class, req, peer), want)
	}
	report := signed(103, "", "", "{}", "brokerName", "broker-a")
	unreg := signed(104, "", "", "", "brokerName", "broker-a")
	// Allowlists alone: broker codes from the broker or admin networks,
	// admin codes from the admin one only.
	p := mustPolicy(t, Options{AllowFrom: admins, BrokerAllowFrom: brokers})
	f(p, ClassBrokerReport, report, "10.1.2.3:1", 0)
	f(p, ClassBrokerReport, report, "10.9.2.3:1", 0)
	f(p, ClassBrokerWrite, unreg, "10.1.2.3:1", 0)
	f(p, ClassBrokerReport, report, "10.2.2.3:1", ReasonAddress)
	f(p, ClassAdmin, signed(205, "", "", ""), "10.1.2.3:1", ReasonAddress)
	f(p, ClassAdmin, signed(205, "", "", ""), "10.9.2.3:1", 0)
	// A broker list alone protects the broker codes only.
	p = mustPolicy(t, Options{BrokerAllowFrom: brokers})
	f(p, ClassBrokerReport, report, "10.2.2.3:1", ReasonAddress)
	f(p, ClassAdmin, signed(205, "", "", ""), "10.2.2.3:1", 0)

	// With signatures: a broker network admits unsigned reports, a broker
	// account's signature admits them from anywhere, and a signature that
	// is offered must verify.
	p = boundPolicy(t, Options{BrokerAllowFrom: brokers})
	f(p, ClassBrokerReport, report, "10.1.2.3:1", 0)
	f(p, ClassBrokerReport, report, "10.2.2.3:1", ReasonAddress)
	f(p, ClassBrokerReport, signed(103, "broker-key", "broker-secret", "{}", "brokerName", "x"), "10.2.2.3:1", 0)
	f(p, ClassBrokerReport, signed(103, "broker-key", "bad-secret1", "{}", "brokerName", "x"), "10.1.2.3:1", ReasonBadSignature)
	// Broker writes must be signed, from anywhere; with
	// BrokerRegistration every broker code needs network and signature.
	f(p, ClassBrokerWrite, unreg, "10.1.2.3:1", ReasonUnsigned)
	f(p, ClassBrokerWrite, signed(104, "broker-key", "broker-secret", "", "brokerName", "x"), "10.2.2.3:1", 0)
	f(p, ClassBrokerWrite, signed(104, "broker-key", "broker-secret", "", "brokerName", "x"), "10.1.2.3:1", 0)
	p = boundPolicy(t, Options{BrokerAllowFrom: brokers, BrokerRegistration: true})
	f(p, ClassBrokerReport, report, "10.1.2.3:1", ReasonUnsigned)
	f(p, ClassBrokerReport, signed(103, "broker-key", "broker-secret", "{}"), "10.2.2.3:1", ReasonAddress)
	f(p, ClassBrokerReport, signed(103, "broker-key", "broker-secret", "{}"), "10.1.2.3:1", 0)
	f(p, ClassBrokerWrite, signed(104, "broker-key", "broker-secret", ""), "10.2.2.3:1", ReasonAddress)

	d := denied(t, mustPolicy(t, Options{AllowFrom: admins}).Check(ClassBrokerReport, report, "10.2.2.3:1"), ReasonAddress)
	if msg := d.Error(); msg != "no permission for REGISTER_BROKER (103): source address 10.2.2.3:1 is not in brokerAllowCIDRs or adminAllowCIDRs" {
		t.Fatalf("remark %q", msg)
	}
	d = denied(t, boundPolicy(t, Options{}).Check(ClassBrokerReport, report, "10.2.2.3:1"), ReasonAddress)
	if msg := d.Error(); !strings.HasSuffix(msg, "and the request is not signed by a broker account") {
		t.Fatalf("remark %q", msg)
	}
}

// The compat scheme does not sign the code: a captured request verifies on
// any code with the same fields. Those whose fields give the source away
// are refused; 327 and 205 carry the same fields and cannot be told apart.
func TestCompatReplayAcrossCodes(t *testing.T) {
	t.Parallel()
	p := boundPolicy(t, Options{})
	f := func(class Class, req *codec.Command, want Reason) {
		t.Helper()
		denied(t, p.Check(class, req, "10.0.0.1:1"), want)
	}
	replay := func(req *codec.Command, code int32) *codec.Command {
		c := *req
		c.Code = code
		return &c
	}
	broker := []string{"brokerName", "broker-a", "brokerAddr", "10.0.1.5:10911", "clusterName", "c1", "brokerId", "0"}
	query := signed(322, "broker-a-key", "broker-a-secret", `{"counter":1}`, broker...)
	f(ClassBrokerReport, query, 0)
	f(ClassBrokerWrite, replay(query, 104), ReasonForeign)
	reg := signed(103, "broker-a-key", "broker-a-secret", `{"topicConfigSerializeWrapper":{}}`, broker...)
	f(ClassBrokerWrite, replay(reg, 104), ReasonForeign)
	f(ClassBrokerWrite, signed(104, "broker-a-key", "broker-a-secret", "", broker...), 0)

	put := signed(100, "admin-key", "admin-secret", "", "namespace", "ns", "key", "k", "value", "v")
	f(ClassAdmin, put, 0)
	f(ClassAdmin, replay(put, 102), ReasonForeign)
	del := signed(102, "admin-key", "admin-secret", "", "namespace", "ns", "key", "k")
	f(ClassAdmin, del, 0)
	f(ClassAdmin, replay(del, 100), ReasonForeign)
	regTopic := signed(217, "admin-key", "admin-secret", `{"queueDatas":[]}`, "topic", "T")
	f(ClassAdmin, replay(regTopic, 216), ReasonForeign)
	// The limit of the compat scheme, kept: same fields, same signature.
	add := signed(327, "admin-key", "admin-secret", "", "brokerName", "broker-a")
	f(ClassAdmin, replay(add, 205), 0)
}

// strictReq builds a request signed in the strict scheme at at.
func strictReq(code int32, ak, sk string, at time.Time, nonce, body string, ext ...string) *codec.Command {
	c := &codec.Command{Code: code, HasExt: true}
	for i := 0; i+1 < len(ext); i += 2 {
		c.SetExt(ext[i], ext[i+1])
	}
	if body != "" {
		c.Body = []byte(body)
	}
	SignStrict(c, ak, sk, at, nonce)
	return c
}

func TestStrictSignature(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	p := boundPolicy(t, Options{Now: clock, StrictWindow: time.Minute})
	f := func(class Class, req *codec.Command, want Reason) *Denial {
		t.Helper()
		return denied(t, p.Check(class, req, "10.0.0.1:1"), want)
	}
	add := strictReq(327, "admin-key", "admin-secret", now, "n1", "", "brokerName", "broker-a")
	f(ClassAdmin, add, 0)
	// The code is signed: the same request as 205 does not verify.
	wipe := *add
	wipe.Code = 205
	f(ClassAdmin, &wipe, ReasonBadSignature)
	// The same request again: its nonce was served.
	f(ClassAdmin, add, ReasonReplay)
	// Keys and lengths are signed: characters cannot move between values.
	kv := strictReq(100, "admin-key", "admin-secret", now, "n2", "", "namespace", "ns", "key", "k1", "value", "v")
	kv.SetExt("key", "k")
	kv.SetExt("namespace", "1ns")
	f(ClassAdmin, kv, ReasonBadSignature)
	// Tampering with the time or nonce breaks the signature.
	tt := strictReq(100, "admin-key", "admin-secret", now, "n3", "", "namespace", "ns", "key", "k", "value", "v")
	tt.SetExt(FieldSignTime, "1800000000001")
	f(ClassAdmin, tt, ReasonBadSignature)
	tn := strictReq(100, "admin-key", "admin-secret", now, "n3", "", "namespace", "ns", "key", "k", "value", "v")
	tn.SetExt(FieldSignNonce, "n4")
	f(ClassAdmin, tn, ReasonBadSignature)
	// The window, either way, inclusive.
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now.Add(-time.Minute), "n5", ""), 0)
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now.Add(time.Minute), "n6", ""), 0)
	d := f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now.Add(-time.Minute-time.Millisecond), "n7", ""), ReasonStale)
	if !strings.Contains(d.Error(), "more than 1m0s away") {
		t.Fatalf("remark %q", d.Error())
	}
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now.Add(time.Hour), "n8", ""), ReasonStale)
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", time.UnixMilli(-1<<62), "n9", ""), ReasonStale)
	// Bad scheme, time or nonce fields.
	bad := strictReq(319, "admin-key", "admin-secret", now, "n10", "")
	bad.SetExt(FieldSignScheme, "rocketns-v0")
	f(ClassAdmin, bad, ReasonBadSignature)
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now, "", ""), ReasonBadSignature)
	f(ClassAdmin, strictReq(319, "admin-key", "admin-secret", now, strings.Repeat("n", 65), ""), ReasonBadSignature)
	f(ClassAdmin, strictReq(319, "admin-key", "wrong-secret", now, "n11", ""), ReasonBadSignature)
	// Role and bindings apply as in the compat scheme, and a refused
	// request leaves no nonce behind.
	f(ClassAdmin, strictReq(205, "broker-key", "broker-secret", now, "n12", "", "brokerName", "b"), ReasonRole)
	f(ClassBrokerReport, strictReq(322, "broker-a-key", "broker-a-secret", now, "n13", "{}", "brokerName", "broker-b"), ReasonBinding)
	f(ClassBrokerReport, strictReq(322, "broker-a-key", "broker-a-secret", now, "n13", "{}", "brokerName", "broker-a"), 0)
	// A nonce is per account.
	f(ClassBrokerReport, strictReq(322, "broker-key", "broker-secret", now, "n13", "{}", "brokerName", "broker-a"), 0)
	// Once the window is over the nonce is forgotten, and the time check
	// refuses the request instead.
	now = now.Add(2 * time.Minute)
	f(ClassAdmin, add, ReasonStale)
}

func TestStrictRequired(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	compat := signed(319, "admin-key", "admin-secret", "")
	strict := func(nonce string) *codec.Command {
		return strictReq(319, "admin-key", "admin-secret", now, nonce, "")
	}
	// Off: both schemes pass.
	p := boundPolicy(t, Options{Now: clock})
	denied(t, p.Check(ClassConfigRead, compat, "1.1.1.1:1"), 0)
	denied(t, p.Check(ClassConfigRead, strict("a"), "1.1.1.1:1"), 0)
	// Globally.
	p = boundPolicy(t, Options{Now: clock, Strict: true})
	d := denied(t, p.Check(ClassConfigRead, compat, "1.1.1.1:1"), ReasonNotStrict)
	if msg := d.Error(); !strings.Contains(msg, `account "admin-key" must sign with the strict scheme (rocketns-v1)`) {
		t.Fatalf("remark %q", msg)
	}
	denied(t, p.Check(ClassConfigRead, strict("a"), "1.1.1.1:1"), 0)
	// Per account.
	p = mustPolicy(t, Options{Signatures: true, Now: clock, Accounts: []Account{
		{AccessKey: "admin-key", SecretKey: "admin-secret", Role: RoleAdmin, Strict: true},
		{AccessKey: "other-key", SecretKey: "other-secret", Role: RoleAdmin},
	}})
	denied(t, p.Check(ClassConfigRead, compat, "1.1.1.1:1"), ReasonNotStrict)
	denied(t, p.Check(ClassConfigRead, signed(319, "other-key", "other-secret", ""), "1.1.1.1:1"), 0)
}

func TestNonceCacheBounded(t *testing.T) {
	t.Parallel()
	var c nonceCache
	const now = 1000
	for i := 0; i < maxNonces; i++ {
		if r := c.add("k", strconv.Itoa(i), now+10, now); r != nonceNew {
			t.Fatalf("nonce %d: %d", i, r)
		}
	}
	if r := c.add("k", "one more", now+10, now); r != nonceFull {
		t.Fatalf("past the bound: %d", r)
	}
	// Expired entries are dropped to make room.
	if r := c.add("k", "one more", now+30, now+20); r != nonceNew {
		t.Fatalf("after expiry: %d", r)
	}
	if len(c.seen) != 1 {
		t.Fatalf("%d entries kept", len(c.seen))
	}
}
