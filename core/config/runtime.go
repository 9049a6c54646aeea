// Run-time configuration updates (UPDATE_NAMESRV_CONFIG): which keys a
// remote peer may change, the checks, and atomic persistence of the result.

package config

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/atomicfile"
)

// runtimeKeys are the only keys UPDATE_NAMESRV_CONFIG accepts: settings the
// server reads per request, none of them a path or anything that could turn
// into one. Java accepts every key and silently only persists the rest;
// accepting a key that has no effect until a restart misleads the operator,
// and accepting unknown keys lets a peer write arbitrary lines into the
// persisted file. Never modified.
var runtimeKeys = []string{
	"orderMessageEnable",
	"returnOrderTopicConfigToBroker",
	"supportActingMaster",
	"enableAllTopicList",
	"enableTopicList",
	"notifyMinBrokerIdChanged",
	"needWaitForService",
	"waitSecondsForService",
	"deleteTopicWithBrokerRegistration",
}

// RuntimeKeys returns the keys UPDATE_NAMESRV_CONFIG may change, sorted.
func RuntimeKeys() []string {
	out := slices.Clone(runtimeKeys)
	slices.Sort(out)
	return out
}

// IsRuntimeKey reports whether UPDATE_NAMESRV_CONFIG may change key.
func IsRuntimeKey(key string) bool { return slices.Contains(runtimeKeys, key) }

// Reasons an update is refused.
var (
	// ErrBlackListed: a key is on the black list (Java's NO_PERMISSION
	// "Can not update config in black list.").
	ErrBlackListed = errors.New("can not update config in black list")
	// ErrNotRuntime: a key can only be set in the config file.
	ErrNotRuntime = errors.New("can only be set in the config file")
	// ErrBadValue: a value does not parse.
	ErrBadValue = errors.New("bad value")
)

// UpdateError is a refused update: Key is the first offending key, Err one
// of ErrBlackListed, ErrNotRuntime or ErrBadValue.
type UpdateError struct {
	Key string
	Err error
	// Detail says more (the parse error), may be empty.
	Detail string
}

func (e *UpdateError) Error() string {
	switch {
	case errors.Is(e.Err, ErrNotRuntime):
		return fmt.Sprintf("%s can only be set in the config file, not at run time; keys that can: %v", e.Key, RuntimeKeys())
	case e.Detail != "":
		return fmt.Sprintf("config update: %s: %v: %s", e.Key, e.Err, e.Detail)
	}
	return fmt.Sprintf("config update: %s: %v", e.Key, e.Err)
}

func (e *UpdateError) Unwrap() error { return e.Err }

// RuntimeUpdate returns a copy of c with props applied, or an *UpdateError
// and no copy: every key must pass before anything is applied. Checks, in
// order over all keys: the black list (c.InBlackList), then the run-time
// list, then the values. c itself is never modified, so a server can swap
// the copy in atomically.
func (c *Config) RuntimeUpdate(props []properties.Property) (*Config, error) {
	for _, p := range props {
		if c.InBlackList(p.Key) {
			return nil, &UpdateError{Key: p.Key, Err: ErrBlackListed}
		}
	}
	for _, p := range props {
		if !IsRuntimeKey(p.Key) {
			return nil, &UpdateError{Key: p.Key, Err: ErrNotRuntime}
		}
	}
	n := c.Clone()
	if _, errs := n.applyFrom(Source{Kind: SourceUpdate}, props, false); len(errs) > 0 {
		var ve *ValueError
		if errors.As(errs[0], &ve) {
			return nil, &UpdateError{Key: ve.Key, Err: ErrBadValue, Detail: ve.Reason}
		}
		return nil, &UpdateError{Err: ErrBadValue, Detail: errs[0].Error()}
	}
	keys := make([]string, len(props))
	for i, p := range props {
		keys[i] = p.Key
	}
	if err := n.checkRuntimeRanges(keys); err != nil {
		return nil, err
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
// gets c's value where the file writes it, continuation lines and all, or is
// appended at the end when the file does not have it. Every other byte of
// the file stays as it was: comments, blank lines, order, the other keys,
// and nothing that came from a flag or the environment is written. A key
// whose value in the file already means c's value ("TRUE" for true) is left
// as written; when nothing changes the file is not rewritten.
//
// The file is replaced atomically (a crash leaves the old or the new one)
// and its previous content is kept in <path>.bak. A file that no longer
// parses is left alone and the update refused: rewriting it would lose
// whatever the operator was in the middle of. A missing file is created
// with just the updated keys.
func (c *Config) PersistUpdate(path string, keys []string) error {
	prev, err := atomicfile.Previous(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	doc, err := properties.ParseDocument(prev)
	if err != nil {
		return fmt.Errorf("config: %s no longer parses, left as it is: %w", path, err)
	}
	changed := false
	for _, name := range keys {
		k, ok := LookupKey(name)
		if !ok {
			return fmt.Errorf("config: persist %q: not a known key", name)
		}
		if cur, ok := doc.Get(name); ok {
			if v, err := parseValue(k, properties.Property{Key: name, Value: cur}, Source{}); err == nil && v == k.typed(c) {
				continue
			}
		}
		if doc.Set(name, k.Value(c)) {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if _, err := atomicfile.Replace(path, doc.Bytes(), prev); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
