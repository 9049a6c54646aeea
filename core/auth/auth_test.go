// Tests of the roles, account files, allowlists and the policy's decisions.

package auth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
)

func TestRoleMay(t *testing.T) {
	t.Parallel()
	f := func(r Role, want string) {
		t.Helper()
		var got []string
		for _, c := range []Class{ClassOpen, ClassBrokerReport, ClassBrokerWrite, ClassAdmin, ClassConfigRead} {
			if r.May(c) {
				got = append(got, c.String())
			}
		}
		if s := strings.Join(got, " "); s != want {
			t.Errorf("%s may %q, want %q", r, s, want)
		}
	}
	f(RoleAdmin, "open broker-report broker-write admin config-read")
	f(RoleBroker, "open broker-report broker-write")
	f(RoleReadOnly, "open config-read")
	f(Role(0), "open")
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	f := func(in string, want Role, ok bool) {
		t.Helper()
		got, err := ParseRole(in)
		if (err == nil) != ok || got != want {
			t.Errorf("ParseRole(%q) = %v, %v; want %v, ok=%v", in, got, err, want, ok)
		}
	}
	f("admin", RoleAdmin, true)
	f(" Broker ", RoleBroker, true)
	f("READONLY", RoleReadOnly, true)
	f("root", 0, false)
	f("", 0, false)
}

func TestParseAccounts(t *testing.T) {
	t.Parallel()
	f := func(text string, want []Account) {
		t.Helper()
		got, err := ParseAccounts(strings.NewReader(text))
		if err != nil {
			t.Fatalf("ParseAccounts(%q): %v", text, err)
		}
		if len(got) != len(want) {
			t.Fatalf("ParseAccounts(%q) = %+v, want %+v", text, got, want)
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("ParseAccounts(%q)[%d] = %+v, want %+v", text, i, got[i], want[i])
			}
		}
	}
	f("", nil)
	f("# comment\n\n  rocketmq2:12345678:admin  \n", []Account{{AccessKey: "rocketmq2", SecretKey: "12345678", Role: RoleAdmin}})
	f("broker-a : s3cr:et:x : broker\r\nviewer1:readonly-pw:readonly\n", []Account{
		{AccessKey: "broker-a", SecretKey: "s3cr:et:x", Role: RoleBroker},
		{AccessKey: "viewer1", SecretKey: "readonly-pw", Role: RoleReadOnly},
	})
}

func TestParseAccountsErrors(t *testing.T) {
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
	}
	f("rocketmq2:12345678\n", "line 1", "accessKey:secretKey:role")
	f("rocketmq2\n", "line 1")
	f("rocketmq2:12345678:root\n", "line 1", "unknown role")
	f("short:12345678:admin\n", "line 1", "at least 7")
	f("rocketmq2:123:admin\n", "line 1", "secretKey")
	f("rocket mq:12345678:admin\n", "line 1", "blanks")
	f("rocketmq2:12345678:admin\n#\nrocketmq2:87654321:broker\n", "line 3", "line 1")
	// Every bad line is reported, and no secret is echoed.
	_, err := ParseAccounts(strings.NewReader("a:topsecret1\nbbbbbbb:topsecret2:x\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want both lines reported, got %v", err)
	}
	if strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error echoes a secret: %v", err)
	}
}

