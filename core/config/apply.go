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
	Reason string
}

func (e *ValueError) Error() string {
	if e.Env != "" {
		return fmt.Sprintf("config: %s=%q (environment %s): %s", e.Key, e.Value, e.Env, e.Reason)
	}
	if e.Line > 0 {
		return fmt.Sprintf("config: %s=%q (line %d): %s", e.Key, e.Value, e.Line, e.Reason)
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
func (c *Config) Apply(props []properties.Property) (warnings []string, err error) {
	type pending struct {
		key Key
		p   properties.Property
	}
	var errs []error
	var sets []pending
	for _, p := range props {
		k, ok := LookupKey(p.Key)
		if !ok {
			if err := checkControllerValue(p); err != nil {
				errs = append(errs, err) // controller.go: kept in Extra, checked here
			}
			continue
		}
		if _, err := parseValue(k, p); err != nil {
			errs = append(errs, err)
			continue
		}
		sets = append(sets, pending{k, p})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, s := range sets {
		v, _ := parseValue(s.key, s.p)
		s.key.set(c, v)
	}
	for _, p := range props {
		if _, ok := LookupKey(p.Key); ok {
			continue
		}
		if c.Extra == nil {
			c.Extra = make(map[string]string)
		}
		c.Extra[p.Key] = p.Value
		where := ""
		if p.Line > 0 {
			where = fmt.Sprintf(" (line %d)", p.Line)
		}
		if w, ok := controllerWarning(p, where); ok {
			if w != "" {
				warnings = append(warnings, w)
			}
		} else if IsJavaOnlyKey(p.Key) {
			warnings = append(warnings, fmt.Sprintf("config: %s%s is a Java setting rocketns does not use; kept as is", p.Key, where))
		} else {
			warnings = append(warnings, fmt.Sprintf("config: unknown key %q%s; kept as is", p.Key, where))
		}
	}
	return warnings, nil
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
func parseValue(k Key, p properties.Property) (any, error) {
	v := javaTrim(p.Value)
	bad := func(reason string) error {
		return &ValueError{Key: p.Key, Value: p.Value, Line: p.Line, Env: p.Origin, Reason: reason}
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

// Validate checks ranges and enumerations, reporting every problem found.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: "+format, args...))
	}
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		bad("listenPort=%d: want 0..65535", c.ListenPort)
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		bad("scanNotActiveBrokerInterval=%d: want a positive number of milliseconds", c.ScanNotActiveBrokerInterval)
	}
	if c.UnRegisterBrokerQueueCapacity <= 0 {
		bad("unRegisterBrokerQueueCapacity=%d: want a positive number", c.UnRegisterBrokerQueueCapacity)
	}
	if c.WaitSecondsForService < 0 {
		bad("waitSecondsForService=%d: want 0 or more", c.WaitSecondsForService)
	}
	if c.ServerChannelMaxIdleTimeSeconds < 0 {
		bad("serverChannelMaxIdleTimeSeconds=%d: want 0 (never) or more", c.ServerChannelMaxIdleTimeSeconds)
	}
	if c.FrameMaxLength < minFrameMaxLength {
		bad("frameMaxLength=%d: want at least %d", c.FrameMaxLength, minFrameMaxLength)
	}
	if strings.TrimSpace(c.KVConfigPath) == "" {
		bad("kvConfigPath is empty")
	}
	if _, err := c.Level(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateSecurity()...)
	switch strings.ToLower(c.LogFormat) {
	case "text", "json":
	default:
		bad("logFormat=%q: want text or json", c.LogFormat)
	}
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validateTLSKeys()...)
	errs = append(errs, c.validateAdmin()...)
	return errors.Join(errs...)
}
