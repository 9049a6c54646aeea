// The controller's state bounds: defaults, values read, and values that
// cannot work refused at start.

package config

import (
	"strings"
	"testing"
)

func TestControllerStateBounds(t *testing.T) {
	base := "controllerDLegerPeers=n0-127.0.0.1:9878\ncontrollerDLegerSelfId=n0\n"
	c := DefaultController()
	applied(t, c, base)
	k, err := c.Controller(false)
	if err != nil {
		t.Fatal(err)
	}
	if k.MaxBrokerSets != DefaultControllerMaxBrokerSets || k.MaxBrokersPerSet != DefaultControllerMaxBrokersPerSet ||
		k.MaxLiveBrokers != DefaultControllerMaxLiveBrokers {
		t.Fatalf("defaults %d %d %d", k.MaxBrokerSets, k.MaxBrokersPerSet, k.MaxLiveBrokers)
	}
	c = DefaultController()
	applied(t, c, base+"controllerMaxBrokerSets=10\ncontrollerMaxBrokersPerSet=3\ncontrollerMaxLiveBrokers=50\n")
	if k, err = c.Controller(false); err != nil {
		t.Fatal(err)
	}
	if k.MaxBrokerSets != 10 || k.MaxBrokersPerSet != 3 || k.MaxLiveBrokers != 50 {
		t.Fatalf("read %d %d %d", k.MaxBrokerSets, k.MaxBrokersPerSet, k.MaxLiveBrokers)
	}
	for _, text := range []string{"controllerMaxBrokerSets=0\n", "controllerMaxBrokersPerSet=-1\n", "controllerMaxLiveBrokers=2000000\n"} {
		c := DefaultController()
		applied(t, c, base+text)
		if _, err := c.Controller(false); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(text)+": want 1..1048576") {
			t.Errorf("%q: err %v", text, err)
		}
	}
	if _, err := DefaultController().Apply(parse(t, "controllerMaxBrokerSets=many\n")); err == nil ||
		!strings.Contains(err.Error(), "controllerMaxBrokerSets") {
		t.Errorf("a value that does not parse: %v", err)
	}
	text := string(DefaultController().AppendControllerText(nil))
	for _, line := range []string{"controllerMaxBrokerSets=4096\n", "controllerMaxBrokersPerSet=32\n", "controllerMaxLiveBrokers=16384\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("controller -p lacks %q", line)
		}
	}
}
