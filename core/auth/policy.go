// The authorization policy: which checks apply to which codes, and the
// refusal a request gets.

package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
)

// Options configure a Policy. The mechanisms are independent and, when
// several are on, all must pass: an allowlist limits who can reach the
// protected codes at all, signatures say who is asking and what they may do.
type Options struct {
	// Signatures requires a valid ACL signature from an account in Accounts
	// whose role allows the code (authorizationEnable).
	Signatures bool
	Accounts   []Account
	// BrokerRegistration requires a signature on brokers' reports (103,
	// 322, 904; authorizeBrokerRegistration) as on every other protected
	// code. Without it, a report passes from a broker network or with a
	// valid broker account's signature.
	BrokerRegistration bool
	// AllowFrom, when not empty, admits protected codes only from peers in
	// these networks (adminAllowCIDRs).
	AllowFrom []netip.Prefix
	// BrokerAllowFrom are the networks brokers' codes (103, 104, 217, 322,
	// 904) may come from (brokerAllowCIDRs); nil means AllowFrom. The
	// admin networks may send them too.
	BrokerAllowFrom []netip.Prefix
	// Strict refuses compat signatures from every account
	// (aclStrictSignature); Account.Strict does it for one.
	Strict bool
	// StrictWindow is how far a strict signature's time may be from now,
	// either way; 0 means DefaultStrictWindow.
	StrictWindow time.Duration
	// Now is the clock of the strict window; nil means time.Now.
	Now func() time.Time
}

// DefaultStrictWindow is the strict signatures' default time window: wide
// enough for the clock skew of hosts kept in sync by NTP, short enough that
// a captured request is soon useless.
const DefaultStrictWindow = 5 * time.Minute

// Policy answers, for one request, serve or refuse. Its settings are
// immutable once built; the strict scheme's replay cache is its only
// changing state, behind a lock. It is safe for concurrent use.
type Policy struct {
	signatures bool
	brokers    bool
	strict     bool
	allowFrom  []netip.Prefix
	brokerFrom []netip.Prefix
	accounts   map[string]*account
	window     time.Duration
	now        func() time.Time
	nonces     nonceCache
}

type account struct {
	key     string
	secret  []byte
	role    Role
	brokers []string
	addrs   []netip.Prefix
	strict  bool
}

