// Tests of defaults, Apply, printing and validation.

package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func parse(t *testing.T, text string) []properties.Property {
	t.Helper()
	ps, err := properties.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("ParseProperties: %v", err)
	}
	return ps
}

func TestDefault(t *testing.T) {
	t.Setenv("HOME", "/home/rmq")
	t.Setenv("ROCKETMQ_HOME", "/opt/rocketmq")
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	// Java's GET_NAMESRV_CONFIG with defaults (5.x, sorted), plus rocketns's
	// own keys (frame, log, limits, TLS, admin listener).
	want := `aclFile=
aclStrictSignature=false
aclStrictWindowSeconds=300
adminAllowCIDRs=
adminListen=
authorizationEnable=false
authorizeBrokerRegistration=false
bindAddress=0.0.0.0
brokerAllowCIDRs=
clientRequestThreadPoolNums=8
clientRequestThreadPoolQueueCapacity=50000
clusterTest=false
configBlackList=configBlackList;configStorePath;kvConfigPath
configStorePath=/home/rmq/namesrv/namesrv.properties
defaultThreadPoolNums=16
defaultThreadPoolQueueCapacity=10000
deleteTopicWithBrokerRegistration=false
enableAllTopicList=true
enableControllerInNamesrv=false
enableShutdownGracefully=false
enableTopicList=true
frameMaxLength=16777216
heavyBusyPercent=10
kvConfigPath=/home/rmq/namesrv/kvConfig.json
kvMaxKeyBytes=1024
kvMaxNamespaceBytes=2097152
kvMaxTotalBytes=8388608
kvMaxValueBytes=65536
listenPort=9876
logCompress=true
logFile=
logFormat=text
logLevel=info
logMaxAgeDays=0
logMaxBackups=10
logMaxSizeMB=100
maxBufferedBytes=0
maxConnections=10000
maxConnectionsPerIP=1000
maxHeartbeatTimeoutMillis=600000
maxPendingRequestBytes=67108864
maxPendingResponseBytes=16777216
maxTopics=200000
maxTopicsPerBroker=100000
maxTopicsPerSource=100000
needWaitForService=false
notifyMinBrokerIdChanged=false
nsaddrList=
orderMessageEnable=false
productEnvName=center
reservedConnections=1000
returnOrderTopicConfigToBroker=true
rocketmqHome=/opt/rocketmq
routeSnapshotEnable=true
routeSnapshotIntervalMs=5000
routeSnapshotPath=
routeSnapshotPeerAccessKey=
routeSnapshotPeerCopy=true
routeSnapshotPeerTimeoutMs=3000
routeSnapshotPeers=
scanNotActiveBrokerInterval=5000
serverAsyncSemaphoreValue=64
serverCallbackExecutorThreads=0
serverChannelMaxIdleTimeSeconds=120
serverNettyWorkerGroupEnable=true
serverOnewaySemaphoreValue=256
serverPooledByteBufAllocatorEnable=true
serverSelectorThreads=3
serverSocketBacklog=1024
serverSocketRcvBufSize=0
serverSocketSndBufSize=0
serverWorkerThreads=8
serverWriteTimeoutSeconds=30
shutdownWaitTimeSeconds=30
strictConfig=false
supportActingMaster=false
tls.config.file=
tls.server.authClient=false
tls.server.certPath=
tls.server.keyPassword=
tls.server.keyPath=
tls.server.mode=
tls.server.need.client.auth=none
tls.server.trustCertPath=
tls.test.mode.enable=false
unRegisterBrokerQueueCapacity=3000
useEpollNativeSelector=false
waitSecondsForService=45
writeBufferHighWaterMark=0
writeBufferLowWaterMark=0
`
	if got := string(c.AppendText(nil)); got != want {
		t.Fatalf("AppendText of defaults:\n%s\nwant:\n%s", got, want)
	}
}

func TestDefaultWithoutRocketmqHome(t *testing.T) {
	t.Setenv("ROCKETMQ_HOME", "")
	c := Default()
	if c.RocketmqHome != "" {
		t.Fatalf("RocketmqHome = %q", c.RocketmqHome)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("an empty rocketmqHome must be allowed: %v", err)
	}
}

