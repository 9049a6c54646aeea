package config

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func TestEnvName(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"listenPort":                    "ROCKETNS_LISTEN_PORT",
		"kvConfigPath":                  "ROCKETNS_KV_CONFIG_PATH",
		"rocketmqHome":                  "ROCKETNS_ROCKETMQ_HOME",
		"unRegisterBrokerQueueCapacity": "ROCKETNS_UN_REGISTER_BROKER_QUEUE_CAPACITY",
		"adminAllowCIDRs":               "ROCKETNS_ADMIN_ALLOW_CIDRS",
		KeyTLSServerMode:                "ROCKETNS_TLS_SERVER_MODE",
		KeyTLSServerKeyPassword:         "ROCKETNS_TLS_SERVER_KEY_PASSWORD",
		KeyAdminListen:                  "ROCKETNS_ADMIN_LISTEN",
	} {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", key, got, want)
		}
	}
	// Every key has a variable of its own, and a name a shell accepts.
	valid := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	seen := map[string]string{}
	for _, k := range Keys() {
		n := EnvName(k.Name)
		if !valid.MatchString(n) {
			t.Errorf("%s: variable %q is not a valid name", k.Name, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share the variable %s", k.Name, other, n)
		}
		seen[n] = k.Name
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	props, err := FromEnv([]string{
		"HOME=/root", "ROCKETNS_LOG_LEVEL=debug", "ROCKETNS_LISTEN_PORT=1", "ROCKETNS_BIND_ADDRESS=",
		"ROCKETNS_LISTEN_PORT=2", "NOEQUALS", "ROCKETNSLISTEN_PORT=3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []properties.Property{
		{Key: "bindAddress", Value: "", Origin: "ROCKETNS_BIND_ADDRESS"},
		{Key: "listenPort", Value: "1", Origin: "ROCKETNS_LISTEN_PORT"},
		{Key: "listenPort", Value: "2", Origin: "ROCKETNS_LISTEN_PORT"},
		{Key: "logLevel", Value: "debug", Origin: "ROCKETNS_LOG_LEVEL"},
	}
	if !slices.Equal(props, want) {
		t.Fatalf("FromEnv = %+v\nwant %+v", props, want)
	}
	c := Default()
	if _, err := c.Apply(props); err != nil {
		t.Fatal(err)
	}
	if c.ListenPort != 2 || c.BindAddress != "" || c.LogLevel != "debug" {
		t.Fatalf("applied: listenPort=%d bindAddress=%q logLevel=%q", c.ListenPort, c.BindAddress, c.LogLevel)
	}

	_, err = FromEnv([]string{"ROCKETNS_ZZZ=1", "ROCKETNS_LISTEN_PORT=1", "ROCKETNS_AAA=2"})
	var ee *EnvError
	if !errors.As(err, &ee) || !slices.Equal(ee.Names, []string{"ROCKETNS_AAA", "ROCKETNS_ZZZ"}) {
		t.Fatalf("unknown variables: %v", err)
	}

	props, _ = FromEnv([]string{"ROCKETNS_LISTEN_PORT=x"})
	_, err = Default().Apply(props)
	if err == nil || !strings.Contains(err.Error(), `listenPort="x" (environment ROCKETNS_LISTEN_PORT)`) {
		t.Fatalf("bad value: %v", err)
	}
}

// The variables Kubernetes sets for Services named rocketns, rocketns-0-ip
// and so on are not settings and must not stop start-up; a misspelt
// setting still does.
func TestFromEnvIgnoresServiceLinks(t *testing.T) {
	t.Parallel()
	var env []string
	for _, svc := range []string{"ROCKETNS", "ROCKETNS_0_IP", "ROCKETNS_ADMIN"} {
		env = append(env,
			svc+"_SERVICE_HOST=10.96.0.10",
			svc+"_SERVICE_PORT=9876",
			svc+"_SERVICE_PORT_REMOTING=9876",
			svc+"_PORT=tcp://10.96.0.10:9876",
			svc+"_PORT_9876_TCP=tcp://10.96.0.10:9876",
			svc+"_PORT_9876_TCP_PROTO=tcp",
			svc+"_PORT_9876_TCP_PORT=9876",
			svc+"_PORT_9876_TCP_ADDR=10.96.0.10",
			svc+"_PORT_53_UDP_ADDR=10.96.0.10",
		)
	}
	env = append(env, "ROCKETNS_LISTEN_PORT=9999")
	props, err := FromEnv(env)
	if err != nil {
		t.Fatalf("service variables refused: %v", err)
	}
	if len(props) != 1 || props[0].Key != "listenPort" || props[0].Value != "9999" {
		t.Fatalf("props %+v, want only listenPort=9999", props)
	}
	for _, bad := range []string{"ROCKETNS_LISTEN_PROT", "ROCKETNS_PORTS", "ROCKETNS_PORT_X_TCP", "ROCKETNS_LOG_LEVEL_TCP"} {
		if _, err := FromEnv([]string{bad + "=1"}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
