// Where each setting's value came from, so that every message about a
// value can name the file line, variable or flag to fix.

package config

import (
	"fmt"
	"maps"
)

// SourceKind says what set a value.
type SourceKind uint8

const (
	SourceDefault SourceKind = iota // Java's default (or rocketns's own)
	SourceFile                      // a line of the -c file
	SourceEnv                       // a ROCKETNS_ environment variable
	SourceFlag                      // a command-line flag
	SourceUpdate                    // UPDATE_NAMESRV_CONFIG at run time
)

// Source is where a value came from.
type Source struct {
	Kind SourceKind
	File string // SourceFile: the path as given
	Line int    // SourceFile: the line the entry starts on
	// Name is the variable (SourceEnv) or the flag as typed, with its
	// dashes (SourceFlag).
	Name string
}

// String names the source the way a message should: "namesrv.properties:15",
// "environment ROCKETNS_LISTEN_PORT", "flag --listenPort"; "" for a default.
func (s Source) String() string {
	switch s.Kind {
	case SourceFile:
		if s.File == "" {
			return fmt.Sprintf("line %d", s.Line)
		}
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case SourceEnv:
		return "environment " + s.Name
	case SourceFlag:
		if s.Name == "" {
			return "command line"
		}
		return "flag " + s.Name
	case SourceUpdate:
		return "run-time update"
	}
	return ""
}

// Source returns where key's value came from: SourceDefault when nothing
// set it, or when c was not built by Load or Apply.
func (c *Config) Source(key string) Source { return c.sources[key] }

// setSource records where key's value came from.
func (c *Config) setSource(key string, s Source) {
	if s.Kind == SourceDefault {
		return
	}
	if c.sources == nil {
		c.sources = make(map[string]Source)
	}
	c.sources[key] = s
}

// where is " (source)" for key, or "" when key has its default.
func (c *Config) where(key string) string {
	if s := c.sources[key].String(); s != "" {
		return " (" + s + ")"
	}
	return ""
}

func cloneSources(m map[string]Source) map[string]Source {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}
