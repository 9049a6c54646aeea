// Applying properties to a Config, printing it back, and checking it.

package config

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

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

// unknownKey is a key of the input that nothing reads: a Java-only
// setting or a key nothing knows.
type unknownKey struct {
	key  string
	src  Source
	kind unknownKind
}

type unknownKind uint8

const (
	unknownPlain          unknownKind = iota // a key nothing knows
	unknownJava                              // a Java NameServer setting rocketns does not use
	unknownJavaController                    // a Java controller setting rocketns does not use
	unknownJavaTuning                        // not a key, but shaped as a Java controller tuning
)

// javaOnly: a Java setting rocketns accepts and does not use, as opposed
// to a key nothing knows.
func (u unknownKey) javaOnly() bool { return u.kind != unknownPlain }

// message is the warning (or, strict, the error) about the key.
func (u unknownKey) message(strict bool) string {
	where := ""
	if s := u.src.String(); s != "" {
		where = " (" + s + ")"
	}
	switch u.kind {
	case unknownJava:
		return fmt.Sprintf("config: %s%s is a Java setting rocketns does not use; kept as is", u.key, where)
	case unknownJavaController:
		return fmt.Sprintf("config: %s%s is a Java controller setting rocketns does not use; kept as is", u.key, where)
	case unknownJavaTuning:
		return fmt.Sprintf("config: %s%s is not a setting of rocketns's controller (a Java raft or metrics tuning?); kept as is", u.key, where)
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

// unknownOf is what Apply says of key, kept in Extra; false for a key
// something reads.
func unknownOf(key string) (unknownKind, bool) {
	k := lookup(key)
	switch {
	case k != nil && !k.JavaOnly:
		return 0, false
	case k != nil && (k.Class == ClassController || k.Class == ClassJraft):
		return unknownJavaController, true
	case k != nil:
		return unknownJava, true
	case javaControllerTuning(key):
		return unknownJavaTuning, true
	}
	return unknownPlain, true
}

// javaControllerTuning reports whether an unknown key has the shape of a
// Java controller tuning key (jRaft, DLedger, metrics) that rocketns has no
// use for: accepted with a warning, like the Netty ones, rather than as an
// unknown key.
func javaControllerTuning(name string) bool {
	for _, p := range []string{"jRaft", "jraft", "dLedger", "dLeger", "dledger", "metric"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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
// field go to Extra as written (checked first when the table knows them);
// those nothing reads are returned.
func (c *Config) applyFrom(src Source, props []properties.Property, partial bool) ([]unknownKey, []error) {
	var errs []error
	vals := make([]any, len(props))
	for i, p := range props {
		k := lookup(p.Key)
		if k == nil {
			continue
		}
		v, err := parseValue(k, p, propertySource(src, p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vals[i] = v
	}
	if len(errs) > 0 && !partial {
		return nil, errs
	}
	var unknown []unknownKey
	for i, p := range props {
		ps := propertySource(src, p)
		if k := lookup(p.Key); k != nil && !k.kept() {
			if vals[i] != nil {
				k.set(c, vals[i])
				c.setSource(k.Name, ps)
			}
			continue
		}
		if c.Extra == nil {
			c.Extra = make(map[string]string)
		}
		c.Extra[p.Key] = p.Value
		c.setSource(p.Key, ps)
		if kind, ok := unknownOf(p.Key); ok {
			unknown = append(unknown, unknownKey{key: p.Key, src: ps, kind: kind})
		}
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
func parseValue(k *Key, p properties.Property, src Source) (any, error) {
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

// set gives the key's field in c the value v (as parseValue returns it).
func (k *Key) set(c *Config, v any) { store(k.field(c), v, k.unit()) }

// get returns the key's value in c, typed: its field, or its value in
// Extra, or its default; false when it has none of them.
func (k *Key) get(c *Config) (any, bool) {
	if !k.kept() {
		return load(k.field(c), k.unit()), true
	}
	if s, ok := c.Extra[k.Name]; ok {
		if v, err := parseValue(k, properties.Property{Key: k.Name, Value: s}, Source{}); err == nil {
			return v, true
		}
	}
	d := k.defaultFor(RoleNameServer)
	return d, d != nil
}

// Value returns the key's current value in c as Java prints it.
func (k Key) Value(c *Config) string {
	v, _ := k.get(c)
	return format(v)
}

// unit is what one of the key's numbers counts in a time.Duration field.
func (k *Key) unit() time.Duration {
	switch k.Unit {
	case "ms":
		return time.Millisecond
	case "s":
		return time.Second
	}
	return 1
}

// store puts v (as parseValue returns it) into the field p points at; a
// time.Duration field counts in unit.
func store(p, v any, unit time.Duration) {
	switch p := p.(type) {
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	case *int:
		*p = int(asInt64(v))
	case *int64:
		*p = asInt64(v)
	case *time.Duration:
		*p = time.Duration(asInt64(v)) * unit
	}
}

// load is the value of the field p points at, as parseValue returns it.
func load(p any, unit time.Duration) any {
	switch p := p.(type) {
	case *string:
		return *p
	case *bool:
		return *p
	case *int:
		return *p
	case *int64:
		return *p
	case *time.Duration:
		return int64(*p / unit)
	}
	return nil
}

func asInt64(v any) int64 {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int64:
		return v
	}
	return 0
}

// Properties returns every setting, Extra included, sorted by key: the
// content of GET_NAMESRV_CONFIG and of -p. Line is 0.
func (c *Config) Properties() []properties.Property {
	out := make([]properties.Property, 0, len(keys)+len(c.Extra))
	for i := range keys {
		if k := &keys[i]; !k.kept() {
			out = append(out, properties.Property{Key: k.Name, Value: k.Value(c)})
		}
	}
	for k, v := range c.Extra {
		if k := lookup(k); k != nil && !k.kept() {
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
	if k := lookup(key); k != nil {
		if val = k.Value(c); k.Type == TypeString {
			val = strconv.Quote(val)
		}
	}
	return fmt.Errorf("config: %s=%s%s: %s", key, val, c.where(key), fmt.Sprintf(format, args...))
}

// Validate checks ranges, enumerations and addresses, reporting every
// problem found, each with where its value came from when c was built by
// Load. The controller's keys are checked when a node is built from them
// (Config.Controller).
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, c.invalid(key, format, args...))
	}
	for i := range keys {
		if k := &keys[i]; !k.kept() && k.Range != nil {
			v, _ := k.get(c)
			if why := k.Range.check(asInt64(v)); why != "" {
				bad(k.Name, "%s", why)
			}
		}
	}
	if err := CheckBindIP(c.BindAddress); err != nil {
		bad("bindAddress", "%v", err)
	}
	if strings.TrimSpace(c.KVConfigPath) == "" {
		errs = append(errs, fmt.Errorf("config: kvConfigPath is empty%s", c.where("kvConfigPath")))
	}
	if _, err := c.Level(); err != nil {
		bad("logLevel", "want debug, info, warn or error")
	}
	switch strings.ToLower(c.LogFormat) {
	case "text", "json":
	default:
		bad("logFormat", "want text or json")
	}
	errs = append(errs, c.validateSecurity()...)
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validateTLSKeys()...)
	errs = append(errs, c.validateAdmin()...)
	errs = append(errs, c.validatePeers()...)
	errs = append(errs, c.validateLog()...)
	return errors.Join(errs...)
}