// New builds a policy. Signatures without accounts is an error: nothing
// could ever be authorized, which is a configuration mistake, not a policy.
func New(o Options) (*Policy, error) {
	p := &Policy{
		signatures: o.Signatures,
		brokers:    o.BrokerRegistration,
		strict:     o.Strict,
		allowFrom:  slices.Clone(o.AllowFrom),
		brokerFrom: slices.Clone(o.BrokerAllowFrom),
		accounts:   make(map[string]*account, len(o.Accounts)),
		window:     o.StrictWindow,
		now:        o.Now,
	}
	if p.brokerFrom == nil {
		p.brokerFrom = p.allowFrom
	}
	if p.window <= 0 {
		p.window = DefaultStrictWindow
	}
	if p.now == nil {
		p.now = time.Now
	}
	var errs []error
	for _, a := range o.Accounts {
		if err := a.check(); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := p.accounts[a.AccessKey]; dup {
			errs = append(errs, fmt.Errorf("accessKey %q defined twice", a.AccessKey))
			continue
		}
		p.accounts[a.AccessKey] = &account{key: a.AccessKey, secret: []byte(a.SecretKey), role: a.Role,
			brokers: slices.Clone(a.Brokers), addrs: slices.Clone(a.Addrs), strict: a.Strict}
	}
	if o.Signatures && len(o.Accounts) == 0 {
		errs = append(errs, errors.New("signatures required but no account configured"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("authorization: %w", errors.Join(errs...))
	}
	return p, nil
}

// Enabled reports whether the policy can refuse anything.
func (p *Policy) Enabled() bool {
	return p.signatures || len(p.allowFrom) > 0 || len(p.brokerFrom) > 0
}

// Protected reports whether a code of class c is checked under this
// policy: every class but the open one, once the policy is enabled.
func (p *Policy) Protected(c Class) bool { return c != ClassOpen && p.Enabled() }

// UnboundBrokers lists the broker accounts bound to no brokerName: they
// may act for any broker (a warning at start-up).
func (p *Policy) UnboundBrokers() []string {
	var out []string
	for k, a := range p.accounts {
		if a.role == RoleBroker && a.brokers == nil {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Grant is who a served request came from: the account that signed it, or
// nobody (AccessKey "") for a request admitted by its source address alone
// or by a policy that checks nothing.
type Grant struct {
	AccessKey string // the configured key, not the request's bytes
	Role      Role
	brokers   []string
}

// MayActFor reports whether the grant may act for brokerName: its
// account is bound to no brokerName, or to this one.
func (g Grant) MayActFor(brokerName string) bool {
	return g.brokers == nil || slices.Contains(g.brokers, brokerName)
}

// Owns reports whether the grant owns brokerName by configuration: an
// admin account, or a broker account bound to it by name. The route table
// lets such a registration replace one made with other credentials.
func (g Grant) Owns(brokerName string) bool {
	return g.Role == RoleAdmin || g.brokers != nil && slices.Contains(g.brokers, brokerName)
}

// Check is Authorize without the grant.
func (p *Policy) Check(class Class, req *codec.Command, peer string) error {
	_, err := p.Authorize(class, req, peer)
	return err
}

// Authorize returns who asks when req, of class, may be served to peer
// (host:port as net.Addr.String writes it), or a *Denial saying why not.
// Open codes return at once without looking at the request, so they cost a
// switch and allocate nothing. The address is checked before the
// signature: it is cheaper, and a peer outside the allowlist learns
// nothing about accounts.
func (p *Policy) Authorize(class Class, req *codec.Command, peer string) (Grant, error) {
	switch class {
	case ClassOpen:
		return Grant{}, nil
	case ClassBrokerReport, ClassBrokerWrite:
		return p.authorizeBroker(class, req, peer)
	}
	if len(p.allowFrom) > 0 && !allowed(p.allowFrom, PeerAddr(peer)) {
		return Grant{}, p.deny(req, ReasonAddress, class, peer)
	}
	if !p.signatures {
		return Grant{}, nil
	}
	return p.verifySigned(class, req, peer)
}

// authorizeBroker checks a broker-side code. A broker (or admin) network
// admits it, and so does a valid signature of a broker or admin account,
// from anywhere; a request that carries a signature must verify, wherever
// it comes from. With signatures on, broker writes (104, 217) must be
// signed. With BrokerRegistration every broker code must be signed and,
// when a network is set, come from one: both must pass.
func (p *Policy) authorizeBroker(class Class, req *codec.Command, peer string) (Grant, error) {
	if !p.Enabled() {
		return Grant{}, nil
	}
	addr := PeerAddr(peer)
	hasNets := len(p.brokerFrom) > 0 || len(p.allowFrom) > 0
	fromNet := allowed(p.brokerFrom, addr) || allowed(p.allowFrom, addr)
	if p.signatures && p.brokers {
		if hasNets && !fromNet {
			return Grant{}, p.deny(req, ReasonAddress, class, peer)
		}
		return p.verifySigned(class, req, peer)
	}
	if p.signatures && (class == ClassBrokerWrite || hasCredentials(req)) {
		return p.verifySigned(class, req, peer)
	}
	if fromNet {
		return Grant{}, nil
	}
	return Grant{}, p.deny(req, ReasonAddress, class, peer)
}

func hasCredentials(req *codec.Command) bool {
	ak, _ := req.ExtValue(FieldAccessKey)
	sig, _ := req.ExtValue(FieldSignature)
	return ak != "" || sig != ""
}

// verifySigned checks req's signature, in whichever scheme it carries, its
// account's role and bindings, and for a strict signature its time and
// nonce.
func (p *Policy) verifySigned(class Class, req *codec.Command, peer string) (Grant, error) {
	ak, okAK := req.ExtValue(FieldAccessKey)
	sig, okSig := req.ExtValue(FieldSignature)
	if !okAK || !okSig || ak == "" || sig == "" {
		return Grant{}, p.deny(req, ReasonUnsigned, class, peer)
	}
	acct, ok := p.accounts[ak]
	if !ok {
		return Grant{}, p.deny(req, ReasonUnknownAccount, class, peer)
	}
	scheme, strict := req.ExtValue(FieldSignScheme)
	var nonce string
	var expiry int64
	if strict {
		var r Reason
		if nonce, expiry, r = p.checkStrict(acct, req, scheme, sig); r != 0 {
			return Grant{}, p.deny(req, r, class, peer)
		}
	} else {
		if p.strict || acct.strict {
			return Grant{}, p.deny(req, ReasonNotStrict, class, peer)
		}
		if !verify(acct.secret, req.Ext, req.Body, sig) {
			return Grant{}, p.deny(req, ReasonBadSignature, class, peer)
		}
	}
	if !acct.role.May(class) {
		d := p.deny(req, ReasonRole, class, peer)
		d.Role = acct.role
		return Grant{}, d
	}
	if !acct.binds(req) {
		return Grant{}, p.deny(req, ReasonBinding, class, peer)
	}
	if !strict && foreignShape(req) != "" {
		return Grant{}, p.deny(req, ReasonForeign, class, peer)
	}
	if strict {
		// Last, so a request refused for another reason leaves no nonce.
		switch p.nonces.add(acct.key, nonce, expiry, p.now().UnixMilli()) {
		case nonceSeen:
			return Grant{}, p.deny(req, ReasonReplay, class, peer)
		case nonceFull:
			return Grant{}, p.deny(req, ReasonReplayCacheFull, class, peer)
		}
	}
	return Grant{AccessKey: acct.key, Role: acct.role, brokers: acct.brokers}, nil
}

// checkStrict verifies a strict signature and its time; it returns the
// nonce and the time (unix ms) until which it must be remembered.
func (p *Policy) checkStrict(acct *account, req *codec.Command, scheme, sig string) (nonce string, expiry int64, r Reason) {
	if scheme != StrictScheme {
		return "", 0, ReasonBadSignature
	}
	ts, _ := req.ExtValue(FieldSignTime)
	nonce, _ = req.ExtValue(FieldSignNonce)
	at, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || nonce == "" || len(nonce) > maxNonceLen {
		return "", 0, ReasonBadSignature
	}
	if !verifyStrict(acct.secret, req, sig) {
		return "", 0, ReasonBadSignature
	}
	now, w := p.now().UnixMilli(), p.window.Milliseconds()
	// at-now compared with the window without overflowing: at is any
	// int64 the signer chose.
	if at < now-w || at > now+w {
		return "", 0, ReasonStale
	}
	return nonce, at + w, 0
}

// binds reports whether the account may send req: the broker it names and
// the address it registers are within its bindings. A request that names
// no broker (a 904 from some broker versions, a 217, whose brokers are in
// its body: the server checks those with Grant.MayActFor) is not refused
// here. The address is brokerAddr on the NameServer's codes and the
// controller's 904, brokerAddress on the controller's 1003, and the part
// of registerCheckCode before ';' on its 1013 (the address the controller
// records for the id).
func (a *account) binds(req *codec.Command) bool {
	if a.brokers != nil {
		if name, ok := req.ExtValue("brokerName"); ok && !slices.Contains(a.brokers, name) {
			return false
		}
	}
	if a.addrs != nil {
		for _, key := range addrFields {
			addr, ok := req.ExtValue(key)
			if !ok {
				continue
			}
			if key == fieldCheckCode {
				addr, _, _ = strings.Cut(addr, ";")
			}
			if !allowed(a.addrs, PeerAddr(addr)) {
				return false
			}
		}
	}
	return true
}

// fieldCheckCode is the controller's 1013 field "address;time".
const fieldCheckCode = "registerCheckCode"

// addrFields are the fields in which a broker names its own address.
var addrFields = [...]string{"brokerAddr", "brokerAddress", fieldCheckCode}

// boundAddr is the first address field of req, for a refusal's remark.
func boundAddr(req *codec.Command) string {
	for _, key := range addrFields {
		if addr, ok := req.ExtValue(key); ok {
			return addr
		}
	}
	return ""
}

// foreignShape names what a compat-signed req carries that its code never
// does, "" when nothing. The compat signature does not cover the code, so
// a captured request verifies on any code with the same fields; these are
// the replays whose source the fields still show: a 322 or 103 (which have
// a body) as a 104, a 217 as a 216, a 100 as a 102, a 102 as a 100. No
// genuine client sends these shapes: Java's headers for 102 and 104 have
// no such field and its 104 and 216 no body, and 100 requires its value.
//
// On the controller's port: an admin's 1002 (designateElect) replayed as a
// 1011 would wipe a set without a master, a 1011 as a 1002 would elect;
// neither code carries the other's fields, and 1011 has no body (a 1009's
// properties).
func foreignShape(req *codec.Command) string {
	switch req.Code {
	case codec.UnregisterBroker, codec.DeleteTopicInNamesrv:
		if len(req.Body) > 0 {
			return "carries a body, which this code never has"
		}
	case codec.CleanBrokerData:
		if len(req.Body) > 0 {
			return "carries a body, which this code never has"
		}
		for _, f := range [...]string{"designateElect", "brokerId"} {
			if _, ok := req.ExtValue(f); ok {
				return "carries a " + f + " field, which this code never has"
			}
		}
	case codec.ControllerElectMaster:
		for _, f := range [...]string{"isCleanLivingBroker", "brokerControllerIdsToClean"} {
			if _, ok := req.ExtValue(f); ok {
				return "carries a " + f + " field, which this code never has"
			}
		}
	case codec.DeleteKVConfig:
		if _, ok := req.ExtValue("value"); ok {
			return "carries a value field, which this code never has"
		}
	case codec.PutKVConfig:
		if _, ok := req.ExtValue("value"); !ok {
			return "lacks the value field this code always has"
		}
	}
	return ""
}

func (p *Policy) deny(req *codec.Command, r Reason, class Class, peer string) *Denial {
	ak, _ := req.ExtValue(FieldAccessKey)
	// The strings point into the frame buffer; a Denial may be logged or
	// kept after the frame is released.
	d := &Denial{
		Code:      req.Code,
		Reason:    r,
		Class:     class,
		AccessKey: strings.Clone(shortKey(ak)),
		Peer:      strings.Clone(peer),
		Signable:  p.signatures,
	}
	switch r {
	case ReasonForeign:
		d.Detail = foreignShape(req)
	case ReasonBinding:
		name, _ := req.ExtValue("brokerName")
		d.Detail = fmt.Sprintf("broker %q at %q", shortKey(name), shortKey(boundAddr(req)))
	case ReasonStale:
		d.Detail = "more than " + p.window.String()
	}
	return d
}

// maxKeyEcho bounds the AccessKey a refusal quotes: the remark and the log
// line carry it, and a peer may send megabytes where a key is expected.
// Configured keys are a few dozen characters.
const maxKeyEcho = 128

func shortKey(ak string) string {
	if len(ak) <= maxKeyEcho {
		return ak
	}
	cut := maxKeyEcho
	for cut > maxKeyEcho-utf8.UTFMax && !utf8.RuneStart(ak[cut]) {
		cut--
	}
	return ak[:cut] + "...(" + strconv.Itoa(len(ak)) + " bytes)"
}

// Reason is why a request was refused.
type Reason uint8

const (
	ReasonAddress         Reason = iota + 1 // peer not in the allowlist
	ReasonUnsigned                          // AccessKey or Signature missing
	ReasonUnknownAccount                    // AccessKey not configured
	ReasonBadSignature                      // Signature does not match
	ReasonRole                              // the account's role does not allow the code
	ReasonBinding                           // the account is not bound to the broker or address
	ReasonNotStrict                         // a compat signature where the strict one is required
	ReasonStale                             // a strict signature outside its time window
	ReasonReplay                            // a strict signature's nonce seen before
	ReasonReplayCacheFull                   // too many nonces within the window to remember another
	ReasonForeign                           // the fields of another code (a replay across codes)
	ReasonTakeover                          // a broker registered with other credentials (the server's)
)

func (r Reason) String() string {
	switch r {
	case ReasonAddress:
		return "source address not allowed"
	case ReasonUnsigned:
		return "not signed"
	case ReasonUnknownAccount:
		return "unknown account"
	case ReasonBadSignature:
		return "bad signature"
	case ReasonRole:
		return "role not allowed"
	case ReasonBinding:
		return "broker not bound to the account"
	case ReasonNotStrict:
		return "strict signature required"
	case ReasonStale:
		return "signature time outside the window"
	case ReasonReplay:
		return "replayed"
	case ReasonReplayCacheFull:
		return "replay cache full"
	case ReasonForeign:
		return "fields of another request"
	case ReasonTakeover:
		return "broker registered with other credentials"
	}
	return "unknown"
}

// Denial is a refused request. Its Error text is the remark the client gets
// with NO_PERMISSION: which code, and why, in words an operator can act on.
// It never contains a secret.
type Denial struct {
	Code      int32
	Reason    Reason
	Class     Class
	AccessKey string // as sent; "" when none
	Role      Role   // the account's role, for ReasonRole
	Peer      string
	// Signable: signatures are on, so a broker account's signature would
	// admit a broker code refused for its address.
	Signable bool
	// Detail completes some reasons' remarks (what a foreign request
	// carries, the broker an account is not bound to).
	Detail string
}

func (d *Denial) Error() string {
	what := fmt.Sprintf("no permission for %s (%d)", codec.RequestCodeName(d.Code), d.Code)
	broker := d.Class == ClassBrokerReport || d.Class == ClassBrokerWrite
	switch d.Reason {
	case ReasonAddress:
		switch {
		case broker && d.Signable && d.Class == ClassBrokerReport:
			return fmt.Sprintf("%s: source address %s is not in brokerAllowCIDRs or adminAllowCIDRs, and the request is not signed by a broker account", what, d.Peer)
		case broker:
			return fmt.Sprintf("%s: source address %s is not in brokerAllowCIDRs or adminAllowCIDRs", what, d.Peer)
		}
		return fmt.Sprintf("%s: source address %s is not in adminAllowCIDRs", what, d.Peer)
	case ReasonUnsigned:
		return what + ": request not signed; authorization is on and this code needs the AccessKey and Signature of a configured account"
	case ReasonUnknownAccount:
		return fmt.Sprintf("%s: unknown AccessKey %q", what, d.AccessKey)
	case ReasonBadSignature:
		return fmt.Sprintf("%s: signature does not match for AccessKey %q (wrong secret key, or the request was altered)", what, d.AccessKey)
	case ReasonRole:
		return fmt.Sprintf("%s: account %q has role %s; this code needs %s", what, d.AccessKey, d.Role, rolesFor(d.Class))
	case ReasonBinding:
		return fmt.Sprintf("%s: account %q is not bound to %s (its brokers= and addrs= in aclFile)", what, d.AccessKey, d.Detail)
	case ReasonNotStrict:
		return fmt.Sprintf("%s: account %q must sign with the strict scheme (%s)", what, d.AccessKey, StrictScheme)
	case ReasonStale:
		return fmt.Sprintf("%s: the signature's SignTime is %s away from this server's clock", what, d.Detail)
	case ReasonReplay:
		return fmt.Sprintf("%s: this signed request (AccessKey %q, SignNonce) was already served", what, d.AccessKey)
	case ReasonReplayCacheFull:
		return what + ": too many strict-signed requests within the time window; retry later"
	case ReasonForeign:
		return fmt.Sprintf("%s: the signed request %s: a signature made for another code, replayed?", what, d.Detail)
	case ReasonTakeover:
		return fmt.Sprintf("%s: %s is registered with other credentials; only the same account, an admin or an account bound to its brokerName may replace or remove it", what, d.Detail)
	}
	return what
}
