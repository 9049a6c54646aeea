// Run-time configuration updates, the NameServer's UPDATE_NAMESRV_CONFIG
// (318) and the controller's UPDATE_CONTROLLER_CONFIG (1009): which keys a
// remote peer may change, the checks, atomic persistence, and how a
// refusal is answered.

package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/atomicfile"
	"github.com/rocketns/rocketns/core/logcap"
)

// RuntimeKeys returns the keys an UPDATE of role may change, sorted: the
// settings it reads per request, none of them a path or anything that
// could turn into one. Java accepts every key and silently only persists
// the rest; accepting a key that has no effect until a restart misleads
// the operator, and accepting unknown keys lets a peer write arbitrary
// lines into the persisted file.
func RuntimeKeys(r Role) []string {
	var out []string
	for i := range keys {
		if k := &keys[i]; k.Runtime && k.Roles&r != 0 {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Reasons an update is refused.
var (
	// ErrBlackListed: a key is on the black list (Java's NO_PERMISSION
	// "Can not update config in black list.").
	ErrBlackListed = errors.New("can not update config in black list")
	// ErrNotRuntime: a key can only be set in the config file.
	ErrNotRuntime = errors.New("can only be set in the config file")
	// ErrBadValue: a value does not parse, or is out of its range.
	ErrBadValue = errors.New("bad value")
	// ErrNotPersisted: the update could not be written, and was not
	// applied.
	ErrNotPersisted = errors.New("the configuration file could not be written")
)

// UpdateError is a refused update: Key is the first offending key, Err one
// of ErrBlackListed, ErrNotRuntime, ErrBadValue or ErrNotPersisted.
type UpdateError struct {
	// Role is whose update it was.
	Role Role
	Key  string
	Err  error
	// Detail says more (the parse error, why persisting failed), may be
	// empty.
	Detail string
}

func (e *UpdateError) Error() string {
	switch {
	case errors.Is(e.Err, ErrNotRuntime):
		return fmt.Sprintf("%s can only be set in the config file, not at run time; keys that can: %v", e.Key, RuntimeKeys(e.Role))
	case errors.Is(e.Err, ErrNotPersisted):
		return fmt.Sprintf("config update not persisted: %v: %s", e.Err, e.Detail)
	case e.Detail != "":
		return fmt.Sprintf("config update: %s: %v: %s", e.Key, e.Err, e.Detail)
	}
	return fmt.Sprintf("config update: %s: %v", e.Key, e.Err)
}

func (e *UpdateError) Unwrap() error { return e.Err }

// errBadBody: an UPDATE's body is not properties text.
var errBadBody = errors.New("string2Properties error")

// UpdateBody reads the body of an UPDATE (318, 1009): its properties; none
// (nothing changes) for an empty body or one of comments only; an error
// for one that is not properties text.
func UpdateBody(body []byte) ([]properties.Property, error) {
	if len(body) == 0 {
		return nil, nil
	}
	props, err := properties.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadBody, err)
	}
	return props, nil
}

// maxEcho bounds the request text a remark quotes back, as the
// NameServer's other remarks do.
const maxEcho = 255

// Refusal is how an UPDATE answers err (from UpdateBody, RuntimeUpdate or
// PersistUpdate), as Java does where Java refuses: NO_PERMISSION with
// Java's remark for a black-listed key, SYSTEM_ERROR "string2Properties
// error" for a body that does not parse. A key that is not a run-time one
// is NO_PERMISSION, the other refusals SYSTEM_ERROR, with the error's text
// as the remark, the request's strings cut short; a failure to persist
// with a fixed one, since the error names a path of the server.
func Refusal(err error) (code int32, remark string) {
	var ue *UpdateError
	switch {
	case errors.Is(err, errBadBody):
		return codec.SystemError, errBadBody.Error()
	case !errors.As(err, &ue):
		return codec.SystemError, err.Error()
	case errors.Is(ue.Err, ErrBlackListed):
		return codec.NoPermission, "Can not update config in black list."
	case errors.Is(ue.Err, ErrNotPersisted):
		return codec.SystemError, "persist config: " + ErrNotPersisted.Error() + "; nothing was changed (the " + ue.Role.String() + "'s log says why)"
	}
	short := *ue
	short.Key, short.Detail = logcap.Cut(ue.Key, maxEcho), logcap.Cut(ue.Detail, maxEcho)
	if errors.Is(ue.Err, ErrNotRuntime) {
		return codec.NoPermission, short.Error()
	}
	return codec.SystemError, short.Error()
}

// inBlackList reports whether an UPDATE of role must refuse to change key:
// a black-listed key of the role (refused whatever configBlackList says,
// as 4.9.8 and 5.2.0 do: letting a remote peer move these paths is
// CVE-2023-37582), or one that list (configBlackList) names.
func inBlackList(r Role, list, key string) bool {
	if k := lookup(key); k != nil && k.BlackListed && k.Roles&r != 0 {
		return true
	}
	return slices.Contains(splitList(list), key)
}

// splitList splits a ;-separated list, dropping blanks around and between
// its entries.
func splitList(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// InBlackList reports whether UPDATE_NAMESRV_CONFIG must refuse to change key.
func (c *Config) InBlackList(key string) bool {
	return inBlackList(RoleNameServer, c.ConfigBlackList, key)
}

// checkUpdate runs the checks of an UPDATE of role over every key before
// anything is applied, in order: the black list, the run-time keys, the
// values, their ranges. It returns each property's value, typed.
func checkUpdate(r Role, blackList string, props []properties.Property) ([]any, error) {
	for _, p := range props {
		if inBlackList(r, blackList, p.Key) {
			return nil, &UpdateError{Role: r, Key: p.Key, Err: ErrBlackListed}
		}
	}
	for _, p := range props {
		if k := lookup(p.Key); k == nil || !k.Runtime || k.Roles&r == 0 {
			return nil, &UpdateError{Role: r, Key: p.Key, Err: ErrNotRuntime}
		}
	}
	vals := make([]any, len(props))
	for i, p := range props {
		v, err := parseValue(lookup(p.Key), p, Source{Kind: SourceUpdate})
		if err != nil {
			return nil, &UpdateError{Role: r, Key: p.Key, Err: ErrBadValue, Detail: err.(*ValueError).Reason}
		}
		vals[i] = v
	}
	for i, p := range props {
		if why := lookup(p.Key).Range.check(asInt64(vals[i])); why != "" {
			return nil, &UpdateError{Role: r, Key: p.Key, Err: ErrBadValue, Detail: why}
		}
	}
	return vals, nil
}

// RuntimeUpdate returns a copy of c with props applied, or an *UpdateError
// and no copy: every key must pass before anything is applied. c itself is
// never modified, so a server can swap the copy in atomically.
func (c *Config) RuntimeUpdate(props []properties.Property) (*Config, error) {
	vals, err := checkUpdate(RoleNameServer, c.ConfigBlackList, props)
	if err != nil {
		return nil, err
	}
	n := c.Clone()
	for i, p := range props {
		lookup(p.Key).set(n, vals[i])
		n.setSource(p.Key, Source{Kind: SourceUpdate})
	}
	return n, nil
}

// OverriddenAtStart returns those of keys whose value at start came from
// the environment or a flag: an update persisted into the file is
// overridden by them again at the next start, which the operator should
// hear about.
func (c *Config) OverriddenAtStart(keys []string) []string {
	var out []string
	for _, k := range keys {
		if s := c.Source(k); s.Kind == SourceEnv || s.Kind == SourceFlag {
			out = append(out, k+" ("+s.String()+")")
		}
	}
	return out
}

// PersistUpdate records an accepted run-time update in the configuration
// file at path, the -c file (Java persists updates there too): each of keys
// gets c's value (persist says how).
func (c *Config) PersistUpdate(path string, keys []string) error {
	props := make([]properties.Property, len(keys))
	for i, name := range keys {
		k := lookup(name)
		if k == nil {
			return fmt.Errorf("config: persist %q: not a known key", name)
		}
		props[i] = properties.Property{Key: name, Value: k.Value(c)}
	}
	return persist(RoleNameServer, path, props)
}

// persist writes props into the properties file at path: each key where
// the file writes it, continuation lines and all, or appended at the end
// when the file does not have it. Every other byte of the file stays as
// it was: comments, blank lines, order, the other keys. A key whose value
// in the file already means the new one ("TRUE" for true) is left as
// written; when nothing changes the file is not rewritten.
//
// The file is replaced atomically (a crash leaves the old or the new one)
// and its previous content is kept in <path>.bak. A file that no longer
// parses is left alone and the update refused: rewriting it would lose
// whatever the operator was in the middle of. A missing file is created
// with just props. A failure is an *UpdateError wrapping ErrNotPersisted.
func persist(r Role, path string, props []properties.Property) error {
	fail := func(err error) error { return &UpdateError{Role: r, Err: ErrNotPersisted, Detail: err.Error()} }
	prev, err := atomicfile.Previous(path)
	if err != nil {
		return fail(err)
	}
	doc, err := properties.ParseDocument(prev)
	if err != nil {
		return fail(fmt.Errorf("%s no longer parses, left as it is: %w", path, err))
	}
	changed := false
	for _, p := range props {
		if cur, ok := doc.Get(p.Key); ok && sameValue(p.Key, cur, p.Value) {
			continue
		}
		changed = doc.Set(p.Key, p.Value) || changed
	}
	if !changed {
		return nil
	}
	if _, err := atomicfile.Replace(path, doc.Bytes(), prev); err != nil {
		return fail(err)
	}
	return nil
}

// sameValue reports whether a and b are the same value of key: as the
// table's type reads them, or byte for byte for a key it does not know.
func sameValue(key, a, b string) bool {
	k := lookup(key)
	if k == nil {
		return a == b
	}
	va, errA := parseValue(k, properties.Property{Key: key, Value: a}, Source{})
	vb, errB := parseValue(k, properties.Property{Key: key, Value: b}, Source{})
	return errA == nil && errB == nil && va == vb
}
