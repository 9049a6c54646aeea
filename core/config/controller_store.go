// The controller node's persisted configuration: what GET_CONTROLLER_CONFIG
// (1010) lists and UPDATE_CONTROLLER_CONFIG (1009) changes, under the
// rules UPDATE_NAMESRV_CONFIG follows (run-time keys only, all or nothing,
// persisted atomically before it takes effect).

package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/rocketns/rocketns/codec/properties"
	"github.com/rocketns/rocketns/core/ctlserver"
)

// controllerRuntimeKeys are the only keys 1009 accepts: the settings the
// node reads at each use, none a path, a peer or a port. Java accepts every
// key and only these take effect before a restart (the others are merely
// persisted, peers and paths included). Never modified.
var controllerRuntimeKeys = []string{
	KeyNotifyBrokerRoleChanged,
	KeyEnableElectUncleanMaster,
	KeyElectMasterMaxRetryCount,
	KeyProcessReadEvent,
	KeyIsProcessReadEvent,
}

// ControllerRuntimeKeys returns the keys UPDATE_CONTROLLER_CONFIG may
// change, sorted.
func ControllerRuntimeKeys() []string {
	out := slices.Clone(controllerRuntimeKeys)
	slices.Sort(out)
	return out
}

// notRuntimeError refuses a key 1009 may not change.
type notRuntimeError struct{ key string }

func (e *notRuntimeError) Error() string {
	return fmt.Sprintf("%s can only be set in the config file, not at run time; keys that can: %v", e.key, ControllerRuntimeKeys())
}

func (e *notRuntimeError) Unwrap() error { return ctlserver.ErrNotRuntime }

// ControllerStore is a controller node's ctlserver.ConfigStore: the listing
// a Java controller answers 1010 with (its field names, sorted, listenPort
// the port bound), and 1009 updates of the run-time keys, each checked
// whole, written to configStorePath (temporary file, fsync, rename, the
// previous file kept as .bak) and only then put in force. A black-listed
// key (configBlackList, configStorePath, rocketmqHome and those
// configBlackList names, read once at start as in Java) is refused with
// ctlserver.ErrBlackListed; any other key but the run-time ones with
// ctlserver.ErrNotRuntime; a value that does not parse, or a file that
// cannot be written, with a plain error. Safe for concurrent use.
type ControllerStore struct {
	path      string
	blackList map[string]bool

	mu      sync.Mutex
	props   map[string]string
	runtime ctlserver.RuntimeSettings
}

// NewControllerStore builds the store of the node k describes, whose
// server configuration is sc (the one given to ctlserver.New, listing its
// ports and intervals).
func NewControllerStore(k *Controller, sc *ctlserver.Config) *ControllerStore {
	st := &ControllerStore{
		path:      k.ConfigStorePath,
		blackList: map[string]bool{"configBlackList": true, "configStorePath": true, "rocketmqHome": true},
		props:     ctlserver.JavaProperties(sc, k.StartupProperties()),
		runtime:   sc.Runtime(),
	}
	for _, key := range strings.Split(k.ConfigBlackList, ";") {
		if key = strings.TrimSpace(key); key != "" {
			st.blackList[key] = true
		}
	}
	return st
}

// Text implements ctlserver.ConfigStore: the 1010 body.
func (st *ControllerStore) Text() []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	return ctlserver.AppendJavaText(nil, st.props)
}

// Runtime implements ctlserver.ConfigStore.
func (st *ControllerStore) Runtime() ctlserver.RuntimeSettings {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.runtime
}

// Update implements ctlserver.ConfigStore. The checks run over every key
// before anything changes, in order: the black list, the run-time list,
// the values; then the file is written, then the settings change.
func (st *ControllerStore) Update(props []properties.Property) (ctlserver.RuntimeSettings, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range props {
		if st.blackList[p.Key] {
			return st.runtime, fmt.Errorf("%s: %w", p.Key, ctlserver.ErrBlackListed)
		}
	}
	for _, p := range props {
		if !slices.Contains(controllerRuntimeKeys, p.Key) {
			return st.runtime, &notRuntimeError{key: p.Key}
		}
	}
	rt := st.runtime
	next := maps.Clone(st.props)
	for _, p := range props {
		k, _ := lookupControllerKey(p.Key)
		v, err := parseValue(Key{Name: k.name, Type: k.typ}, p)
		if err != nil {
			var ve *ValueError
			if errors.As(err, &ve) {
				return st.runtime, fmt.Errorf("config update: %s=%q: %s", ve.Key, ve.Value, ve.Reason)
			}
			return st.runtime, fmt.Errorf("config update: %w", err)
		}
		key := p.Key
		switch p.Key {
		case KeyNotifyBrokerRoleChanged:
			rt.NotifyBrokerRoleChanged = v.(bool)
		case KeyEnableElectUncleanMaster:
			rt.EnableElectUncleanMaster = v.(bool)
		case KeyProcessReadEvent, KeyIsProcessReadEvent:
			rt.ProcessReadEvent = v.(bool)
			key = KeyIsProcessReadEvent // the field name 1010 lists
		case KeyElectMasterMaxRetryCount:
			if v.(int) < 1 {
				return st.runtime, fmt.Errorf("config update: %s=%q: want at least 1", p.Key, p.Value)
			}
			rt.ElectMasterMaxRetryCount = v.(int)
		}
		next[key] = fmt.Sprint(v)
	}
	if err := writeAtomic(st.path, persistedText(next)); err != nil {
		return st.runtime, fmt.Errorf("persist config to %s: %w", st.path, err)
	}
	st.props, st.runtime = next, rt
	return rt, nil
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
