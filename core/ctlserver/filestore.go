// The persisted ConfigStore: what GET_CONTROLLER_CONFIG (1010) lists and
// UPDATE_CONTROLLER_CONFIG (1009) changes, under the rules the NameServer's
// UPDATE_NAMESRV_CONFIG follows (run-time keys only, all or nothing,
// persisted atomically before it takes effect).

package ctlserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/atomicfile"
)

// runtimeKeys are the only keys a FileConfig accepts: the settings a node
// reads at each use, none a path, a peer or a port. Java accepts every key
// and only these take effect before a restart (the others are merely
// persisted, peers and paths included). Never modified.
var runtimeKeys = []string{
	keyNotifyBrokerRoleChanged,
	keyEnableElectUncleanMaster,
	keyElectMasterMaxRetryCount,
	"processReadEvent",
	keyProcessReadEvent,
}

// RuntimeKeys returns the keys UPDATE_CONTROLLER_CONFIG may change, sorted.
func RuntimeKeys() []string {
	out := slices.Clone(runtimeKeys)
	slices.Sort(out)
	return out
}

// notRuntimeError refuses a key 1009 may not change.
type notRuntimeError struct{ key string }

func (e *notRuntimeError) Error() string {
	return fmt.Sprintf("%s can only be set in the config file, not at run time; keys that can: %v", e.key, RuntimeKeys())
}

func (e *notRuntimeError) Unwrap() error { return ErrNotRuntime }

// FileConfig is a node's ConfigStore persisted to a file: the listing a
// Java controller answers 1010 with (JavaProperties: its field names,
// sorted, listenPort the port served), and 1009 updates of the run-time
// keys, each checked whole, written to the file (temporary file, fsync,
// rename, the previous file kept as .bak) and only then put in force. A
// black-listed key (configBlackList, configStorePath, rocketmqHome and the
// keys blackList names, read once at start as in Java) is refused with
// ErrBlackListed; any other key but the run-time ones with ErrNotRuntime;
// a value that does not parse, or a file that cannot be written, with a
// plain error. As in Java the file is not read at start. Safe for
// concurrent use.
type FileConfig struct {
	path      string
	blackList map[string]bool

	mu      sync.Mutex
	props   map[string]string
	runtime RuntimeSettings
}

// NewFileConfig builds the store of the node c describes (the Config given
// to New, listing its ports and intervals) over startup (the start-up
// properties), persisting to path; blackList is configBlackList.
func NewFileConfig(c *Config, startup map[string]string, path, blackList string) *FileConfig {
	st := &FileConfig{
		path:      path,
		blackList: map[string]bool{keyConfigBlackList: true, "configStorePath": true, "rocketmqHome": true},
		props:     JavaProperties(c, startup),
		runtime:   c.Runtime(),
	}
	for _, key := range strings.Split(blackList, ";") {
		if key = strings.TrimSpace(key); key != "" {
			st.blackList[key] = true
		}
	}
	return st
}

// Text implements ConfigStore: the 1010 body.
func (st *FileConfig) Text() []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	return AppendJavaText(nil, st.props)
}

// Runtime implements ConfigStore.
func (st *FileConfig) Runtime() RuntimeSettings {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.runtime
}

// Update implements ConfigStore. The checks run over every key before
// anything changes, in order: the black list, the run-time list, the
// values; then the file is written, then the settings change.
func (st *FileConfig) Update(props []Property) (RuntimeSettings, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range props {
		if st.blackList[p.Key] {
			return st.runtime, fmt.Errorf("%s: %w", p.Key, ErrBlackListed)
		}
	}
	for _, p := range props {
		if !slices.Contains(runtimeKeys, p.Key) {
			return st.runtime, &notRuntimeError{key: p.Key}
		}
	}
	rt := st.runtime
	next := maps.Clone(st.props)
	for _, p := range props {
		v := javaTrim(p.Value)
		bad := func(want string) error {
			return fmt.Errorf("config update: %s=%q: %s", p.Key, p.Value, want)
		}
		var b bool
		switch {
		case p.Key == keyElectMasterMaxRetryCount:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 {
				return st.runtime, bad("want an integer of at least 1")
			}
			rt.ElectMasterMaxRetryCount = int(n)
			next[p.Key] = strconv.FormatInt(n, 10)
			continue
		case strings.EqualFold(v, "true"):
			b = true
		case strings.EqualFold(v, "false"):
		default:
			return st.runtime, bad("not a boolean (want true or false)")
		}
		key := p.Key
		switch p.Key {
		case keyNotifyBrokerRoleChanged:
			rt.NotifyBrokerRoleChanged = b
		case keyEnableElectUncleanMaster:
			rt.EnableElectUncleanMaster = b
		default: // processReadEvent, listed under its field name
			rt.ProcessReadEvent, key = b, keyProcessReadEvent
		}
		next[key] = strconv.FormatBool(b)
	}
	prev, err := atomicfile.Previous(st.path)
	if err == nil {
		_, err = atomicfile.Replace(st.path, persistedText(next), prev)
	}
	if err != nil {
		return st.runtime, fmt.Errorf("persist config to %s: %w: %w", st.path, ErrNotPersisted, err)
	}
	st.props, st.runtime = next, rt
	return rt, nil
}

// javaTrim is Java's String.trim: every char up to U+0020 goes.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// persistedText is the listing as a properties file: escaped so it reads
// back as it was (1010 writes values raw, as Java does), and without
// jraftConfig, which names a Java object, not a setting.
func persistedText(props map[string]string) []byte {
	list := make([]properties.Property, 0, len(props))
	for k, v := range props {
		if k != "jraftConfig" {
			list = append(list, properties.Property{Key: k, Value: v})
		}
	}
	slices.SortFunc(list, func(a, b properties.Property) int { return strings.Compare(a.Key, b.Key) })
	return properties.Append(nil, list)
}
