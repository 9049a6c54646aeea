// Min-broker-id changes of a broker group, the data of the
// NOTIFY_MIN_BROKER_ID_CHANGE requests the server sends to the group's brokers.

package route

import (
	"slices"

	"github.com/rocketns/rocketns/codec/body"
)

// MinBrokerIDChange says that a broker group's smallest broker id changed:
// a lower id registered, or the member holding the smallest id left a group
// in acting-master mode. The table only reports it; the server decides
// whether to send it (notifyMinBrokerIdChanged) and does the I/O.
type MinBrokerIDChange struct {
	BrokerName        string
	MinBrokerID       int64
	MinBrokerAddr     string
	OfflineBrokerAddr string // the address that left; "" on registration
	HABrokerAddr      string // the new member's HA address; "" on unregistration
	// Targets are the addresses to notify, as Java chooses them: every
	// member when one left or the group has one member, otherwise every
	// member but the new minimum.
	Targets []string
}

// minIDChange builds the notification for a group whose members are now
// addrs (sorted by id). nil when the group is empty. Called under mu.
func minIDChange(name string, addrs []body.BrokerAddr, offline, ha string) *MinBrokerIDChange {
	if len(addrs) == 0 {
		return nil
	}
	c := &MinBrokerIDChange{
		BrokerName:        name,
		MinBrokerID:       addrs[0].ID,
		MinBrokerAddr:     addrs[0].Addr,
		OfflineBrokerAddr: offline,
		HABrokerAddr:      ha,
	}
	from := 1
	if offline != "" || len(addrs) == 1 {
		from = 0
	}
	for _, a := range addrs[from:] {
		if !slices.Contains(c.Targets, a.Addr) {
			c.Targets = append(c.Targets, a.Addr)
		}
	}
	return c
}
