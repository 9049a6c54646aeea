// Java's default configuration values.

package config

import (
	"os"
	"path/filepath"
)

// Default returns the configuration a Java NameServer starts with when given
// no -c file: NamesrvConfig and NettyServerConfig defaults, listenPort already
// set to 9876 as NamesrvStartup does, plus rocketns's own settings.
//
// Paths are under the user's home directory like Java's ${user.home}; when no
// home directory is known they become relative to the working directory.
// RocketmqHome comes from ROCKETMQ_HOME and may be empty: Java refuses to
// start without it because it locates its logback config there, which
// rocketns does not need. It is kept only so GET_NAMESRV_CONFIG shows it.
func Default() *Config {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	c := &Config{
		RocketmqHome:                   os.Getenv("ROCKETMQ_HOME"),
		KVConfigPath:                   filepath.Join(home, "namesrv", "kvConfig.json"),
		ConfigStorePath:                filepath.Join(home, "namesrv", "namesrv.properties"),
		ProductEnvName:                 "center",
		ReturnOrderTopicConfigToBroker: true,
		ScanNotActiveBrokerInterval:    5000,
		UnRegisterBrokerQueueCapacity:  3000,
		EnableAllTopicList:             true,
		EnableTopicList:                true,
		WaitSecondsForService:          45,
		ConfigBlackList:                "configBlackList;configStorePath;kvConfigPath",

		BindAddress:                     "0.0.0.0",
		ListenPort:                      9876,
		ServerChannelMaxIdleTimeSeconds: 120,

		FrameMaxLength: 16777216,
		LogLevel:       "info",
		LogFormat:      "text",

		// Java's namesrv logback: 100 MB files, 10 of them, gzipped.
		LogMaxSizeMB:  100,
		LogMaxBackups: 10,
		LogCompress:   true,

		MaxConnections:            10000,
		MaxPendingResponseBytes:   16 << 20,
		MaxPendingRequestBytes:    64 << 20,
		ServerWriteTimeoutSeconds: 30,
		MaxConnectionsPerIP:       1000,
		ReservedConnections:       1000,
		MaxTopicsPerBroker:        100000,
		MaxTopics:                 200000,

		Bounds: defaultBounds(),

		TLSServerNeedClientAuth: "none",

		ACLStrictWindowSeconds: 300,

		Extra: make(map[string]string, len(javaOnlyDefaults)),
	}
	for _, d := range javaOnlyDefaults {
		c.Extra[d.name] = d.value
	}
	return c
}

// Clone returns a deep copy of c, so a server can swap in an updated
// configuration without sharing Extra with the old one.
func (c *Config) Clone() *Config {
	n := *c
	n.sources = cloneSources(c.sources)
	if c.Extra != nil {
		n.Extra = make(map[string]string, len(c.Extra))
		for k, v := range c.Extra {
			n.Extra[k] = v
		}
	}
	return &n
}