func TestLoadAccounts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "acl")
	if err := os.WriteFile(path, []byte("rocketmq2:12345678:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadAccounts(path)
	if err != nil || len(got) != 1 || got[0].AccessKey != "rocketmq2" {
		t.Fatalf("LoadAccounts = %+v, %v", got, err)
	}
	if _, err := LoadAccounts(path + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestParseCIDRs(t *testing.T) {
	t.Parallel()
	f := func(in, want string) {
		t.Helper()
		got, err := ParseCIDRs(in)
		if err != nil {
			t.Fatalf("ParseCIDRs(%q): %v", in, err)
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if j := strings.Join(s, " "); j != want {
			t.Fatalf("ParseCIDRs(%q) = %q, want %q", in, j, want)
		}
	}
	f("", "")
	f(" , ", "")
	f("10.0.0.0/8", "10.0.0.0/8")
	f("10.1.2.3/8, 192.168.1.7;fd00::/8 ::1", "10.0.0.0/8 192.168.1.7/32 fd00::/8 ::1/128")
	f("::ffff:10.0.0.0/104", "10.0.0.0/8")
	f("::ffff:127.0.0.1", "127.0.0.1/32")

	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0/8", "1.2.3.4/x"} {
		if _, err := ParseCIDRs(bad); err == nil {
			t.Errorf("ParseCIDRs(%q) accepted", bad)
		}
	}
}

func TestPeerAddr(t *testing.T) {
	t.Parallel()
	f := func(peer, want string) {
		t.Helper()
		got := PeerAddr(peer)
		s := "invalid"
		if got.IsValid() {
			s = got.String()
		}
		if s != want {
			t.Fatalf("PeerAddr(%q) = %s, want %s", peer, s, want)
		}
	}
	f("127.0.0.1:9876", "127.0.0.1")
	f("[::1]:9876", "::1")
	f("[::ffff:10.1.2.3]:1", "10.1.2.3")
	f("[fe80::1%eth0]:1", "fe80::1")
	f("10.0.0.1", "10.0.0.1")
	f("", "invalid")
	f("localhost:9876", "invalid")
}

// signed builds a request carrying ext, signed by ak/sk (sk "" = unsigned).
func signed(code int32, ak, sk string, body string, ext ...string) *codec.Command {
	c := &codec.Command{Code: code, HasExt: true}
	for i := 0; i+1 < len(ext); i += 2 {
		c.SetExt(ext[i], ext[i+1])
	}
	if len(body) > 0 {
		c.Body = []byte(body)
	}
	if ak != "" {
		c.SetExt(FieldAccessKey, ak)
	}
	if sk != "" {
		c.SetExt(FieldSignature, Sign(sk, c.Ext, c.Body))
	}
	return c
}

var testAccounts = []Account{
	{AccessKey: "admin-key", SecretKey: "admin-secret", Role: RoleAdmin},
	{AccessKey: "broker-key", SecretKey: "broker-secret", Role: RoleBroker},
	{AccessKey: "reader-key", SecretKey: "reader-secret", Role: RoleReadOnly},
}

func mustPolicy(t *testing.T, o Options) *Policy {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicySignatures(t *testing.T) {
	t.Parallel()
	p := mustPolicy(t, Options{Signatures: true, Accounts: testAccounts})
	withBrokers := mustPolicy(t, Options{Signatures: true, Accounts: testAccounts, BrokerRegistration: true})
	check := func(p *Policy, class Class, req *codec.Command, want Reason) {
		t.Helper()
		err := p.Check(class, req, "10.0.0.1:40000")
		var d *Denial
		switch {
		case want == 0 && err != nil:
			t.Fatalf("code %d refused: %v", req.Code, err)
		case want == 0:
			return
		case !errors.As(err, &d):
			t.Fatalf("code %d: got %v, want a denial (%s)", req.Code, err, want)
		case d.Reason != want || d.Code != req.Code:
			t.Fatalf("code %d: denial %+v, want reason %s", req.Code, d, want)
		}
	}
	f := func(c Class, req *codec.Command, want Reason) { t.Helper(); check(p, c, req, want) }
	fb := func(c Class, req *codec.Command, want Reason) { t.Helper(); check(withBrokers, c, req, want) }
	kv := []string{"namespace", "ns", "key", "k", "value", "v"}
	// Open codes need nothing, whatever they carry.
	f(ClassOpen, signed(105, "", "", "", "topic", "T"), 0)
	f(ClassOpen, signed(101, "nobody-key", "wrong-secret", "", kv...), 0)
	// Without BrokerRegistration, broker reports pass from a broker
	// network or with a broker account's signature; with no network set,
	// only signed.
	f(ClassBrokerReport, signed(103, "", "", "{}"), ReasonAddress)
	f(ClassBrokerReport, signed(904, "", "", ""), ReasonAddress)
	f(ClassBrokerReport, signed(103, "broker-key", "broker-secret", "{}"), 0)
	f(ClassBrokerReport, signed(103, "broker-key", "wrong-secret", "{}"), ReasonBadSignature)
	f(ClassBrokerReport, signed(103, "reader-key", "reader-secret", "{}"), ReasonRole)

	f(ClassAdmin, signed(100, "admin-key", "admin-secret", "", kv...), 0)
	f(ClassAdmin, signed(318, "admin-key", "admin-secret", "orderMessageEnable=true\n"), 0)
	f(ClassAdmin, signed(100, "", "", "", kv...), ReasonUnsigned)
	f(ClassAdmin, signed(100, "admin-key", "", "", kv...), ReasonUnsigned)
	f(ClassAdmin, signed(100, "", "admin-secret", "", kv...), ReasonUnsigned)
	f(ClassAdmin, signed(100, "someone-key", "admin-secret", "", kv...), ReasonUnknownAccount)
	f(ClassAdmin, signed(100, "admin-key", "broker-secret", "", kv...), ReasonBadSignature)
	// A signed request altered in transit.
	tampered := signed(318, "admin-key", "admin-secret", "orderMessageEnable=true\n")
	tampered.Body = []byte("orderMessageEnable=false\n")
	f(ClassAdmin, tampered, ReasonBadSignature)

	f(ClassBrokerWrite, signed(104, "broker-key", "broker-secret", "", "brokerName", "b"), 0)
	f(ClassBrokerWrite, signed(217, "broker-key", "broker-secret", "{}", "topic", "T"), 0)
	f(ClassAdmin, signed(205, "broker-key", "broker-secret", "", "brokerName", "b"), ReasonRole)
	f(ClassConfigRead, signed(319, "broker-key", "broker-secret", ""), ReasonRole)
	f(ClassConfigRead, signed(319, "reader-key", "reader-secret", ""), 0)
	f(ClassConfigRead, signed(319, "admin-key", "admin-secret", ""), 0)
	for _, c := range []Class{ClassAdmin, ClassBrokerWrite} {
		f(c, signed(100, "reader-key", "reader-secret", ""), ReasonRole)
	}

	fb(ClassBrokerReport, signed(103, "", "", "{}"), ReasonUnsigned)
	fb(ClassBrokerReport, signed(322, "broker-key", "broker-secret", "{}"), 0)
	fb(ClassBrokerReport, signed(904, "admin-key", "admin-secret", ""), 0)
	fb(ClassBrokerReport, signed(904, "reader-key", "reader-secret", ""), ReasonRole)
	fb(ClassOpen, signed(105, "", "", "", "topic", "T"), 0)
}

func TestPolicyAllowFrom(t *testing.T) {
	t.Parallel()
	nets, err := ParseCIDRs("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	f := func(p *Policy, class Class, req *codec.Command, peer string, want Reason) {
		t.Helper()
		err := p.Check(class, req, peer)
		var d *Denial
		if want == 0 {
			if err != nil {
				t.Fatalf("code %d from %s refused: %v", req.Code, peer, err)
			}
			return
		}
		if !errors.As(err, &d) || d.Reason != want {
			t.Fatalf("code %d from %s: %v, want %s", req.Code, peer, err, want)
		}
	}
	// Allowlist alone: no identities, any protected code from inside.
	cidr := mustPolicy(t, Options{AllowFrom: nets})
	f(cidr, ClassAdmin, signed(205, "", "", ""), "10.9.8.7:1234", 0)
	f(cidr, ClassAdmin, signed(205, "", "", ""), "[::ffff:10.9.8.7]:1234", 0)
	f(cidr, ClassConfigRead, signed(319, "", "", ""), "127.0.0.1:1", 0)
	f(cidr, ClassAdmin, signed(205, "", "", ""), "192.168.0.1:1234", ReasonAddress)
	f(cidr, ClassAdmin, signed(205, "", "", ""), "127.0.0.2:1", ReasonAddress)
	f(cidr, ClassAdmin, signed(205, "", "", ""), "garbage", ReasonAddress)
	f(cidr, ClassOpen, signed(105, "", "", "", "topic", "T"), "192.168.0.1:1234", 0)
	// Broker codes too: brokerAllowCIDRs defaults to adminAllowCIDRs.
	f(cidr, ClassBrokerReport, signed(103, "", "", "{}"), "192.168.0.1:1234", ReasonAddress)
	f(cidr, ClassBrokerReport, signed(322, "", "", "{}"), "10.1.1.1:1234", 0)
	f(cidr, ClassBrokerWrite, signed(104, "", "", ""), "192.168.0.1:1234", ReasonAddress)

	// Both: the address first (an outsider learns nothing about accounts),
	// then the signature.
	both := mustPolicy(t, Options{Signatures: true, Accounts: testAccounts, AllowFrom: nets})
	f(both, ClassAdmin, signed(205, "admin-key", "admin-secret", ""), "10.0.0.1:1", 0)
	f(both, ClassAdmin, signed(205, "admin-key", "admin-secret", ""), "192.168.0.1:1", ReasonAddress)
	f(both, ClassAdmin, signed(205, "", "", ""), "192.168.0.1:1", ReasonAddress)
	f(both, ClassAdmin, signed(205, "", "", ""), "10.0.0.1:1", ReasonUnsigned)
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	f := func(o Options, wantSub string) {
		t.Helper()
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("New(%+v) = %v, want an error mentioning %q", o, err, wantSub)
		}
	}
	f(Options{Signatures: true}, "no account")
	f(Options{Accounts: []Account{{AccessKey: "admin-key", SecretKey: "admin-secret", Role: RoleAdmin}, {AccessKey: "admin-key", SecretKey: "other-secret", Role: RoleBroker}}}, "twice")
	f(Options{Accounts: []Account{{AccessKey: "admin-key", SecretKey: "short", Role: RoleAdmin}}}, "secretKey")
	f(Options{Accounts: []Account{{AccessKey: "admin-key", SecretKey: "admin-secret", Role: 0}}}, "no role")

	p := mustPolicy(t, Options{})
	if p.Enabled() {
		t.Fatal("an empty policy claims to be enabled")
	}
	if err := p.Check(ClassAdmin, signed(318, "", "", "x=y"), ""); err != nil {
		t.Fatalf("an empty policy refused: %v", err)
	}
}

func TestDenialRemark(t *testing.T) {
	t.Parallel()
	f := func(d Denial, want string) {
		t.Helper()
		if got := d.Error(); got != want {
			t.Fatalf("remark\n got %q\nwant %q", got, want)
		}
	}
	f(Denial{Code: 205, Reason: ReasonAddress, Peer: "192.168.0.1:5"},
		"no permission for WIPE_WRITE_PERM_OF_BROKER (205): source address 192.168.0.1:5 is not in adminAllowCIDRs")
	f(Denial{Code: 318, Reason: ReasonUnsigned},
		"no permission for UPDATE_NAMESRV_CONFIG (318): request not signed; authorization is on and this code needs the AccessKey and Signature of a configured account")
	f(Denial{Code: 100, Reason: ReasonUnknownAccount, AccessKey: "who"},
		`no permission for PUT_KV_CONFIG (100): unknown AccessKey "who"`)
	f(Denial{Code: 102, Reason: ReasonBadSignature, AccessKey: "admin-key"},
		`no permission for DELETE_KV_CONFIG (102): signature does not match for AccessKey "admin-key" (wrong secret key, or the request was altered)`)
	f(Denial{Code: 319, Reason: ReasonRole, Class: ClassConfigRead, AccessKey: "broker-key", Role: RoleBroker},
		`no permission for GET_NAMESRV_CONFIG (319): account "broker-key" has role broker; this code needs admin or readonly`)
}

// The signatures of the recorded Java mqadmin requests verify against
// mqadmin's default account: each passes as an admin code for an admin,
// and is refused for its role, not its signature, for a reader.
func TestPolicyAcceptsJavaAdmin(t *testing.T) {
	t.Parallel()
	admin := mustPolicy(t, Options{Signatures: true, Accounts: []Account{{AccessKey: "rocketmq2", SecretKey: "12345678", Role: RoleAdmin}}})
	reader := mustPolicy(t, Options{Signatures: true, Accounts: []Account{{AccessKey: "rocketmq2", SecretKey: "12345678", Role: RoleReadOnly}}})
	n := 0
	forEachSignedRecordedRequest(t, func(c *codec.Command) {
		n++
		if err := admin.Check(ClassAdmin, c, "127.0.0.1:1"); err != nil {
			t.Errorf("code %d: %v", c.Code, err)
		}
		if err := reader.Check(ClassConfigRead, c, "127.0.0.1:1"); err != nil {
			t.Errorf("readonly refused code %d as a config read: %v", c.Code, err)
		}
		var d *Denial
		if err := reader.Check(ClassAdmin, c, "127.0.0.1:1"); !errors.As(err, &d) || d.Reason != ReasonRole {
			t.Errorf("readonly code %d: %v, want a role refusal", c.Code, err)
		}
	})
	if n < 6 {
		t.Fatalf("only %d signed recorded requests", n)
	}
}

// The route path goes through Check on every request when authorization is
// on; open codes must cost nothing.
func TestCheckOpenCodeDoesNotAllocate(t *testing.T) {
	nets, _ := ParseCIDRs("10.0.0.0/8")
	p := mustPolicy(t, Options{Signatures: true, Accounts: testAccounts, AllowFrom: nets})
	req := signed(105, "", "", "", "topic", "T")
	if n := testing.AllocsPerRun(100, func() {
		if p.Check(ClassOpen, req, "192.168.0.1:1") != nil {
			t.Fatal("105 refused")
		}
	}); n != 0 {
		t.Fatalf("Check(105) allocates %v times", n)
	}
}

// A refusal quotes the AccessKey it was sent, cut short: a peer may send
// megabytes there, and the remark and log line must stay small.
func TestDenialQuotesALongAccessKeyShort(t *testing.T) {
	t.Parallel()
	p, err := New(Options{Signatures: true, Accounts: []Account{{AccessKey: "adminAK1", SecretKey: "adminSK1", Role: RoleAdmin}}})
	if err != nil {
		t.Fatal(err)
	}
	req := &codec.Command{Code: codec.PutKVConfig, HasExt: true}
	long := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	req.SetExt(FieldAccessKey, long)
	req.SetExt("Signature", "x")
	err = p.Check(ClassAdmin, req, "10.0.0.1:1")
	if err == nil {
		t.Fatal("unknown account accepted")
	}
	msg := err.Error()
	if len(msg) > 512 || !strings.Contains(msg, "...(1048576 bytes)") || !utf8.ValidString(msg) {
		t.Fatalf("refusal of %d bytes: %.300q", len(msg), msg)
	}
	if !strings.Contains(msg, `unknown AccessKey "éé`) {
		t.Fatalf("refusal does not quote the key's start: %.300q", msg)
	}
}
