// Accounts: access keys, their secrets and roles, and the file they are read
// from.

package auth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Account is one access key allowed to sign requests.
type Account struct {
	AccessKey string
	SecretKey string
	Role      Role
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
	return nil
}

// ParseAccounts reads an account file: one account per line as
// accessKey:secretKey:role, role being admin, broker or readonly. Blank
// lines and lines starting with '#' are skipped; blanks around each part are
// ignored. The secret key is everything between the first and the last
// colon, so it may itself contain colons. An access key may appear once.
// Every bad line is reported, with its number.
func ParseAccounts(r io.Reader) ([]Account, error) {
	sc := bufio.NewScanner(r)
	var (
		out  []Account
		errs []error
		seen = make(map[string]int)
	)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
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
