// config_fuzz_test.go fuzzes applying a properties text: it applies whole
// or not at all, and what it prints applies to the same Config.

package config

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
	"github.com/rocketns/rocketns/codec/properties"
)

// propertySeeds are the properties texts of the recorded exchanges and
// the odd forms.
func propertySeeds(f *testing.F) [][]byte {
	texts, err := codectest.PropertiesTexts()
	if err != nil {
		f.Fatal(err)
	}
	return texts
}

// FuzzApply: a config file either applies whole or leaves the Config as it
// was; an applied one prints to a text that applies to the same Config; a
// run-time update never touches the Config it starts from.
func FuzzApply(f *testing.F) {
	for _, s := range propertySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		props, err := properties.Parse(bytes.NewReader(text))
		if err != nil {
			return
		}
		c := Default()
		before := c.Clone()
		if n, err := before.RuntimeUpdate(props); err == nil {
			if n == before {
				t.Fatal("RuntimeUpdate returned its receiver")
			}
		} else {
			var ue *UpdateError
			if !errors.As(err, &ue) {
				t.Fatalf("RuntimeUpdate error %v is not an *UpdateError", err)
			}
		}
		if !reflect.DeepEqual(before, c) {
			t.Fatal("RuntimeUpdate changed its receiver")
		}
		if _, err := c.Apply(props); err != nil {
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("Apply error %v holds no *ValueError", err)
			}
			if !reflect.DeepEqual(before, c) {
				t.Fatalf("a failed Apply changed the config: %v", err)
			}
			return
		}
		_ = c.Validate()
		_, _ = c.Level()
		printed := c.AppendText(nil)
		back := Default()
		again, err := properties.Parse(bytes.NewReader(printed))
		if err != nil {
			t.Fatalf("printed config does not parse: %v\n%s", err, printed)
		}
		if _, err := back.Apply(again); err != nil {
			t.Fatalf("printed config does not apply: %v\n%s", err, printed)
		}
		back.sources, c.sources = nil, nil
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("printed config applies differently\n got %+v\nwant %+v\n%s", back, c, printed)
		}
	})
}
