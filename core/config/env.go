// Configuration from the environment, for containers and unit files:
// ROCKETNS_ followed by the key in upper snake case.

package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocketns/rocketns/codec/properties"
)

// EnvPrefix starts every environment variable that sets a key.
const EnvPrefix = "ROCKETNS_"

// EnvName is the variable that sets key: listenPort is ROCKETNS_LISTEN_PORT,
// tls.server.mode is ROCKETNS_TLS_SERVER_MODE. Upper snake case because
// shells and Kubernetes accept nothing else in a variable name (no '.'), and
// case-folding the camelCase key would make it unreadable.
func EnvName(key string) string {
	b := make([]byte, 0, len(EnvPrefix)+len(key)+8)
	b = append(b, EnvPrefix...)
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '.':
			c = '_'
		case 'A' <= c && c <= 'Z':
			if i > 0 && isLowerOrDigit(key[i-1]) {
				b = append(b, '_')
			}
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

func isLowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// envKeys maps every key's variable to the key.
var envKeys = func() map[string]string {
	m := make(map[string]string, len(keys))
	for i := range keys {
		m[EnvName(keys[i].Name)] = keys[i].Name
	}
	return m
}()

// EnvError reports ROCKETNS_ variables that name no key. Start-up stops on
// them rather than ignore them: a misspelt ROCKETNS_LISTEN_PROT that was
// skipped would leave a NameServer running on the default with nothing said.
type EnvError struct{ Names []string }

func (e *EnvError) Error() string {
	msg := fmt.Sprintf("environment: %s: no such setting (variables starting with %s set config keys, e.g. %s for listenPort)",
		strings.Join(e.Names, ", "), EnvPrefix, EnvName("listenPort"))
	var hints []string
	for _, n := range e.Names {
		if near := suggestEnv(n); near != "" {
			hints = append(hints, near+" ("+envKeys[near]+") for "+n)
		}
	}
	if len(hints) > 0 {
		msg += "; did you mean " + strings.Join(hints, ", ") + "?"
	}
	return msg
}

// serviceLink reports whether name has the shape of the variables
// Kubernetes (and Docker's legacy links) set for a service whose name starts
// with "rocketns": ROCKETNS_0_IP_SERVICE_HOST, ROCKETNS_PORT,
// ROCKETNS_PORT_9876_TCP_ADDR and the like. Every pod gets them for every
// Service in its namespace, so refusing them would stop the NameServer from
// starting next to its own per-pod Services. Known keys are matched first,
// so ROCKETNS_LISTEN_PORT still sets listenPort.
func serviceLink(name string) bool {
	rest := strings.TrimPrefix(name, EnvPrefix)
	if strings.HasSuffix(rest, "SERVICE_HOST") || rest == "PORT" || strings.HasSuffix(rest, "_PORT") {
		return true
	}
	if i := strings.Index(rest, "SERVICE_PORT"); i >= 0 && (i == 0 || rest[i-1] == '_') {
		return true // SERVICE_PORT and SERVICE_PORT_<name>
	}
	// <SVC>_PORT_<port>_<PROTO>[_ADDR|_PORT|_PROTO]
	for _, proto := range []string{"_TCP", "_UDP", "_SCTP"} {
		i := strings.Index(rest, proto)
		if i < 0 {
			continue
		}
		head := rest[:i] // ..._PORT_<digits> or PORT_<digits>
		j := strings.LastIndexByte(head, '_')
		if j < 0 || j == len(head)-1 || strings.Trim(head[j+1:], "0123456789") != "" {
			continue
		}
		if p := head[:j]; p == "PORT" || strings.HasSuffix(p, "_PORT") {
			return true
		}
	}
	return false
}

// FromEnv returns the properties the ROCKETNS_ variables of environ (in
// os.Environ's KEY=value form) set, in variable name order so that the
// result does not depend on the environment's order. Other variables are
// ignored. An empty value is a value (it clears a string key); unset the
// variable to keep the file's or the default's. Variables that name no key
// are an *EnvError, returned with the properties of the others so that
// their values can still be checked.
func FromEnv(environ []string) ([]properties.Property, error) {
	var props []properties.Property
	var unknown []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key, ok := envKeys[name]
		if !ok {
			if !serviceLink(name) {
				unknown = append(unknown, name)
			}
			continue
		}
		props = append(props, properties.Property{Key: key, Value: value, Origin: name})
	}
	// Stable: should a name appear twice, the later one is applied last and wins.
	slices.SortStableFunc(props, func(a, b properties.Property) int { return strings.Compare(a.Origin, b.Origin) })
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return props, &EnvError{Names: unknown}
	}
	return props, nil
}
