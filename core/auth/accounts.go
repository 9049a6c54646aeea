// Accounts: access keys, their secrets and roles, and the file they are read
// from.

package auth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
)

// Account is one access key allowed to sign requests.
type Account struct {
	AccessKey string
	SecretKey string
	Role      Role
	// Brokers, for a broker account, are the brokerNames it may register,
	// report for and unregister; nil means any. A request that names a
	// broker (its brokerName field, or the queue data of a 217) outside
	// the list is refused.
	Brokers []string
	// Addrs, for a broker account, are the networks the brokerAddr it
	// registers must be in; nil means any. It keeps a stolen broker key
	// from pointing clients at an address of the thief's choosing.
	Addrs []netip.Prefix
	// Strict requires this account's requests to use the strict signature
	// scheme (SignStrict): a compat signature from it is refused.
	Strict bool
}

// minKeyLen follows Java's plain ACL, which refuses access and secret keys
// of 6 characters or fewer.
const minKeyLen = 7

// check refuses accounts Java's plain ACL would refuse, and keys that could
// not survive the file format.
func (a Account) check() error {
	if len(a.AccessKey) < minKeyLen {
		return fmt.Errorf("accessKey %q: want at least %d characters", a.AccessKey, minKeyLen)
	}
	if strings.ContainsAny(a.AccessKey, ": \t") {
		return fmt.Errorf("accessKey %q: must not contain ':' or blanks", a.AccessKey)
	}
	if len(a.SecretKey) < minKeyLen {
		return fmt.Errorf("accessKey %q: secretKey: want at least %d characters", a.AccessKey, minKeyLen)
	}
	if a.Role < RoleReadOnly || a.Role > RoleAdmin {
		return fmt.Errorf("accessKey %q: no role", a.AccessKey)
	}
	if (a.Brokers != nil || a.Addrs != nil) && a.Role != RoleBroker {
		return fmt.Errorf("accessKey %q: brokers= and addrs= bind a broker account; this one has role %s", a.AccessKey, a.Role)
	}
	for _, n := range a.Brokers {
		if n == "" || strings.ContainsAny(n, ", \t") {
			return fmt.Errorf("accessKey %q: broker name %q: want a brokerName without ',' or blanks", a.AccessKey, n)
		}
	}
	return nil
}

// ParseAccounts reads an account file: one account per line as
// accessKey:secretKey:role, role being admin, broker or readonly. Blank
// lines and lines starting with '#' are skipped; blanks around each part are
// ignored. The secret key is everything between the first and the last
// colon, so it may itself contain colons. An access key may appear once.
//
// An options line, the access key then blank-separated options, adds to an
// account defined anywhere in the file (once per key):
//
//	broker-a-key brokers=broker-a,broker-a-s addrs=10.0.1.0/24 strict
//
// brokers= and addrs= bind a broker account (Account.Brokers, Addrs);
// strict requires the strict signature scheme (Account.Strict). An options
// line is told from an account line by its first blank coming before any
// colon, which no account line can have: an access key holds no blank.
// Every bad line is reported, with its number.
func ParseAccounts(r io.Reader) ([]Account, error) {
	sc := bufio.NewScanner(r)
	var (
		out  []Account
		errs []error
		seen = make(map[string]int)
		opts []optionLine
	)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		if isOptionLine(text) {
			o, err := parseOptionLine(text)
			if err != nil {
				errs = append(errs, fmt.Errorf("line %d: %w", line, err))
				continue
			}
			o.line = line
			opts = append(opts, o)
			continue
		}
		first, last := strings.IndexByte(text, ':'), strings.LastIndexByte(text, ':')
		if first < 0 || first == last {
			// Only the access key is quoted: the line may hold a secret.
			errs = append(errs, fmt.Errorf("line %d: want accessKey:secretKey:role", line))
			continue
		}
		role, err := ParseRole(text[last+1:])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		a := Account{
			AccessKey: strings.TrimSpace(text[:first]),
			SecretKey: strings.TrimSpace(text[first+1 : last]),
			Role:      role,
		}
		if err := a.check(); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		if prev, dup := seen[a.AccessKey]; dup {
			errs = append(errs, fmt.Errorf("line %d: accessKey %q already defined on line %d", line, a.AccessKey, prev))
			continue
		}
		seen[a.AccessKey] = line
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, applyOptions(out, opts)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// LoadAccounts reads the account file at path (see ParseAccounts).
func LoadAccounts(path string) ([]Account, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("account file: %w", err)
	}
	defer f.Close()
	accts, err := ParseAccounts(f)
	if err != nil {
		return nil, fmt.Errorf("account file %s: %w", path, err)
	}
	return accts, nil
}

