// What a configuration key is: its type, default, range, the roles that
// read it, what an UPDATE may do with it, its documentation and where its
// value lives; and the lookups over the table of every key (table.go).

package config

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Type is how a key's value is parsed.
type Type uint8

const (
	TypeString Type = iota // trimmed, like Java's String setters
	TypeBool               // true/false, case-insensitive; anything else is an error
	TypeInt                // 32-bit signed decimal
	TypeInt64              // 64-bit signed decimal
)

func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeBool:
		return "bool"
	case TypeInt:
		return "int"
	case TypeInt64:
		return "int64"
	}
	return "unknown"
}

// Role is a process a key configures: the NameServer, the controller node
// (embedded in the NameServer or standalone), or both.
type Role uint8

const (
	RoleNameServer Role = 1 << iota
	RoleController
	RoleBoth = RoleNameServer | RoleController
)

func (r Role) String() string {
	switch r {
	case RoleNameServer:
		return "NameServer"
	case RoleController:
		return "controller"
	case RoleBoth:
		return "both"
	}
	return "none"
}

// Class is the Java configuration object a key belongs to.
type Class uint8

const (
	ClassRocketns    Class = iota // rocketns's own
	ClassNamesrv                  // NamesrvConfig
	ClassNettyServer              // NettyServerConfig
	ClassNettyClient              // NettyClientConfig (read from -c by Java, never printed by 319)
	ClassController               // ControllerConfig
	ClassJraft                    // JraftConfig (1010 prints the object, not its keys)
	ClassTLS                      // TlsSystemConfig's system properties
)

func (c Class) String() string {
	return [...]string{"rocketns", "NamesrvConfig", "NettyServerConfig", "NettyClientConfig",
		"ControllerConfig", "JraftConfig", "TlsSystemConfig"}[c]
}

// javaListed is the roles whose Java GET (319, 1010) lists the keys of the
// class, set or not.
func (c Class) javaListed() Role {
	switch c {
	case ClassNamesrv:
		return RoleNameServer
	case ClassNettyServer:
		return RoleBoth
	case ClassController:
		return RoleController
	}
	return 0
}

// Range is the closed range a numeric key must stay in, checked when its
// value is read (at load for the NameServer's keys, when the node is built
// for the controller's) and before an UPDATE applies it.
type Range struct{ Min, Max int64 }

// between and atLeast make the ranges of the table.
func between(lo, hi int64) *Range { return &Range{lo, hi} }
func atLeast(lo int64) *Range     { return &Range{lo, math.MaxInt64} }

// check returns why v is out of r, or "".
func (r *Range) check(v int64) string {
	if r == nil || v >= r.Min && v <= r.Max {
		return ""
	}
	return "want " + r.String()
}

// String is how messages and the docs show the range.
func (r *Range) String() string {
	lo := strconv.FormatInt(r.Min, 10)
	switch {
	case r.Max != math.MaxInt64:
		return lo + ".." + strconv.FormatInt(r.Max, 10)
	case r.Min == 1:
		return "a positive number"
	case r.Min == 0:
		return "0 or more"
	}
	return "at least " + lo
}

// Defaults that depend on the machine, resolved when a Config is built.
type (
	// homePath is a path below the user's home directory, as Java's
	// ${user.home}; relative to the working directory when no home is known.
	homePath string
	// envDefault is the value of an environment variable.
	envDefault string
)

