// Applying properties to a Config, printing it back, and checking it.

package config

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketns/rocketns/codec/properties"
)

// ValueError reports a known key whose value cannot be parsed.
type ValueError struct {
	Key    string
	Value  string
	Line   int    // 0 when the value did not come from a file
	Env    string // the environment variable, when it came from one
	Source Source // where the value came from
	Reason string
}

func (e *ValueError) Error() string {
	if s := e.Source.String(); s != "" {
		return fmt.Sprintf("config: %s=%q (%s): %s", e.Key, e.Value, s, e.Reason)
	}
	return fmt.Sprintf("config: %s=%q: %s", e.Key, e.Value, e.Reason)
}

// Apply sets every property on c. Known keys are parsed and set; Java-only and
// unknown keys are stored in Extra with one warning each.
//
// Unlike Java, which silently keeps the old value when a value does not parse,
// a malformed value is an error (one *ValueError per bad key, joined), and
// then c is left unchanged. Booleans are strict for the same reason: only
// true/false in any case, where Java's Boolean.parseBoolean reads every other
// word as false.
//
// Messages name a property's line (Line) or variable (Origin, when it is a
// ROCKETNS_ one); Load names the file and the flags too.
func (c *Config) Apply(props []properties.Property) (warnings []string, err error) {
	unknown, errs := c.applyFrom(Source{}, props, false)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, u := range unknown {
		warnings = append(warnings, u.message(false))
	}
	return warnings, nil
}

// unknownKey is a key of the input that sets no Config field: a Java-only
// setting or a key nothing knows.
type unknownKey struct {
	key string
	src Source
	// javaKey: a Java NameServer or controller setting rocketns accepts
	// and does not use, as opposed to a key nothing knows.
	javaKey bool
	// note replaces the generic message (a controller key's own).
	note string
}

func (u unknownKey) javaOnly() bool { return u.javaKey }

// message is the warning (or, strict, the error) about the key.
func (u unknownKey) message(strict bool) string {
	where := ""
	if s := u.src.String(); s != "" {
		where = " (" + s + ")"
	}
	if u.note != "" {
		return u.note
	}
	if u.javaOnly() {
		return fmt.Sprintf("config: %s%s is a Java setting rocketns does not use; kept as is", u.key, where)
	}
	hint := ""
	if near := SuggestKey(u.key); near != "" {
		hint = "; did you mean " + near + "?"
	}
	if strict {
		return fmt.Sprintf("config: unknown key %q%s%s (strictConfig=true refuses unknown keys)", u.key, where, hint)
	}
	return fmt.Sprintf("config: unknown key %q%s%s; kept as is", u.key, where, hint)
}

// propertySource is where p came from, given where its batch came from.
func propertySource(base Source, p properties.Property) Source {
	s := base
	switch base.Kind {
	case SourceFile:
		s.Line = p.Line
	case SourceEnv, SourceFlag:
		if p.Origin != "" {
			s.Name = p.Origin
		}
	case SourceDefault:
		// Apply without a source: what the property says of itself.
		switch {
		case strings.HasPrefix(p.Origin, EnvPrefix):
			s = Source{Kind: SourceEnv, Name: p.Origin}
		case p.Line > 0:
			s = Source{Kind: SourceFile, Line: p.Line}
		}
	}
	return s
}