func TestKeysCoverEveryField(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(Config{})
	fields := 0
	for _, f := range reflect.VisibleFields(typ) {
		name := f.Name
		if name == "Extra" || name == "sources" || f.Anonymous {
			continue // an embedded struct's fields are visited themselves
		}
		fields++
		found := false
		for _, k := range Keys() {
			// The Java key is the field name with a lower-case first letter,
			// except KVConfigPath -> kvConfigPath; the TLS keys are dotted
			// system-property names (tls.server.certPath -> TLSServerCertPath).
			if k.field != nil && strings.EqualFold(strings.ReplaceAll(k.Name, ".", ""), name) {
				found = true
			}
		}
		if !found {
			t.Errorf("field %s has no key", name)
		}
	}
	withField := 0
	for _, k := range Keys() {
		if k.field != nil {
			withField++
		}
	}
	if withField != fields {
		t.Errorf("%d keys with a field for %d fields", withField, fields)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	c := Default()
	warns, err := c.Apply(parse(t, `
listenPort = 9877
bindAddress=  127.0.0.1  
scanNotActiveBrokerInterval=60000
orderMessageEnable=TRUE
enableTopicList=False
productEnvName=test
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Fatalf("warnings: %q", warns)
	}
	if c.ListenPort != 9877 || c.BindAddress != "127.0.0.1" || c.ScanNotActiveBrokerInterval != 60000 ||
		!c.OrderMessageEnable || c.EnableTopicList || c.ProductEnvName != "test" {
		t.Fatalf("not applied: %+v", c)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	f := func(text, want string) {
		t.Helper()
		c := Default()
		before := c.Clone()
		_, err := c.Apply(parse(t, text))
		if err == nil {
			t.Fatalf("Apply(%q): no error", text)
		}
		if err.Error() != want {
			t.Fatalf("Apply(%q):\n got %q\nwant %q", text, err, want)
		}
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Fatalf("Apply(%q): %T is not a *ValueError", text, err)
		}
		if !reflect.DeepEqual(c, before) {
			t.Fatalf("Apply(%q) changed the config on error", text)
		}
	}
	f("a=1\nb=2\nlistenPort=abc\n", `config: listenPort="abc" (line 3): not an integer`)
	f("listenPort=99999999999", `config: listenPort="99999999999" (line 1): out of range for a 32-bit integer`)
	f("scanNotActiveBrokerInterval=5s", `config: scanNotActiveBrokerInterval="5s" (line 1): not an integer`)
	f("enableTopicList=yes", `config: enableTopicList="yes" (line 1): not a boolean (want true or false)`)
	f("orderMessageEnable=1", `config: orderMessageEnable="1" (line 1): not a boolean (want true or false)`)
	// A valid key before the bad one is not applied either.
	f("listenPort=1234\nwaitSecondsForService=x", `config: waitSecondsForService="x" (line 2): not an integer`)
	// Every bad key is reported.
	f("listenPort=x\nclusterTest=y", `config: listenPort="x" (line 1): not an integer`+"\n"+
		`config: clusterTest="y" (line 2): not a boolean (want true or false)`)
}

func TestApplyWarnings(t *testing.T) {
	t.Parallel()
	c := Default()
	warns, err := c.Apply(parse(t, "serverWorkerThreads=16\nfoo.bar=baz\nconnectTimeoutMillis=1000\nlistenPort=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"config: serverWorkerThreads (line 1) is a Java setting rocketns does not use; kept as is",
		`config: unknown key "foo.bar" (line 2); kept as is`,
		"config: connectTimeoutMillis (line 3) is a Java setting rocketns does not use; kept as is",
	}
	if !reflect.DeepEqual(warns, want) {
		t.Fatalf("warnings:\n%q\nwant\n%q", warns, want)
	}
	if c.Extra["serverWorkerThreads"] != "16" || c.Extra["foo.bar"] != "baz" || c.Extra["connectTimeoutMillis"] != "1000" {
		t.Fatalf("Extra = %v", c.Extra)
	}
	text := string(c.AppendText(nil))
	for _, line := range []string{"foo.bar=baz\n", "serverWorkerThreads=16\n", "connectTimeoutMillis=1000\n", "listenPort=1\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("AppendText lacks %q", line)
		}
	}
}

func TestApplyLaterWins(t *testing.T) {
	t.Parallel()
	c := Default()
	if _, err := c.Apply(parse(t, "listenPort=1\nlistenPort=2\nfoo=a\nfoo=b")); err != nil {
		t.Fatal(err)
	}
	if c.ListenPort != 2 || c.Extra["foo"] != "b" {
		t.Fatalf("listenPort=%d foo=%q", c.ListenPort, c.Extra["foo"])
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	c := Default()
	if err := c.Set("listenPort", "10911"); err != nil {
		t.Fatal(err)
	}
	if c.ListenPort != 10911 {
		t.Fatalf("listenPort = %d", c.ListenPort)
	}
	err := c.Set("listenPort", "x")
	if err == nil || err.Error() != `config: listenPort="x": not an integer` {
		t.Fatalf("Set error = %v", err)
	}
	if err := c.Set("custom", "v"); err != nil || c.Extra["custom"] != "v" {
		t.Fatalf("Set custom: %v, %v", err, c.Extra)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := Default()
	c.ListenPort = 1234
	c.BindAddress = "10.0.0.1"
	c.KVConfigPath = `C:\rocketmq\kv config.json`
	c.ProductEnvName = "prod"
	c.ClusterTest = true
	c.ScanNotActiveBrokerInterval = 1 << 40
	c.ConfigBlackList = "a;b"
	c.LogLevel = "debug"
	c.LogFormat = "json"
	c.Extra["weird key=:"] = "multi\nline\\value"
	c.Extra["#hash"] = " lead"

	text := c.AppendText(nil)
	back := Default()
	if _, err := back.Apply(parse(t, string(text))); err != nil {
		t.Fatalf("Apply(%s): %v", text, err)
	}
	back.sources = nil
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v\ntext:\n%s", back, c, text)
	}
}

func TestProperties(t *testing.T) {
	t.Parallel()
	c := Default()
	ps := c.Properties()
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Key >= ps[i].Key {
			t.Fatalf("not sorted at %d: %q >= %q", i, ps[i-1].Key, ps[i].Key)
		}
	}
	// A stale Extra entry for a known key does not override the field.
	c.Extra["listenPort"] = "1"
	for _, p := range c.Properties() {
		if p.Key == "listenPort" && p.Value != "9876" {
			t.Fatalf("listenPort printed as %q", p.Value)
		}
	}
}

// validateCase returns a check that applies mutate to the defaults and wants
// Validate to pass (want == "") or to fail naming want.
func validateCase(t *testing.T) func(mutate func(*Config), want string) {
	return func(mutate func(*Config), want string) {
		t.Helper()
		c := Default()
		mutate(c)
		err := c.Validate()
		if want == "" {
			if err != nil {
				t.Errorf("want valid, got %v", err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	f := validateCase(t)
	f(func(c *Config) {}, "")
	f(func(c *Config) { c.ListenPort = 0 }, "")
	f(func(c *Config) { c.ListenPort = 65535 }, "")
	f(func(c *Config) { c.ListenPort = 65536 }, "listenPort=65536")
	f(func(c *Config) { c.ListenPort = -1 }, "listenPort=-1")
	f(func(c *Config) { c.ScanNotActiveBrokerInterval = 0 }, "scanNotActiveBrokerInterval=0")
	f(func(c *Config) { c.FrameMaxLength = 1023 }, "frameMaxLength=1023")
	f(func(c *Config) { c.FrameMaxLength = 1024 }, "")
	f(func(c *Config) { c.LogLevel = "verbose" }, `logLevel="verbose"`)
	f(func(c *Config) { c.LogLevel = "WARN" }, "")
	f(func(c *Config) { c.LogFormat = "xml" }, `logFormat="xml"`)
	f(func(c *Config) { c.LogFormat = "JSON" }, "")
	f(func(c *Config) { c.UnRegisterBrokerQueueCapacity = 0 }, "unRegisterBrokerQueueCapacity=0")
	f(func(c *Config) { c.WaitSecondsForService = -1 }, "waitSecondsForService=-1")
	f(func(c *Config) { c.ServerChannelMaxIdleTimeSeconds = -5 }, "serverChannelMaxIdleTimeSeconds=-5")
	f(func(c *Config) { c.KVConfigPath = " " }, "kvConfigPath is empty")
	f(func(c *Config) { c.ListenPort = -1; c.LogFormat = "x" }, "logFormat")
}

func TestInBlackList(t *testing.T) {
	t.Parallel()
	c := Default()
	f := func(key string, want bool) {
		t.Helper()
		if got := c.InBlackList(key); got != want {
			t.Fatalf("InBlackList(%q) = %v, want %v", key, got, want)
		}
	}
	f("kvConfigPath", true)
	f("configStorePath", true)
	f("configBlackList", true)
	f("rocketmqHome", true)
	f("orderMessageEnable", false)
	f("", false)
	c.ConfigBlackList = "listenPort; orderMessageEnable"
	f("orderMessageEnable", true)
	f("listenPort", true)
	f("kvConfigPath", true) // always, whatever the list says
}

func TestClone(t *testing.T) {
	t.Parallel()
	c := Default()
	n := c.Clone()
	n.Extra["x"] = "y"
	n.ListenPort = 1
	if _, ok := c.Extra["x"]; ok || c.ListenPort != 9876 {
		t.Fatal("Clone shares state with the original")
	}
}

// TestStringValuesTrimLikeJavaStringTrim: Java sets String settings to
// property.trim(), which drops every char up to U+0020 (a DOS ^Z included) and
// nothing above it (a no-break space or U+0085 stays). strings.TrimSpace
// differs on both counts.
func TestStringValuesTrimLikeJavaStringTrim(t *testing.T) {
	t.Parallel()
	c := Default()
	if _, err := c.Apply([]properties.Property{
		{Key: "kvConfigPath", Value: "\x00 /data/kv.json\x1a\r"},
		{Key: "productEnvName", Value: "\u0085center\u00a0"},
		{Key: "bindAddress", Value: "\u2003"},
	}); err != nil {
		t.Fatal(err)
	}
	if c.KVConfigPath != "/data/kv.json" {
		t.Errorf("kvConfigPath = %q, Java sets %q", c.KVConfigPath, "/data/kv.json")
	}
	if c.ProductEnvName != "\u0085center\u00a0" {
		t.Errorf("productEnvName = %q, Java sets %q", c.ProductEnvName, "\u0085center\u00a0")
	}
	if c.BindAddress != "\u2003" {
		t.Errorf("bindAddress = %q, Java sets %q", c.BindAddress, "\u2003")
	}
}

// TestNumberAndBooleanBlanksAreJavaTrimmed: Java does not trim numbers or
// booleans at all; rocketns forgives blanks around them, and "blank" is what
// String.trim drops for them too, so a no-break space is still an error
// rather than silently accepted.
func TestNumberAndBooleanBlanksAreJavaTrimmed(t *testing.T) {
	t.Parallel()
	c := Default()
	if _, err := c.Apply([]properties.Property{
		{Key: "listenPort", Value: "\t9877\x1a"},
		{Key: "scanNotActiveBrokerInterval", Value: "60000\r"},
		{Key: "orderMessageEnable", Value: " true\x00"},
	}); err != nil {
		t.Fatal(err)
	}
	if c.ListenPort != 9877 || c.ScanNotActiveBrokerInterval != 60000 || !c.OrderMessageEnable {
		t.Fatalf("not applied: listenPort=%d scanNotActiveBrokerInterval=%d orderMessageEnable=%v",
			c.ListenPort, c.ScanNotActiveBrokerInterval, c.OrderMessageEnable)
	}
	for _, p := range []properties.Property{
		{Key: "listenPort", Value: "9877\u00a0"},
		{Key: "waitSecondsForService", Value: "\u300045"},
		{Key: "enableTopicList", Value: "false\u0085"},
	} {
		var ve *ValueError
		if _, err := Default().Apply([]properties.Property{p}); !errors.As(err, &ve) {
			t.Errorf("%s=%q: error %v, want a *ValueError", p.Key, p.Value, err)
		}
	}
}

func TestJavaTrim(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                   "",
		" \t\r\n\f\x00\x1a ": "",
		"a":                  "a",
		" a b ":              "a b",
		"\x01a\x1f":          "a",
		"\u00a0a\u00a0":      "\u00a0a\u00a0",
		"!a!":                "!a!",
		"\u3000\x20":         "\u3000",
		" 中文 ":               "中文",
		"\xff\x20":           "\xff",
	} {
		if got := javaTrim(in); got != want {
			t.Errorf("javaTrim(%q) = %q, want %q", in, got, want)
		}
	}
}
