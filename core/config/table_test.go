// Tests of the table itself: every entry consistent with what it says
// (type, default, range, roles, what an UPDATE may do), every field of
// Config and Controller set by exactly one key, and every key reachable
// the same ways: a variable, a suggestion, -p of each role that reads it.

package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestTableEntries(t *testing.T) {
	envs := map[string]string{}
	for i := range keys {
		k := &keys[i]
		bad := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s: "+format, append([]any{k.Name}, args...)...)
		}
		if d := k.defaultFor(RoleNameServer); d != nil {
			want := map[Type]reflect.Kind{TypeString: reflect.String, TypeBool: reflect.Bool, TypeInt: reflect.Int, TypeInt64: reflect.Int64}[k.Type]
			if reflect.TypeOf(d).Kind() != want {
				bad("default %#v is not a %s", d, k.Type)
			}
			if r := k.Range; r != nil && r.check(asInt64(d)) != "" {
				bad("default %v out of its range %s", d, r)
			}
		}
		if k.Range != nil && k.Type != TypeInt && k.Type != TypeInt64 {
			bad("a range on a %s", k.Type)
		}
		if k.Roles == 0 || k.node != nil && k.Roles&RoleController == 0 || k.field == nil && k.node == nil && !k.JavaOnly && k.Roles&RoleController == 0 {
			bad("roles %s, field %v, node %v: who reads it?", k.Roles, k.field != nil, k.node != nil)
		}
		if k.Runtime && (k.Type == TypeString || k.BlackListed || k.JavaOnly) {
			bad("a run-time key must be a bool or a number, used, and not black-listed")
		}
		if k.Runtime && k.Type != TypeBool && k.Range == nil {
			bad("a run-time number without a range")
		}
		if k.BlackListed && k.Type != TypeString {
			bad("black-listed but not a path")
		}
		if k.JavaOnly && (k.field != nil || k.node != nil || k.Class == ClassRocketns || k.Class == ClassTLS) {
			bad("Java-only, yet read, or not Java's")
		}
		if a := lookup(k.Alias); k.Alias != "" && (a == nil || a.Alias != "" || a.Runtime != k.Runtime || a.Type != k.Type) {
			bad("alias of %q, which is not a key like it", k.Alias)
		}
		if k.Doc == "" && !k.JavaOnly && k.Alias == "" {
			bad("no Doc")
		}
		if k.Unit != "" && k.Unit != "ms" && k.Unit != "s" {
			bad("unit %q", k.Unit)
		}
		if other, dup := envs[EnvName(k.Name)]; dup {
			bad("variable %s also sets %s", EnvName(k.Name), other)
		}
		envs[EnvName(k.Name)] = k.Name
	}
}

// Every field of Config (Extra aside) and every setting of Controller has
// exactly one key, of the field's type.
func TestTableCoversTheFields(t *testing.T) {
	c, n := Default(), &Controller{}
	owners := map[any]string{}
	own := func(p any, key string) {
		t.Helper()
		if other, ok := owners[p]; ok {
			t.Errorf("%s and %s set the same field", other, key)
		}
		owners[p] = key
	}
	for i := range keys {
		k := &keys[i]
		v, _ := k.get(c)
		if k.field != nil {
			own(k.field(c), k.Name)
			store(k.field(c), v, k.unit()) // panics on a field of another type
		}
		if k.node != nil && k.Alias == "" {
			own(k.node(n), k.Name)
			store(k.node(n), v, k.unit())
		}
	}
	derived := map[string]bool{"Embedded": true, "Membership": true, "RaftSecret": true, "Startup": true}
	for _, s := range []struct {
		v    reflect.Value
		skip map[string]bool
	}{{reflect.ValueOf(c).Elem(), map[string]bool{"Extra": true, "sources": true}}, {reflect.ValueOf(n).Elem(), derived}} {
		for i := 0; i < s.v.NumField(); i++ {
			f := s.v.Type().Field(i)
			if s.skip[f.Name] {
				continue
			}
			if _, ok := owners[s.v.Field(i).Addr().Interface()]; !ok {
				t.Errorf("%s.%s has no key", s.v.Type().Name(), f.Name)
			}
		}
	}
}

// The controller's keys have variables, and misspellings of them get
// suggestions, as the NameServer's do; so do the Java keys rocketns
// ignores.
func TestControllerKeysReachableAsTheNameServers(t *testing.T) {
	for _, n := range []string{"ROCKETNS_ELECT_MASTER_MAX_RETRY_COUNT", "ROCKETNS_SERVER_WORKER_THREADS", "ROCKETNS_MAPPED_FILE_SIZE",
		"ROCKETNS_CLIENT_WORKER_THREADS"} {
		if _, err := FromEnv([]string{n + "=1"}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := FromEnv([]string{"ROCKETNS_CONTROLLER_DLEDGER_PEERS=x"}); err == nil ||
		!strings.Contains(err.Error(), "did you mean ROCKETNS_CONTROLLER_DLEGER_PEERS (controllerDLegerPeers)") {
		t.Errorf("a misspelt controller variable: %v", err)
	}
	for typo, want := range map[string]string{"electMasterMaxRetryCont": "electMasterMaxRetryCount",
		"controllerMaxBrokerSet": "controllerMaxBrokerSets", "controllerRaftSecretFil": "controllerRaftSecretFile",
		"orderMessageEnabel": "orderMessageEnable", "serverWorkerThread": "serverWorkerThreads"} {
		if got := SuggestKey(typo); got != want {
			t.Errorf("SuggestKey(%s) = %q, want %s", typo, got, want)
		}
	}
}

// controller -p prints every key a controller reads, and none only the
// NameServer reads.
func TestControllerPrintListsWhatTheControllerReads(t *testing.T) {
	text := "\n" + string(DefaultController().AppendControllerText(nil))
	for _, name := range []string{"maxConnectionsPerIP", "logFile", "logMaxSizeMB", "strictConfig", "controllerRaftTLSEnable",
		"electMasterMaxRetryCount", "bindAddress", "adminListen", "serverWorkerThreads"} {
		if !strings.Contains(text, "\n"+name+"=") {
			t.Errorf("controller -p lacks %s", name)
		}
	}
	for _, name := range []string{"kvConfigPath", "maxTopics", "maxPendingRequestBytes", "serverWriteTimeoutSeconds",
		"nsaddrList", "enableControllerInNamesrv", "isProcessReadEvent", "clientRequestThreadPoolNums"} {
		if strings.Contains(text, "\n"+name+"=") {
			t.Errorf("controller -p lists %s, which a controller does not read", name)
		}
	}
	for i := range keys {
		if k := &keys[i]; k.Roles&RoleController != 0 && k.Alias == "" && !strings.Contains(text, "\n"+k.Name+"=") {
			t.Errorf("controller -p lacks %s", k.Name)
		}
	}
}