// applyFrom sets props, which came from src, on c and records their
// sources. With partial, every value that parses is set and the others
// reported; without, nothing is set when any value fails. Keys that set no
// field go to Extra and are returned.
func (c *Config) applyFrom(src Source, props []properties.Property, partial bool) ([]unknownKey, []error) {
	type pending struct {
		key Key
		p   properties.Property
		v   any
	}
	var errs []error
	var sets []pending
	for _, p := range props {
		k, ok := LookupKey(p.Key)
		if !ok {
			if err := checkControllerValue(p, propertySource(src, p)); err != nil {
				errs = append(errs, err) // controller.go: kept in Extra, checked here
			}
			continue
		}
		v, err := parseValue(k, p, propertySource(src, p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sets = append(sets, pending{k, p, v})
	}
	if len(errs) > 0 && !partial {
		return nil, errs
	}
	for _, s := range sets {
		s.key.set(c, s.v)
		c.setSource(s.key.Name, propertySource(src, s.p))
	}
	var unknown []unknownKey
	for _, p := range props {
		if _, ok := LookupKey(p.Key); ok {
			continue
		}
		if c.Extra == nil {
			c.Extra = make(map[string]string)
		}
		c.Extra[p.Key] = p.Value
		ps := propertySource(src, p)
		c.setSource(p.Key, ps)
		u := unknownKey{key: p.Key, src: ps, javaKey: IsJavaOnlyKey(p.Key)}
		where := ""
		if s := ps.String(); s != "" {
			where = " (" + s + ")"
		}
		if w, ok := controllerWarning(p, where); ok {
			if w == "" {
				continue // a controller key rocketns reads: kept in Extra, not unknown
			}
			// A Java controller or raft tuning key: ignored like the Netty ones.
			u.javaKey, u.note = true, w
		}
		unknown = append(unknown, u)
	}
	return unknown, errs
}

// Set sets one key, as a command-line override does. Unknown keys are kept
// in Extra without a warning; use Apply to get one.
func (c *Config) Set(key, value string) error {
	_, err := c.Apply([]properties.Property{{Key: key, Value: value}})
	return err
}

// parseValue returns a string, bool, int or int64 per the key's type.
// What Java's String.trim drops around a value is ignored for every type.
// Java trims only strings; for numbers and booleans a stray blank is an
// accident worth forgiving (Java would ignore such a number and read such a
// boolean as false), and one rule for all types keeps "blank" meaning one
// thing.
func parseValue(k Key, p properties.Property, src Source) (any, error) {
	v := javaTrim(p.Value)
	bad := func(reason string) error {
		e := &ValueError{Key: p.Key, Value: p.Value, Source: src, Reason: reason}
		switch src.Kind {
		case SourceFile:
			e.Line = src.Line
		case SourceEnv:
			e.Env = src.Name
		}
		return e
	}
	switch k.Type {
	case TypeString:
		return v, nil
	case TypeBool:
		switch {
		case strings.EqualFold(v, "true"):
			return true, nil
		case strings.EqualFold(v, "false"):
			return false, nil
		}
		return nil, bad("not a boolean (want true or false)")
	case TypeInt, TypeInt64:
		bits := 32
		if k.Type == TypeInt64 {
			bits = 64
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, bad(fmt.Sprintf("out of range for a %d-bit integer", bits))
			}
			return nil, bad("not an integer")
		}
		if k.Type == TypeInt {
			return int(n), nil
		}
		return n, nil
	}
	return nil, bad("unsupported type")
}

// javaTrim is Java's String.trim, which MixAll.properties2Object applies to
// every String setting: it drops every char up to U+0020, control characters
// such as a DOS end-of-file ^Z included, and nothing above, so a no-break
// space stays part of the value. Those chars are single bytes in UTF-8 and no
// byte of a multi-byte sequence is one of them, so bytes can be compared.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func (k Key) set(c *Config, v any) {
	switch k.Type {
	case TypeString:
		*k.strPtr(c) = v.(string)
	case TypeBool:
		*k.boolPtr(c) = v.(bool)
	case TypeInt:
		*k.intPtr(c) = v.(int)
	case TypeInt64:
		*k.i64Ptr(c) = v.(int64)
	}
}

// typed returns the key's current value in c as parseValue returns it.
func (k Key) typed(c *Config) any {
	switch k.Type {
	case TypeString:
		return *k.strPtr(c)
	case TypeBool:
		return *k.boolPtr(c)
	case TypeInt:
		return *k.intPtr(c)
	case TypeInt64:
		return *k.i64Ptr(c)
	}
	return nil
}

// Value returns the key's current value in c as Java prints it.
func (k Key) Value(c *Config) string {
	switch k.Type {
	case TypeString:
		return *k.strPtr(c)
	case TypeBool:
		return strconv.FormatBool(*k.boolPtr(c))
	case TypeInt:
		return strconv.Itoa(*k.intPtr(c))
	case TypeInt64:
		return strconv.FormatInt(*k.i64Ptr(c), 10)
	}
	return ""
}

