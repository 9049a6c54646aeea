// Tests of the policy on a controller's codes: a bound broker account's
// address in the controller's own fields, the replays between an admin's
// 1002 and 1011, and the remarks that name controller codes.

package auth

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
)

func TestBrokerAccountBindsControllerAddresses(t *testing.T) {
	p := boundPolicy(t, Options{})
	f := func(req *codec.Command, want Reason) *Denial {
		t.Helper()
		return denied(t, p.Check(ClassBrokerReport, req, "192.168.9.9:1"), want)
	}
	// 1003 names the address it records as brokerAddress, 1013 as the
	// part of registerCheckCode before ';'.
	reg := func(addr string) *codec.Command {
		return signed(codec.ControllerRegisterBroker, "broker-a-key", "broker-a-secret", "",
			"clusterName", "c1", "brokerName", "broker-a", "brokerId", "1", "brokerAddress", addr)
	}
	f(reg("10.0.1.5:10911"), 0)
	d := f(reg("6.6.6.6:10911"), ReasonBinding)
	if msg := d.Error(); !strings.Contains(msg, "CONTROLLER_REGISTER_BROKER (1003)") ||
		!strings.Contains(msg, `broker "broker-a" at "6.6.6.6:10911"`) {
		t.Fatalf("remark %q", msg)
	}
	apply := func(code string) *codec.Command {
		return signed(codec.ControllerApplyBrokerID, "broker-a-key", "broker-a-secret", "",
			"clusterName", "c1", "brokerName", "broker-a", "appliedBrokerId", "1", "registerCheckCode", code)
	}
	f(apply("10.0.1.5:10911;1700000000000"), 0)
	f(apply("10.0.1.5:10911"), 0)
	f(apply("6.6.6.6:10911;1700000000000"), ReasonBinding)
	f(apply(";"), ReasonBinding)
	// A 1002 of another broker set.
	f(signed(codec.ControllerElectMaster, "broker-a-key", "broker-a-secret", "",
		"clusterName", "c1", "brokerName", "broker-b", "brokerId", "1", "designateElect", "false"), ReasonBinding)
}

func TestControllerReplayAcrossCodes(t *testing.T) {
	p := boundPolicy(t, Options{})
	f := func(req *codec.Command, want Reason) {
		t.Helper()
		denied(t, p.Check(ClassAdmin, req, "10.0.0.1:1"), want)
	}
	replay := func(req *codec.Command, code int32) *codec.Command {
		c := *req
		c.Code = code
		return &c
	}
	elect := signed(codec.ControllerElectMaster, "admin-key", "admin-secret", "",
		"clusterName", "c1", "brokerName", "broker-a", "brokerId", "2", "designateElect", "true", "invokeTime", "1")
	f(elect, 0)
	f(replay(elect, codec.CleanBrokerData), ReasonForeign)
	clean := signed(codec.CleanBrokerData, "admin-key", "admin-secret", "",
		"clusterName", "c1", "brokerName", "broker-a", "brokerControllerIdsToClean", "2", "isCleanLivingBroker", "false", "invokeTime", "1")
	f(clean, 0)
	f(replay(clean, codec.ControllerElectMaster), ReasonForeign)
	update := signed(codec.UpdateControllerConfig, "admin-key", "admin-secret", "enableElectUncleanMaster=true\n")
	f(update, 0)
	f(replay(update, codec.CleanBrokerData), ReasonForeign)
}

func TestDenialNamesControllerCodes(t *testing.T) {
	p := mustPolicy(t, Options{AllowFrom: mustCIDRs(t, "10.9.0.0/16")})
	d := denied(t, p.Check(ClassAdmin, signed(codec.UpdateControllerConfig, "", "", "k=v\n"), "10.2.2.3:1"), ReasonAddress)
	if msg := d.Error(); msg != "no permission for UPDATE_CONTROLLER_CONFIG (1009): source address 10.2.2.3:1 is not in adminAllowCIDRs" {
		t.Fatalf("remark %q", msg)
	}
}

func mustCIDRs(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	n, err := ParseCIDRs(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
