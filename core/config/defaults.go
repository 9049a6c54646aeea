// The configurations a NameServer and a standalone controller start with,
// from the defaults of the table.

package config

import "maps"

// Default returns the configuration a Java NameServer starts with when given
// no -c file: NamesrvConfig and NettyServerConfig defaults, listenPort already
// set to 9876 as NamesrvStartup does, plus rocketns's own settings; Extra
// holds the Java-only keys Java prints with their defaults.
//
// Paths are under the user's home directory like Java's ${user.home}; when no
// home directory is known they become relative to the working directory.
// RocketmqHome comes from ROCKETMQ_HOME and may be empty: Java refuses to
// start without it because it locates its logback config there, which
// rocketns does not need. It is kept only so GET_NAMESRV_CONFIG shows it.
func Default() *Config { return defaults(RoleNameServer) }

// DefaultController returns the configuration a standalone Java controller
// starts with: the NameServer's defaults for the keys both read (Netty,
// TLS, logging, limits), Java's ControllerConfig values for configStorePath
// (${user.home}/controller/controller.properties) and configBlackList, and
// listenPort 19876 (ignored, as in Java: the ports come from the peers).
// Extra holds the Java-only keys a Java controller lists, so 1010 lists
// what a Java controller lists.
func DefaultController() *Config { return defaults(RoleController) }

func defaults(r Role) *Config {
	c := &Config{Extra: make(map[string]string)}
	for i := range keys {
		k := &keys[i]
		switch {
		case !k.kept():
			k.set(c, k.defaultFor(r))
		case k.JavaOnly && k.Listed&r != 0 && k.Default != nil:
			c.Extra[k.Name] = format(k.defaultFor(r))
		}
	}
	return c
}

// Clone returns a deep copy of c, so a server can swap in an updated
// configuration without sharing Extra with the old one.
func (c *Config) Clone() *Config {
	n := *c
	n.sources = cloneSources(c.sources)
	n.Extra = maps.Clone(c.Extra)
	return &n
}
