// Load: the configuration built from Java's defaults, the -c file, the
// environment and the command line, with every problem reported at once and
// each with its source.

package config

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/rocketns/rocketns/codec/properties"
)

// LoadInput is what a NameServer's configuration is built from, applied in
// this order over Java's defaults, each overriding the one before.
type LoadInput struct {
	// File is the -c properties file; "" for none. Like Java, it also
	// becomes configStorePath, where run-time updates are persisted.
	File string
	// Environ is the process environment (os.Environ's form); its
	// ROCKETNS_ variables apply (FromEnv).
	Environ []string
	// Flags are the command line's settings in command-line order; each
	// Origin is the flag as typed ("--listenPort", "--set").
	Flags []properties.Property
	// Base is the configuration the layers apply to; nil is Default().
	Base *Config
	// KeepConfigStorePath leaves configStorePath as Base has it instead
	// of making it the -c file: a standalone controller persists its 1009
	// updates where Java's does.
	KeepConfigStorePath bool
}

// Loaded is a configuration built by Load and what is worth telling about it.
type Loaded struct {
	Config *Config
	// Ignored lists the Java settings rocketns accepts and has no use for
	// (thread pools, Netty buffers), as "key (source)". Harmless in a
	// drop-in file, so apart from the warnings.
	Ignored []string
	// Warnings are the unknown keys (without strictConfig), one message
	// each with the nearest known key when one is close.
	Warnings []string
}

// Load builds the configuration. Every malformed value, out-of-range value,
// bad address, unknown ROCKETNS_ variable and (with strictConfig=true from
// any source) unknown key is reported, all of them, each naming its source:
// the file and line, the variable or the flag. A value that does not parse
// keeps its default so that the other checks still run. With an error,
// the Loaded holds only the warnings (no Config).
func Load(in LoadInput) (*Loaded, error) {
	c := in.Base
	if c == nil {
		c = Default()
	}
	var errs []error
	var unknown []unknownKey
	if in.File != "" {
		props, err := readFile(in.File)
		if err != nil {
			errs = append(errs, err)
		}
		u, e := c.applyFrom(Source{Kind: SourceFile, File: in.File}, props, true)
		unknown, errs = append(unknown, u...), append(errs, e...)
		if !in.KeepConfigStorePath {
			c.ConfigStorePath = in.File
			c.setSource("configStorePath", Source{Kind: SourceFlag, Name: "-c"})
		}
	}
	env, err := FromEnv(in.Environ)
	if err != nil {
		errs = append(errs, err)
	}
	_, e := c.applyFrom(Source{Kind: SourceEnv}, env, true)
	errs = append(errs, e...)
	u, e := c.applyFrom(Source{Kind: SourceFlag}, in.Flags, true)
	unknown, errs = append(unknown, u...), append(errs, e...)

	l := &Loaded{Config: c}
	// One message per key, naming where it was set last.
	seen := make(map[string]bool)
	for i := len(unknown) - 1; i >= 0; i-- {
		if seen[unknown[i].key] {
			unknown = slices.Delete(unknown, i, i+1)
			continue
		}
		seen[unknown[i].key] = true
	}
	for _, u := range unknown {
		switch {
		case u.javaOnly():
			l.Ignored = append(l.Ignored, fmt.Sprintf("%s (%s)", u.key, u.src))
		case c.StrictConfig:
			errs = append(errs, errors.New(u.message(true)))
		default:
			l.Warnings = append(l.Warnings, u.message(false))
		}
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		// The warnings go with the errors: a misspelt key may be why a
		// value is out of range.
		return &Loaded{Warnings: l.Warnings}, errors.Join(errs...)
	}
	return l, nil
}

// readFile parses the properties file at path; on a syntax error it returns
// what it read before it.
func readFile(path string) ([]properties.Property, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		return props, fmt.Errorf("config file %s: %w", path, err)
	}
	return props, nil
}
