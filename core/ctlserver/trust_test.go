// trust_test.go drives the attacks on the controller port from a stranger's
// connection, with the NameServer's allowlists and ACL accounts on: state
// changes a broker or an operator may make (1001, 1002, 1003, 1009, 1011,
// 1013, 904), refused; the reads that stay open; real brokers and admins
// served.

package ctlserver

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/auth"
	"github.com/rocketns/rocketns/core/controller"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
	"github.com/rocketns/rocketns/core/status"
)

// Loopback addresses of the three kinds of peer: every test peer is on
// loopback, and the allowlists tell them apart by source address.
const (
	brokerHost   = "127.0.0.1" // in brokerAllowCIDRs
	strangerHost = "127.0.0.2" // in no list
	adminHost    = "127.0.0.3" // in adminAllowCIDRs
)

// dialFrom connects to addr from the loopback address local.
func dialFrom(t testing.TB, local, addr string) *remotingtest.Wire {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return remotingtest.Over(t, nc)
}

// brokerFrom is a raw broker connected from local.
func brokerFrom(t *testing.T, s *Server, local, name string, id int64, addr string) *rawBroker {
	return &rawBroker{t: t, w: dialFrom(t, local, s.Addr().String()), name: name, id: id, addr: addr}
}

func mustCIDRs(t testing.TB, s string) []netip.Prefix {
	t.Helper()
	n, err := auth.ParseCIDRs(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// guarded is a single node enforcing the policy o describes.
func guarded(t *testing.T, o auth.Options, edit func(*Config)) *Server {
	t.Helper()
	p, err := auth.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return single(t, func(c *Config) {
		c.Auth = p
		if edit != nil {
			edit(c)
		}
	})
}

// allowlisted is the allowlists of the attack reports: brokers from
// brokerHost, admins from adminHost.
func allowlisted(t *testing.T) auth.Options {
	return auth.Options{AllowFrom: mustCIDRs(t, adminHost+"/32"), BrokerAllowFrom: mustCIDRs(t, brokerHost+"/32")}
}

// pairWithSet registers broker-a ids 1 and 2 from brokerHost, heartbeats
// both, elects 1 and has it take 2 into its SyncStateSet.
func pairWithSet(t *testing.T, s *Server) (b1, b2 *rawBroker) {
	t.Helper()
	b1 = brokerFrom(t, s, brokerHost, "broker-a", 1, "127.0.0.1:30911")
	b2 = brokerFrom(t, s, brokerHost, "broker-a", 2, "127.0.0.1:30921")
	for _, b := range []*rawBroker{b1, b2} {
		b.register()
		b.heartbeat()
	}
	if r := b1.elect(); r.Code != codec.Success || ext(r, "masterBrokerId") != "1" {
		t.Fatalf("the broker's own 1002: %d %q %v", r.Code, r.Remark, r.Ext)
	}
	alter := b1.req(codec.ControllerAlterSyncStateSet, "brokerName", "broker-a", "masterBrokerId", "1", "masterEpoch", "1")
	alter.Body = []byte(`{"syncStateSet":[1,2],"syncStateSetEpoch":1}`)
	if r := b1.w.Call(alter); r.Code != codec.Success {
		t.Fatalf("the master's 1001: %d %q", r.Code, r.Remark)
	}
	return b1, b2
}

func groupOf(t *testing.T, s *Server, name string) status.ControllerGroup {
	t.Helper()
	for _, g := range s.Groups() {
		if g.BrokerName == name {
			return g
		}
	}
	t.Fatalf("no set %s", name)
	return status.ControllerGroup{}
}

// The findings of the attack report, from a stranger's connection: 1003
// rewrote a master's address, 1002 with designateElect moved the master,
// 1011 with isCleanLivingBroker wiped a living set, 1009 turned on unclean
// elections. With the allowlists on, each is refused NO_PERMISSION with
// the NameServer's remark and changes nothing; so are the other state
// changes, and the configuration read. The open reads are served.
func TestStrangerCannotChangeState(t *testing.T) {
	s := guarded(t, allowlisted(t), nil)
	pairWithSet(t, s)
	st := dialFrom(t, strangerHost, s.Addr().String())
	var opaque int32
	refused := func(what string, code int32, body string, kv ...string) {
		t.Helper()
		opaque++
		req := request(code, opaque, kv...)
		if body != "" {
			req.Body = []byte(body)
		}
		r := st.Call(req)
		want := "no permission for " + codec.RequestCodeName(code) + " (" + strconv.Itoa(int(code)) + "): source address " + strangerHost + ":"
		if r.Code != codec.NoPermission || !strings.HasPrefix(r.Remark, want) || r.HasExt || len(r.Body) != 0 {
			t.Errorf("%s from a stranger: %d %q ext %v, want 16 %q...", what, r.Code, r.Remark, r.HasExt, want)
		}
	}
	ids := []string{"clusterName", "DefaultCluster", "brokerName", "broker-a"}
	with := func(kv ...string) []string { return append(append([]string(nil), ids...), kv...) }
	refused("1003 rewriting the master's address", codec.ControllerRegisterBroker, "", with("brokerId", "1", "brokerAddress", "6.6.6.6:10911")...)
	refused("1002 designating a master", codec.ControllerElectMaster, "", with("brokerId", "2", "designateElect", "true")...)
	refused("1002 as the controller's trigger", codec.ControllerElectMaster, "", "brokerName", "broker-a")
	refused("1002 as a broker's trigger", codec.ControllerElectMaster, "", with("brokerId", "2", "designateElect", "false")...)
	refused("1011 cleaning a living set", codec.CleanBrokerData, "", with("isCleanLivingBroker", "true")...)
	refused("1009 enabling unclean elections", codec.UpdateControllerConfig, "enableElectUncleanMaster=true\n")
	refused("1010", codec.GetControllerConfig, "")
	refused("1001", codec.ControllerAlterSyncStateSet, `{"syncStateSet":[1],"syncStateSetEpoch":2}`,
		"brokerName", "broker-a", "masterBrokerId", "1", "masterEpoch", "1")
	refused("1013 creating a set", codec.ControllerApplyBrokerID, "", "clusterName", "c", "brokerName", "evil",
		"appliedBrokerId", "1", "registerCheckCode", "6.6.6.6:1;1")
	refused("904 for the master", codec.BrokerHeartbeat, "", with("brokerId", "1", "brokerAddr", "6.6.6.6:10911", "heartbeatTimeoutMills", "1")...)

	g := groupOf(t, s, "broker-a")
	if !g.HasMaster || g.MasterID != 1 || g.MasterAddr != "127.0.0.1:30911" || len(g.Members) != 2 || len(g.SyncStateSet) != 2 {
		t.Fatalf("the set changed: %+v", g)
	}
	if len(s.Groups()) != 1 {
		t.Fatalf("a stranger created a set: %+v", s.Groups())
	}
	if s.runtime().EnableElectUncleanMaster {
		t.Fatal("a stranger turned on unclean elections")
	}
	s.liveMu.Lock()
	info, _ := s.live.Info(controller.LiveKey{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1})
	s.liveMu.Unlock()
	if info.Timeout != 10000 || info.Addr != "127.0.0.1:30911" {
		t.Fatalf("a stranger's heartbeat was recorded: %+v", info)
	}
	if n := s.Refusals()["address"]; n != 10 {
		t.Fatalf("%d refusals counted, want 10 (%v)", n, s.Refusals())
	}

	// The reads every broker and mqadmin make stay open.
	open := func(what string, req *codec.Command) {
		t.Helper()
		if r := st.Call(req); r.Code != codec.Success {
			t.Errorf("%s from a stranger: %d %q", what, r.Code, r.Remark)
		}
	}
	open("1005", request(codec.ControllerGetMetadataInfo, 100))
	open("1004", request(codec.ControllerGetReplicaInfo, 101, "brokerName", "broker-a"))
	open("1012", request(codec.ControllerGetNextBrokerID, 102, ids...))
	sync := request(codec.ControllerGetSyncStateData, 103)
	sync.Body = []byte(`["broker-a"]`)
	open("1006", sync)
}

// A broker network is not an admin network: a broker may ask for its own
// set's election, not name a master or change the settings. An admin
// network may do both, and the broker codes too.
func TestBrokerAndAdminNetworks(t *testing.T) {
	s := guarded(t, allowlisted(t), nil)
	b1, _ := pairWithSet(t, s)
	if r := b1.call(codec.UpdateControllerConfig); r.Code != codec.NoPermission ||
		!strings.HasSuffix(r.Remark, "is not in adminAllowCIDRs") {
		t.Fatalf("1009 from a broker: %d %q", r.Code, r.Remark)
	}
	if r := b1.call(codec.ControllerElectMaster, append(b1.ids(), "brokerId", "2", "designateElect", "true")...); r.Code != codec.NoPermission {
		t.Fatalf("an admin 1002 from a broker: %d %q", r.Code, r.Remark)
	}
	admin := dialFrom(t, adminHost, s.Addr().String())
	if r := admin.Call(request(codec.GetControllerConfig, 1)); r.Code != codec.Success || len(r.Body) == 0 {
		t.Fatalf("1010 from an admin: %d %q", r.Code, r.Remark)
	}
	upd := request(codec.UpdateControllerConfig, 2)
	upd.Body = []byte("enableElectUncleanMaster=true\n")
	if r := admin.Call(upd); r.Code != codec.Success || !s.runtime().EnableElectUncleanMaster {
		t.Fatalf("1009 from an admin: %d %q", r.Code, r.Remark)
	}
	r := admin.Call(request(codec.ControllerElectMaster, 3, append(b1.ids(), "brokerId", "2", "designateElect", "true")...))
	if r.Code != codec.Success || ext(r, "masterBrokerId") != "2" {
		t.Fatalf("an admin 1002: %d %q %v", r.Code, r.Remark, r.Ext)
	}
	if r := admin.Call(request(codec.ControllerGetNextBrokerID, 4, b1.ids()...)); r.Code != codec.Success {
		t.Fatalf("1012 from an admin: %d", r.Code)
	}
}

// signedReq is req signed by ak/sk in the compat scheme (mqadmin's with
// tools.yml, a Java broker's with credentials).
func signedReq(req *codec.Command, ak, sk string) *codec.Command {
	req.SetExt(auth.FieldAccessKey, ak)
	req.SetExt(auth.FieldSignature, auth.Sign(sk, req.Ext, req.Body))
	return req
}

// With authorizationEnable, a signature says who asks, from anywhere: an
// admin account may change settings, a readonly one read them, a broker
// account bound to broker-a act only for broker-a at its own addresses.
// Unsigned state changes from outside the broker network are refused, and
// a signed admin 1002 replayed as 1011 is told apart.
func TestSignedAccountsOnTheControllerPort(t *testing.T) {
	o := auth.Options{
		Signatures:      true,
		BrokerAllowFrom: mustCIDRs(t, brokerHost+"/32"),
		Accounts: []auth.Account{
			{AccessKey: "rocketmq2", SecretKey: "12345678", Role: auth.RoleAdmin},
			{AccessKey: "reader-key", SecretKey: "reader-secret", Role: auth.RoleReadOnly},
			{AccessKey: "broker-a-key", SecretKey: "broker-a-secret", Role: auth.RoleBroker,
				Brokers: []string{"broker-a"}, Addrs: mustCIDRs(t, "127.0.0.0/8")},
		},
	}
	s := guarded(t, o, nil)
	b1, _ := pairWithSet(t, s)
	st := dialFrom(t, strangerHost, s.Addr().String())
	var opaque int32
	do := func(req *codec.Command, ak, sk string) *codec.Command {
		t.Helper()
		opaque++
		req.Opaque = opaque
		if ak != "" {
			signedReq(req, ak, sk)
		}
		return st.Call(req)
	}
	expect := func(what string, r *codec.Command, code int32, remark string) {
		t.Helper()
		if r.Code != code || !strings.Contains(r.Remark, remark) {
			t.Errorf("%s: %d %q, want %d %q", what, r.Code, r.Remark, code, remark)
		}
	}
	update := func() *codec.Command {
		req := request(codec.UpdateControllerConfig, 0)
		req.Body = []byte("electMasterMaxRetryCount=5\n")
		return req
	}
	expect("unsigned 1009", do(update(), "", ""), codec.NoPermission, "request not signed")
	expect("1009 signed readonly", do(update(), "reader-key", "reader-secret"), codec.NoPermission, `account "reader-key" has role readonly; this code needs admin`)
	expect("1009 with a bad signature", do(update(), "rocketmq2", "wrong-secret"), codec.NoPermission, "signature does not match")
	expect("1009 signed admin", do(update(), "rocketmq2", "12345678"), codec.Success, "")
	if s.runtime().ElectMasterMaxRetryCount != 5 {
		t.Fatal("the signed admin's 1009 did not apply")
	}
	expect("1010 signed readonly", do(request(codec.GetControllerConfig, 0), "reader-key", "reader-secret"), codec.Success, "")

	reg := func(name, addr string) *codec.Command {
		return request(codec.ControllerRegisterBroker, 0, "clusterName", "DefaultCluster", "brokerName", name, "brokerId", "1", "brokerAddress", addr)
	}
	expect("unsigned 1003", do(reg("broker-a", "127.0.0.1:30911"), "", ""), codec.NoPermission, "not in brokerAllowCIDRs or adminAllowCIDRs, and the request is not signed by a broker account")
	expect("1003 for another set", do(reg("broker-b", "127.0.0.1:30911"), "broker-a-key", "broker-a-secret"), codec.NoPermission, `not bound to broker "broker-b"`)
	expect("1003 to an address outside the account's", do(reg("broker-a", "6.6.6.6:10911"), "broker-a-key", "broker-a-secret"), codec.NoPermission, `at "6.6.6.6:10911"`)
	expect("1003 signed by the set's account", do(reg("broker-a", "127.0.0.1:30911"), "broker-a-key", "broker-a-secret"), codec.Success, "")
	if g := groupOf(t, s, "broker-a"); g.MasterAddr != "127.0.0.1:30911" {
		t.Fatalf("the master's address moved: %+v", g)
	}

	// mqadmin's 1002 (its fields as recorded) replayed as a 1011.
	elect := signedReq(request(codec.ControllerElectMaster, 50, append(b1.ids(), "brokerId", "1", "designateElect", "true", "invokeTime", "1")...), "rocketmq2", "12345678")
	clean := *elect
	clean.Code = codec.CleanBrokerData
	expect("an admin 1002 replayed as 1011", st.Call(&clean), codec.NoPermission, "a signature made for another code")
}
