// The authorization policy: which checks apply to which codes, and the
// refusal a request gets.
package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
)

// Options configure a Policy. The two mechanisms are independent and, when
// both are on, both must pass: an allowlist limits who can reach the
// protected codes at all, signatures say who is asking and what they may do.
type Options struct {
	// Signatures requires a valid ACL signature from an account in Accounts
	// whose role allows the code (authorizationEnable).
	Signatures bool
	Accounts   []Account
	// BrokerRegistration extends the checks to brokers' reports (103, 322,
	// 904; authorizeBrokerRegistration).
	BrokerRegistration bool
	// AllowFrom, when not empty, admits protected codes only from peers in
	// these networks (adminAllowCIDRs).
	AllowFrom []netip.Prefix
}

// Policy answers, for one request, serve or refuse. It is immutable once
// built and safe for concurrent use.
type Policy struct {
	signatures bool
	brokers    bool
	allowFrom  []netip.Prefix
	accounts   map[string]account
}

type account struct {
	secret []byte
	role   Role
}

// New builds a policy. Signatures without accounts is an error: nothing
// could ever be authorized, which is a configuration mistake, not a policy.
func New(o Options) (*Policy, error) {
	p := &Policy{
		signatures: o.Signatures,
		brokers:    o.BrokerRegistration,
		allowFrom:  append([]netip.Prefix(nil), o.AllowFrom...),
		accounts:   make(map[string]account, len(o.Accounts)),
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
		p.accounts[a.AccessKey] = account{secret: []byte(a.SecretKey), role: a.Role}
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
func (p *Policy) Enabled() bool { return p.signatures || len(p.allowFrom) > 0 }

// Protected reports whether a code of class c is checked under this
// policy.
func (p *Policy) Protected(c Class) bool {
	switch c {
	case ClassOpen:
		return false
	case ClassBrokerReport:
		return p.brokers
	}
	return true
}

// Check returns nil when req, of class, may be served to peer (host:port
// as net.Addr.String writes it), or a *Denial saying why not. Open codes
// return at once without looking at the request, so they cost a switch
// and allocate nothing. The address is checked before the signature: it is
// cheaper, and a peer outside the allowlist learns nothing about accounts.
func (p *Policy) Check(class Class, req *codec.Command, peer string) error {
	switch {
	case class == ClassOpen:
		return nil
	case class == ClassBrokerReport && !p.brokers:
		return nil
	}
	if len(p.allowFrom) > 0 {
		if addr := PeerAddr(peer); !allowed(p.allowFrom, addr) {
			return p.deny(req, ReasonAddress, class, peer)
		}
	}
	if !p.signatures {
		return nil
	}
	ak, okAK := req.ExtValue(FieldAccessKey)
	sig, okSig := req.ExtValue(FieldSignature)
	if !okAK || !okSig || ak == "" || sig == "" {
		return p.deny(req, ReasonUnsigned, class, peer)
	}
	acct, ok := p.accounts[ak]
	if !ok {
		return p.deny(req, ReasonUnknownAccount, class, peer)
	}
	if !verify(acct.secret, req.Ext, req.Body, sig) {
		return p.deny(req, ReasonBadSignature, class, peer)
	}
	if !acct.role.May(class) {
		d := p.deny(req, ReasonRole, class, peer)
		d.Role = acct.role
		return d
	}
	return nil
}

func (p *Policy) deny(req *codec.Command, r Reason, class Class, peer string) *Denial {
	ak, _ := req.ExtValue(FieldAccessKey)
	// The strings point into the frame buffer; a Denial may be logged or
	// kept after the frame is released.
	return &Denial{
		Code:      req.Code,
		Reason:    r,
		Class:     class,
		AccessKey: strings.Clone(shortKey(ak)),
		Peer:      strings.Clone(peer),
	}
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
	ReasonAddress        Reason = iota + 1 // peer not in the allowlist
	ReasonUnsigned                         // AccessKey or Signature missing
	ReasonUnknownAccount                   // AccessKey not configured
	ReasonBadSignature                     // Signature does not match
	ReasonRole                             // the account's role does not allow the code
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
}

func (d *Denial) Error() string {
	what := fmt.Sprintf("no permission for %s (%d)", codec.RequestCodeName(d.Code), d.Code)
	switch d.Reason {
	case ReasonAddress:
		return fmt.Sprintf("%s: source address %s is not in adminAllowCIDRs", what, d.Peer)
	case ReasonUnsigned:
		return what + ": request not signed; authorization is on and this code needs the AccessKey and Signature of a configured account"
	case ReasonUnknownAccount:
		return fmt.Sprintf("%s: unknown AccessKey %q", what, d.AccessKey)
	case ReasonBadSignature:
		return fmt.Sprintf("%s: signature does not match for AccessKey %q (wrong secret key, or the request was altered)", what, d.AccessKey)
	case ReasonRole:
		return fmt.Sprintf("%s: account %q has role %s; this code needs %s", what, d.AccessKey, d.Role, rolesFor(d.Class))
	}
	return what
}
