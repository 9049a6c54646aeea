// Package config holds the NameServer's configuration: the Java key names and
// defaults (NamesrvConfig + NettyServerConfig), the Java properties file
// format, and the rules for applying and printing it.
package config

// Config is every setting the NameServer reads. Field names follow the Java
// keys (listenPort -> ListenPort); durations keep Java's units so a
// namesrv.properties file means the same thing here.
type Config struct {
	// NamesrvConfig.
	RocketmqHome                      string
	KVConfigPath                      string // kvConfigPath
	ConfigStorePath                   string
	ProductEnvName                    string
	ClusterTest                       bool
	OrderMessageEnable                bool
	ReturnOrderTopicConfigToBroker    bool
	ScanNotActiveBrokerInterval       int64 // ms
	UnRegisterBrokerQueueCapacity     int
	SupportActingMaster               bool
	EnableAllTopicList                bool
	EnableTopicList                   bool
	NotifyMinBrokerIdChanged          bool
	NeedWaitForService                bool
	WaitSecondsForService             int
	DeleteTopicWithBrokerRegistration bool
	ConfigBlackList                   string

	// NettyServerConfig.
	BindAddress                     string
	ListenPort                      int
	ServerChannelMaxIdleTimeSeconds int

	// rocketns's own.
	FrameMaxLength int    // frameMaxLength: whole frame incl. the 4-byte prefix, like Java's com.rocketmq.remoting.frameMaxLength
	LogLevel       string // logLevel: debug|info|warn|error
	LogFormat      string // logFormat: text|json

	// Extra holds the keys rocketns accepts but does not act on: the Java-only
	// settings (seeded with Java's defaults by Default) and unknown keys from a
	// config file. Java keeps such keys in its Configuration and prints them in
	// GET_NAMESRV_CONFIG, so rocketns keeps them too.
	Extra map[string]string
}