// Properties returns every setting, Extra included, sorted by key: the
// content of GET_NAMESRV_CONFIG and of -p. Line is 0.
func (c *Config) Properties() []properties.Property {
	out := make([]properties.Property, 0, len(knownKeys)+len(c.Extra))
	for _, k := range knownKeys {
		out = append(out, properties.Property{Key: k.Name, Value: k.Value(c)})
	}
	for k, v := range c.Extra {
		if _, known := LookupKey(k); known {
			continue // the field is the truth
		}
		out = append(out, properties.Property{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// AppendText appends Properties as `key=value\n` lines, the text of
// GET_NAMESRV_CONFIG and of the persisted config file. Values are written raw
// like Java's, except that backslashes, line breaks and a leading blank are
// escaped so properties.Parse reads the text back to the same values (Java
// writes them raw on Unix, and such a value would not survive a reload).
func (c *Config) AppendText(dst []byte) []byte { return properties.Append(dst, c.Properties()) }

// InBlackList reports whether UPDATE_NAMESRV_CONFIG must refuse to change key.
func (c *Config) InBlackList(key string) bool {
	// Refused whatever configBlackList says, as 4.9.8 and 5.2.0 do: letting a
	// remote peer move these paths is CVE-2023-37582.
	switch key {
	case "configBlackList", "configStorePath", "kvConfigPath", "rocketmqHome":
		return true
	}
	for _, k := range strings.Split(c.ConfigBlackList, ";") {
		if k = strings.TrimSpace(k); k != "" && k == key {
			return true
		}
	}
	return false
}

// Level returns LogLevel as a slog level.
func (c *Config) Level() (slog.Level, error) {
	switch strings.ToLower(c.LogLevel) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("config: logLevel=%q: want debug, info, warn or error", c.LogLevel)
}

// minFrameMaxLength leaves room for any real header; smaller limits would
// only produce confusing connection drops.
const minFrameMaxLength = 1024

// invalid is the error for key's current value: "config: key=value
// (source): reason".
func (c *Config) invalid(key, format string, args ...any) error {
	val := ""
	if k, ok := LookupKey(key); ok {
		if k.Type == TypeString {
			val = strconv.Quote(k.Value(c))
		} else {
			val = k.Value(c)
		}
	}
	return fmt.Errorf("config: %s=%s%s: %s", key, val, c.where(key), fmt.Sprintf(format, args...))
}

// Validate checks ranges, enumerations and addresses, reporting every
// problem found, each with where its value came from when c was built by
// Load.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, c.invalid(key, format, args...))
	}
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		bad("listenPort", "want 0..65535")
	}
	if err := CheckBindIP(c.BindAddress); err != nil {
		bad("bindAddress", "%v", err)
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		bad("scanNotActiveBrokerInterval", "want a positive number of milliseconds")
	}
	if c.UnRegisterBrokerQueueCapacity <= 0 {
		bad("unRegisterBrokerQueueCapacity", "want a positive number")
	}
	if c.ServerChannelMaxIdleTimeSeconds < 0 {
		bad("serverChannelMaxIdleTimeSeconds", "want 0 (never) or more")
	}
	if c.FrameMaxLength < minFrameMaxLength {
		bad("frameMaxLength", "want at least %d", minFrameMaxLength)
	}
	if strings.TrimSpace(c.KVConfigPath) == "" {
		errs = append(errs, fmt.Errorf("config: kvConfigPath is empty%s", c.where("kvConfigPath")))
	}
	if _, err := c.Level(); err != nil {
		bad("logLevel", "want debug, info, warn or error")
	}
	errs = append(errs, c.validateSecurity()...)
	switch strings.ToLower(c.LogFormat) {
	case "text", "json":
	default:
		bad("logFormat", "want text or json")
	}
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validateTLSKeys()...)
	errs = append(errs, c.validateAdmin()...)
	errs = append(errs, c.validateLog()...)
	errs = append(errs, c.validateBounds()...)
	return errors.Join(errs...)
}
