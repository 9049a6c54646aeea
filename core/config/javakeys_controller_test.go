// The migration guide lists a Java NameServer key the embedded controller
// reads (enableControllerInNamesrv) as read, not ignored.

package config

import (
	"strings"
	"testing"
)

func TestJavaKeysControllerReadsAreUsed(t *testing.T) {
	found := false
	for _, k := range JavaKeys() {
		if k.Name != KeyEnableControllerInNamesrv {
			continue
		}
		found = true
		if !k.Used {
			t.Errorf("%s starts a controller node, but is listed as ignored", k.Name)
		}
	}
	if !found {
		t.Fatalf("%s is not a Java key", KeyEnableControllerInNamesrv)
	}
	if md := javaKeysMarkdown(); strings.Contains(md, "the embedded controller") {
		t.Error("the ignored keys' title still names the embedded controller")
	}
}