// Key describes one configuration key. The table (table.go) holds every
// key rocketns knows: those it reads, and the Java ones it accepts and
// lists without using them.
type Key struct {
	Name string
	Type Type
	// Default is the value when nothing sets the key: Java's for Java's
	// keys, typed as Type says. Nil for a key without one, which is listed
	// only when set.
	Default any
	// ctlDefault is the controller's default where it differs from the
	// NameServer's (Java's ControllerConfig has its own configStorePath and
	// configBlackList; its port is not listenPort).
	ctlDefault any
	// Range bounds a numeric value; nil for none (or checks that relate
	// keys, made in code).
	Range *Range
	// Unit is "ms" or "s" for a duration, how the docs show it and the
	// controller node's time.Duration field reads it.
	Unit string
	// Roles read the key; for a JavaOnly key, the roles whose Java reads it.
	Roles Role
	// Listed are the roles whose GET (319, 1010) lists the key when no
	// value was set, as Java lists the fields of its config objects; zero
	// takes its Class's.
	Listed Role
	Class  Class
	// JavaOnly keys are accepted, kept and listed, and nothing reads them.
	JavaOnly bool
	// Runtime keys are read at each use: an UPDATE (318, 1009) may change
	// them and they take effect at once. The others only at the next start.
	Runtime bool
	// BlackListed keys are refused by every UPDATE of a role that reads
	// them, whatever configBlackList says: paths, whose change at run time
	// is CVE-2023-37582.
	BlackListed bool
	// Alias is the key this one is another name of (1010 lists Java's
	// field name isProcessReadEvent for processReadEvent).
	Alias string
	// Section and Main place the key in the docs (docs/configuration.md,
	// and the README's main settings); Doc says what it does here.
	Section Section
	Main    bool
	Doc     string

	// field points at the Config field the key sets; nil keeps the value
	// in Config.Extra, as written (the controller's keys, the Java-only
	// ones).
	field func(*Config) any
	// node points at the field of a controller node's settings the key
	// sets; nil when the node does not read it.
	node func(*Controller) any
}

// Section is where the docs list a key.
type Section uint8

const (
	SectionNameServer Section = iota
	SectionLog
	SectionSecurity
	SectionTLS
	SectionLimits
	SectionAdmin
	SectionController
	SectionJava // Java keys accepted and not used
)

// keys is the table in the order that breaks ties between suggestions
// (table.go). Never modified.
var keys = buildTable(table)

// keyIndex finds a key by name.
var keyIndex = func() map[string]*Key {
	m := make(map[string]*Key, len(keys))
	for i := range keys {
		m[keys[i].Name] = &keys[i]
	}
	return m
}()

// buildTable derives what the entries leave implicit: the type from the
// default, the listing roles from the class.
func buildTable(t []Key) []Key {
	out := make([]Key, len(t))
	for i, k := range t {
		switch k.Default.(type) {
		case bool:
			k.Type = TypeBool
		case int:
			k.Type = TypeInt
		case int64:
			k.Type = TypeInt64
		case string, homePath, envDefault:
			k.Type = TypeString
		}
		if k.Listed == 0 {
			k.Listed = k.Class.javaListed()
		}
		out[i] = k
	}
	return out
}

// Keys returns every key, in no particular order. The slice is a copy.
func Keys() []Key { return append([]Key(nil), keys...) }

// LookupKey returns the key called name (case-sensitive, like Java's
// setter lookup).
func LookupKey(name string) (Key, bool) {
	if k, ok := keyIndex[name]; ok {
		return *k, true
	}
	return Key{}, false
}

// lookup is LookupKey without the copy.
func lookup(name string) *Key { return keyIndex[name] }

// defaultOf is the key's default for role: the controller's where it has
// its own.
func (k *Key) defaultOf(r Role) any {
	if r == RoleController && k.ctlDefault != nil {
		return k.ctlDefault
	}
	return k.Default
}

// defaultFor is the key's default for role, resolved: nil when the key has
// none.
func (k *Key) defaultFor(r Role) any {
	d := k.defaultOf(r)
	switch v := d.(type) {
	case homePath:
		home, err := os.UserHomeDir()
		if err != nil {
			home = ""
		}
		return filepath.Join(home, string(v))
	case envDefault:
		return os.Getenv(string(v))
	}
	return d
}

// DefaultText is the default as the docs show it: $HOME for the home
// directory, $VARIABLE for one read from the environment.
func (k *Key) DefaultText(r Role) string {
	switch v := k.defaultOf(r).(type) {
	case nil:
		return ""
	case homePath:
		return "$HOME/" + string(v)
	case envDefault:
		return "$" + string(v)
	}
	return format(k.defaultOf(r))
}

// format prints a typed value as Java does.
func format(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// kept reports whether the key's value lives in Config.Extra.
func (k *Key) kept() bool { return k.field == nil }
