//go:build ignore

// vulnfilter.go reads govulncheck's JSON output on stdin and fails when a
// vulnerability the code reaches lies in a module. One in the standard
// library is listed with the Go release that fixes it but does not fail:
// the fix is the toolchain's patch release, which the machine may not
// have yet. Run by `make vulncheck`: go run .ci/vulnfilter.go
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
}

type message struct {
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

func main() {
	dec := json.NewDecoder(os.Stdin)
	type key struct{ osv, module string }
	called := map[key]string{} // -> fixed version
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "vulnfilter: govulncheck output:", err)
			os.Exit(2)
		}
		f := m.Finding
		// A finding whose innermost frame names a function is one the
		// code calls; the others are only imported or required.
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		called[key{f.OSV, f.Trace[0].Module + "@" + f.Trace[0].Version}] = f.FixedVersion
	}
	keys := make([]key, 0, len(called))
	for k := range called {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].osv < keys[j].osv })
	failed := false
	for _, k := range keys {
		kind := "module"
		if strings.HasPrefix(k.module, "stdlib@") {
			kind = "standard library (update Go)"
		} else {
			failed = true
		}
		fmt.Printf("%s in %s, fixed in %s: %s\n", k.osv, k.module, called[k], kind)
	}
	fmt.Printf("vulncheck: %d vulnerabilities reached by the code\n", len(keys))
	if failed {
		os.Exit(1)
	}
}
