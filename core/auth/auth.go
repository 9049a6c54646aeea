// auth.go holds the request classes and the roles that may send each.

package auth

import (
	"fmt"
	"strings"
)

// Class groups request codes by what serving them risks. The server that
// serves a code gives it its class (the NameServer's code table does); a
// code it does not serve is open: it is answered "not supported" whoever
// sends it.
type Class uint8

const (
	// ClassOpen codes read routes, cluster info or KV and stay open to
	// everyone: every producer and consumer sends them, mostly unsigned.
	ClassOpen Class = iota
	// ClassBrokerReport codes are what a broker sends in its normal run
	// (103 REGISTER_BROKER, 322 QUERY_DATA_VERSION, 904 BROKER_HEARTBEAT;
	// on a controller's port also 1001, 1003, 1013 and a broker's own
	// 1002). Signatures are required on them only when
	// Options.BrokerRegistration is set, because real brokers do not sign
	// them unless configured with credentials.
	ClassBrokerReport
	// ClassBrokerWrite codes change routes and are sent by brokers as well
	// as admins (104 UNREGISTER_BROKER, 217 REGISTER_TOPIC_IN_NAMESRV).
	ClassBrokerWrite
	// ClassAdmin codes change state only an operator should change (KV
	// writes, write-perm wipe/add, topic deletion, config updates; on a
	// controller's port an admin's 1002, 1009 and 1011).
	ClassAdmin
	// ClassConfigRead is 319 GET_NAMESRV_CONFIG (and a controller's 1010
	// GET_CONTROLLER_CONFIG): it changes nothing but exposes the
	// configuration (paths, switches).
	ClassConfigRead
)

func (c Class) String() string {
	switch c {
	case ClassOpen:
		return "open"
	case ClassBrokerReport:
		return "broker-report"
	case ClassBrokerWrite:
		return "broker-write"
	case ClassAdmin:
		return "admin"
	case ClassConfigRead:
		return "config-read"
	}
	return "unknown"
}

// Role is what an account may do.
type Role uint8

const (
	// RoleReadOnly may send open codes and read the configuration (319),
	// nothing that changes state.
	RoleReadOnly Role = iota + 1
	// RoleBroker may register, report, unregister and register topics
	// (103, 104, 217, 322, 904; on a controller's port its broker codes),
	// nothing an operator does.
	RoleBroker
	// RoleAdmin may send every code.
	RoleAdmin
)

// ParseRole reads a role name: admin, broker or readonly, in any case.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "admin":
		return RoleAdmin, nil
	case "broker":
		return RoleBroker, nil
	case "readonly":
		return RoleReadOnly, nil
	}
	return 0, fmt.Errorf("unknown role %q: want admin, broker or readonly", s)
}

func (r Role) String() string {
	switch r {
	case RoleReadOnly:
		return "readonly"
	case RoleBroker:
		return "broker"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

// May reports whether an account with role r may send a code of class c.
func (r Role) May(c Class) bool {
	switch c {
	case ClassOpen:
		return true
	case ClassBrokerReport, ClassBrokerWrite:
		return r == RoleAdmin || r == RoleBroker
	case ClassAdmin:
		return r == RoleAdmin
	case ClassConfigRead:
		return r == RoleAdmin || r == RoleReadOnly
	}
	return false
}

// rolesFor names the roles that may send class c, for refusal remarks.
func rolesFor(c Class) string {
	switch c {
	case ClassBrokerReport, ClassBrokerWrite:
		return "admin or broker"
	case ClassAdmin:
		return "admin"
	case ClassConfigRead:
		return "admin or readonly"
	}
	return "any"
}
