// A node's Config from the Java keys, as core/config reads them (file,
// environment, flags) for the NameServer's embedded controller or a
// standalone one.

package ctlserver

import (
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/config"
)

// FromConfig is the node k describes, without what the caller provides:
// TLS material (the broker port's and, with k.RaftTLS, raft's), the
// ConfigStore, the logger and the metrics hooks.
// Embedded in the NameServer it answers with the NameServer's version
// (479), as Java's embedded controller does; standalone with 0.
func FromConfig(k *config.Controller) Config {
	c := DefaultConfig(k.Membership, k.StorePath)
	c.BindAddress = k.BindAddress
	c.ScanNotActiveBrokerInterval = k.ScanNotActiveBrokerInterval
	c.ScanInactiveMasterInterval = k.ScanInactiveMasterInterval
	c.ElectMasterMaxRetryCount = k.ElectMasterMaxRetryCount
	c.EnableElectUncleanMaster = k.EnableElectUncleanMaster
	c.NotifyBrokerRoleChanged = k.NotifyBrokerRoleChanged
	c.ProcessReadEvent = k.ProcessReadEvent
	c.RequestQueueCapacity = k.RequestQueueCapacity
	c.MaxBrokerSets, c.MaxBrokersPerSet, c.MaxLiveBrokers = k.MaxBrokerSets, k.MaxBrokersPerSet, k.MaxLiveBrokers
	c.IdleTimeout = time.Duration(k.IdleTimeoutSeconds) * time.Second
	if k.IdleTimeoutSeconds <= 0 {
		c.IdleTimeout = -1 // never, as 0 means for the NameServer
	}
	c.MaxFrame = k.FrameMaxLength
	c.MaxConnections = k.MaxConnections
	if k.Embedded {
		c.ReplyVersion = codec.ServerVersion
	}
	c.Raft.HeartbeatTimeout = k.RaftHeartbeatTimeout
	c.Raft.ElectionTimeout = k.RaftElectionTimeout
	c.Raft.LeaderLeaseTimeout = k.RaftLeaderLeaseTimeout
	c.RaftSecret = k.RaftSecret
	return c
}
