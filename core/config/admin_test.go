// Tests of the admin listener keys: parsing, checks and printing.

package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/properties"
)

func TestValidateAdmin(t *testing.T) {
	t.Parallel()
	f := func(listen, list, wantErr string) {
		t.Helper()
		c := Default()
		c.AdminListen, c.NsaddrList = listen, list
		err := c.Validate()
		if wantErr == "" {
			if err != nil {
				t.Fatalf("adminListen=%q nsaddrList=%q: %v", listen, list, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("adminListen=%q nsaddrList=%q: got %v, want an error containing %q", listen, list, err, wantErr)
		}
	}
	f("", "", "")
	f("127.0.0.1:9877", "10.0.0.1:9876;10.0.0.2:9876", "")
	f(":9877", " 10.0.0.1:9876 ; ;[::1]:9876; ", "")
	f("127.0.0.1:0", "", "")
	f("127.0.0.1", "", "adminListen")
	f("127.0.0.1:http", "", "adminListen")
	f("127.0.0.1:70000", "", "adminListen")
	f("", "10.0.0.1", "nsaddrList entry \"10.0.0.1\"")
	f("", "10.0.0.1:9876;:9876", "nsaddrList entry \":9876\"")
	f("", "10.0.0.1:0", "nsaddrList entry")
}

func TestNsaddrEntries(t *testing.T) {
	t.Parallel()
	f := func(in string, want ...string) {
		t.Helper()
		if got := NsaddrEntries(in); !slices.Equal(got, want) {
			t.Fatalf("NsaddrEntries(%q) = %q, want %q", in, got, want)
		}
	}
	f("")
	f(" ; ")
	f("a:1", "a:1")
	f(" a:1 ;b:2;", "a:1", "b:2")
}

func TestAdminKeysApply(t *testing.T) {
	t.Parallel()
	c := Default()
	w, err := c.Apply([]properties.Property{{Key: KeyAdminListen, Value: " 127.0.0.1:9877 "}, {Key: KeyNsaddrList, Value: "a:1;b:2"}})
	if err != nil || len(w) != 0 {
		t.Fatalf("apply: warnings %q, err %v", w, err)
	}
	if c.AdminListen != "127.0.0.1:9877" || c.NsaddrList != "a:1;b:2" {
		t.Fatalf("got adminListen=%q nsaddrList=%q", c.AdminListen, c.NsaddrList)
	}
	text := string(c.AppendText(nil))
	for _, want := range []string{"\nadminListen=127.0.0.1:9877\n", "\nnsaddrList=a:1;b:2\n"} {
		if !strings.Contains(text, want) {
			t.Fatalf("printed config lacks %q", strings.TrimSpace(want))
		}
	}
	for _, k := range []string{KeyAdminListen, KeyNsaddrList} {
		key, ok := LookupKey(k)
		if !ok || key.Runtime {
			t.Fatalf("%s: known=%v runtime=%v, want a known start-up key", k, ok, key.Runtime)
		}
	}
}