// optionLine is one options line of an account file.
type optionLine struct {
	line      int
	accessKey string
	brokers   []string
	addrs     []netip.Prefix
	strict    bool
}

// isOptionLine reports whether text (trimmed, not a comment) is an options
// line: its first token ends at a blank, and what follows does not start
// with the colon of an account line ("key : secret : role" is one).
func isOptionLine(text string) bool {
	blank := strings.IndexAny(text, " \t")
	if blank < 0 {
		return false
	}
	if colon := strings.IndexByte(text, ':'); colon >= 0 && colon < blank {
		return false
	}
	// The first option must look like one, so that a mistyped account
	// line ("rocket mq:secret:admin") is reported as one, without its
	// secret being quoted as an option.
	first := strings.Fields(text[blank:])[0]
	name, _, hasVal := strings.Cut(first, "=")
	return (hasVal || first == "strict") && isOptionName(name)
}

// isOptionName reports whether s can be quoted in an error: letters only.
func isOptionName(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return s != ""
}

func parseOptionLine(text string) (optionLine, error) {
	f := strings.Fields(text)
	o := optionLine{accessKey: f[0]}
	seen := map[string]bool{}
	for _, opt := range f[1:] {
		name, val, hasVal := strings.Cut(opt, "=")
		if seen[name] {
			return o, fmt.Errorf("accessKey %q: option %s given twice", o.accessKey, name)
		}
		seen[name] = true
		switch {
		case name == "brokers" && hasVal:
			for _, n := range strings.Split(val, ",") {
				if n == "" {
					return o, fmt.Errorf("accessKey %q: brokers=%s: an empty broker name", o.accessKey, val)
				}
				o.brokers = append(o.brokers, n)
			}
		case name == "addrs" && hasVal:
			nets, err := ParseCIDRs(val)
			if err != nil {
				return o, fmt.Errorf("accessKey %q: addrs=: %w", o.accessKey, err)
			}
			if len(nets) == 0 {
				return o, fmt.Errorf("accessKey %q: addrs= names no network", o.accessKey)
			}
			o.addrs = nets
		case name == "strict" && !hasVal:
			o.strict = true
		case !isOptionName(name):
			// Not quoted: a misplaced line may hold a secret.
			return o, fmt.Errorf("accessKey %q: an option that is not name=value: want brokers=names, addrs=networks or strict", o.accessKey)
		default:
			return o, fmt.Errorf("accessKey %q: unknown option %q: want brokers=names, addrs=networks or strict", o.accessKey, name)
		}
	}
	return o, nil
}

// applyOptions gives each account its options line.
func applyOptions(accts []Account, opts []optionLine) []error {
	var errs []error
	byKey := make(map[string]int, len(accts))
	for i := range accts {
		byKey[accts[i].AccessKey] = i
	}
	done := map[string]int{}
	for _, o := range opts {
		i, ok := byKey[o.accessKey]
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: options for accessKey %q, which no line defines", o.line, o.accessKey))
			continue
		}
		if prev, dup := done[o.accessKey]; dup {
			errs = append(errs, fmt.Errorf("line %d: options for accessKey %q already given on line %d", o.line, o.accessKey, prev))
			continue
		}
		done[o.accessKey] = o.line
		a := accts[i]
		a.Brokers, a.Addrs, a.Strict = o.brokers, o.addrs, o.strict
		if err := a.check(); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", o.line, err))
			continue
		}
		accts[i] = a
	}
	return errs
}
