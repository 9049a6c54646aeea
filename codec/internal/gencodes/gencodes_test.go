// gencodes_test.go checks that codec's codes_gen.go is what codes.go
// generates, and that a malformed declaration is refused with its place.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeneratedFileIsCurrent(t *testing.T) {
	srcs := map[string][]byte{}
	for _, name := range sources {
		src, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		srcs[name] = src
	}
	want, err := generate(srcs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", target))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("codec/%s is stale: run go generate ./codec", target)
	}
}

func TestMalformedDeclarations(t *testing.T) {
	const blocks = `
//gencodes:response
const Ok int32 = 0 // SUCCESS

//gencodes:language
const Java byte = 0 // JAVA
`
	f := func(decl, wantErr string) {
		t.Helper()
		_, err := generate(map[string][]byte{"codes.go": []byte("package codec\n" + blocks + decl)})
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%q: error %v, want one containing %q", decl, err, wantErr)
		}
	}
	f("//gencodes:request\nconst (\n\tA int32 = 1\n)\n", "codes.go:10:2: a request code needs")
	f("//gencodes:request\nconst (\n\tA int32 = 1 // lower_case\n)\n", "Java name first")
	f("//gencodes:request\nconst (\n\tA, B int32 = 1, 2 // A_B\n)\n", "one constant per line")
	f("//gencodes:reply\nconst A int32 = 1 // A\n", "unknown block marker gencodes:reply")
	f("", "no block marked gencodes:request")
	f("//gencodes:request\nconst A int32 = 1 // A\nconst (", "expected")

	out, err := generate(map[string][]byte{
		"codes.go":    []byte("package codec\n//gencodes:request\nconst (\n\tA int32 = 1 // NAME_A: a comment\n\tB int32 = 2 /* NAME_B */\n)\n"),
		"language.go": []byte("package codec\n" + blocks),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"case A:\n\t\treturn \"NAME_A\"", "case B:\n\t\treturn \"NAME_B\"", "case \"JAVA\":\n\t\treturn Java", "case Ok:\n\t\treturn \"SUCCESS\""} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("generated code lacks %q:\n%s", want, out)
		}
	}
}
