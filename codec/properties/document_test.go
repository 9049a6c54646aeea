// document_test.go checks the editing of a properties text in place
// against golden files, and that an edit never touches another byte.

package properties

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of the document tests")

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func parseDoc(t *testing.T, text string) *Document {
	t.Helper()
	d, err := ParseDocument([]byte(text))
	if err != nil {
		t.Fatalf("ParseDocument(%q): %v", text, err)
	}
	return d
}

// values is the key -> value map Properties.load would build from text.
func values(t *testing.T, text []byte) map[string]string {
	t.Helper()
	ps, err := Parse(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("rendered text does not parse: %v\n%s", err, text)
	}
	m := make(map[string]string)
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	return m
}

// keptLines checks that every line of before that is not one of the
// edited entries' lines is in after, in the same order, byte for byte.
func keptLines(t *testing.T, before, after []byte, edited map[int]bool) {
	t.Helper()
	a := strings.SplitAfter(string(after), "\n")
	j := 0
	for i, l := range strings.SplitAfter(string(before), "\n") {
		if edited[i+1] {
			continue
		}
		for j < len(a) && a[j] != l && !(j == len(a)-1 && a[j] == l+"\n") {
			j++
		}
		if j == len(a) {
			t.Fatalf("line %d %q of the original is not kept in order:\n%s", i+1, l, after)
		}
		j++
	}
}

// TestDocumentGolden edits a commented namesrv.properties the way a series
// of run-time updates would: a key written twice, one continued over three
// lines, one with a ':' separator, escaped values, a key without a value,
// and new keys (one needing escapes).
func TestDocumentGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "edit")
	before, err := os.ReadFile(filepath.Join(dir, "namesrv.properties"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDocument(before)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Bytes(); !bytes.Equal(got, before) {
		t.Fatalf("an unedited document renders differently:\n%s", got)
	}
	steps := []struct {
		key, value string
		changed    bool
	}{
		{"orderMessageEnable", "true", true},                // twice in the file: the last one is edited
		{"listenPort", "10911", true},                       // "listenPort: 9876" keeps its ':'
		{"nsaddrList", "10.0.0.1:9876;10.0.0.4:9876", true}, // three lines become one
		{"rocketmqHome", `D:\rocketmq`, true},               // backslashes escaped again
		{"productEnvName", "café", false},                   // the \u00e9 the file has: no change
		{"deleteTopicWithBrokerRegistration", "true", true}, // a bare key gets its '='
		{"waitSecondsForService", "7", true},                // new: appended
		{"needWaitForService", "true", true},                // new: appended after it
		{"waitSecondsForService", "9", true},                // an appended key edited again
		{"odd key=", " lead\\", true},                       // new, escaped
		{"orderMessageEnable", "true", false},               // already so
	}
	for _, s := range steps {
		if got := d.Set(s.key, s.value); got != s.changed {
			t.Errorf("Set(%q, %q) = %v, want %v", s.key, s.value, got, s.changed)
		}
	}
	after := d.Bytes()
	golden(t, filepath.Join(dir, "namesrv.properties.golden"), after)

	// Lines 9 (the first orderMessageEnable) and 23 (serverWorkerThreads)
	// are untouched, like every line but the edited entries'.
	keptLines(t, before, after, map[int]bool{5: true, 12: true, 13: true, 14: true, 17: true, 26: true, 27: true})
	got := values(t, after)
	want := map[string]string{
		"listenPort": "10911", "bindAddress": "0.0.0.0", "orderMessageEnable": "true",
		"nsaddrList": "10.0.0.1:9876;10.0.0.4:9876", "rocketmqHome": `D:\rocketmq`, "productEnvName": "café",
		"kvConfigPath": "/var/lib/rocketns/kvConfig.json", "serverWorkerThreads": "8",
		"clientRequestThreadPoolNums": "8", "deleteTopicWithBrokerRegistration": "true",
		"waitSecondsForService": "9", "needWaitForService": "true", "odd key=": ` lead\`,
	}
	if len(got) != len(want) {
		t.Errorf("%d keys, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// What the document says is what the rendered text says.
	for _, p := range d.Properties() {
		if v, _ := d.Get(p.Key); got[p.Key] != v {
			t.Errorf("Get(%s) = %q, the text has %q", p.Key, v, got[p.Key])
		}
	}

	// A second round of updates on the rendered file edits it again in place.
	d2, err := ParseDocument(after)
	if err != nil {
		t.Fatal(err)
	}
	d2.Set("orderMessageEnable", "false")
	d2.Set("waitSecondsForService", "45")
	again := d2.Bytes()
	golden(t, filepath.Join(dir, "namesrv.properties.golden2"), again)
	if n, m := bytes.Count(after, []byte("\n")), bytes.Count(again, []byte("\n")); n != m {
		t.Fatalf("the second round changed the line count from %d to %d", n, m)
	}
}

func TestDocumentEdits(t *testing.T) {
	t.Parallel()
	f := func(text, key, value, want string) {
		t.Helper()
		d := parseDoc(t, text)
		d.Set(key, value)
		got := string(d.Bytes())
		if got != want {
			t.Errorf("%q with %s=%q:\n got %q\nwant %q", text, key, value, got, want)
		}
		if v := values(t, []byte(got))[key]; v != value {
			t.Errorf("%q: %s reads back as %q, want %q", got, key, v, value)
		}
	}
	// A last line ending in a continuation backslash continues into the
	// end of input, terminator or not: an appended key must not join it.
	f("a=1\\\n", "b", "2", "a=1\\\n\nb=2\n")
	f("a=1\\\r\n", "b", "2", "a=1\\\r\n\r\nb=2\r\n")
	f("a=1\\\\\n", "b", "2", "a=1\\\\\nb=2\n")
	// Separators and the blanks around them are kept.
	f("a=1\n", "a", "2", "a=2\n")
	f("a:1\n", "a", "2", "a:2\n")
	f("a 1\n", "a", "2", "a 2\n")
	f("  a \t=  1\n", "a", "2", "  a \t=  2\n")
	f("a\n", "a", "2", "a=2\n")
	f("a=\n", "a", "2", "a=2\n")
	f("a   \n", "a", "2", "a   2\n")
	// Trailing blanks are part of the old value and go with it.
	f("a=1  \nb=2\n", "a", "3", "a=3\nb=2\n")
	// Continuations: of the value, of the key, after the separator.
	f("a=1\\\n  2\\\n  3\nb=4\n", "a", "x", "a=x\nb=4\n")
	f("a\\\n  b=1\n", "ab", "2", "a\\\n  b=2\n")
	f("a=\\\n   1\n", "a", "2", "a=\\\n   2\n")
	// Line endings: kept, and used for appended keys.
	f("a=1\r\nb=2\r\n", "a", "3", "a=3\r\nb=2\r\n")
	f("a=1\r\n", "c", "3", "a=1\r\nc=3\r\n")
	f("a=1\rb=2\r", "c", "3", "a=1\rb=2\rc=3\r")
	// No terminator at the end.
	f("a=1", "a", "2", "a=2")
	f("a=1", "b", "2", "a=1\nb=2\n")
	f("# only a comment", "b", "2", "# only a comment\nb=2\n")
	f("a=1\\", "b", "2", "a=1\\\n\nb=2\n")
	f("a=1\\", "a", "2", "a=2")
	// Empty text.
	f("", "b", "2", "b=2\n")
	// Escaped keys are matched by their value and keep their spelling.
	f("a\\ b=1\n", "a b", "2", "a\\ b=2\n")
	f("\\u0061=1\n", "a", "2", "\\u0061=2\n")
	// New values are escaped as AppendValue does.
	f("a=1\n", "a", "x\ny", "a=x\\ny\n")
	f("a=1\n", "a", " x", "a=\\ x\n")
	f("a=1\n", "a", `C:\x`, `a=C:\\x`+"\n")
	// A repeated key: the last entry is edited, the first left alone.
	f("a=1\nb=2\na=3\n", "a", "4", "a=1\nb=2\na=4\n")
	// Comments that look like entries are not entries.
	f("#a=1\n", "a", "2", "#a=1\na=2\n")
}

func TestDocumentSetReportsChange(t *testing.T) {
	t.Parallel()
	d := parseDoc(t, "a=1\n")
	if d.Set("a", "1") {
		t.Error("setting the same value reported a change")
	}
	if !bytes.Equal(d.Bytes(), []byte("a=1\n")) {
		t.Errorf("rendered %q", d.Bytes())
	}
	if !d.Set("a", "2") || !d.Set("a", "1") {
		t.Error("changes not reported")
	}
	// Back to its old value: the entry is written again, same bytes.
	if got := string(d.Bytes()); got != "a=1\n" {
		t.Errorf("rendered %q", got)
	}
	var zero Document
	zero.Set("k", "v")
	if got := string(zero.Bytes()); got != "k=v\n" {
		t.Errorf("zero document: %q", got)
	}
}

func TestParseDocumentErrors(t *testing.T) {
	t.Parallel()
	if _, err := ParseDocument([]byte("a=1\nb=\\uZZZZ\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error on line 2", err)
	}
}

// The document reads a text exactly as Parse does.
func TestDocumentAgreesWithParse(t *testing.T) {
	t.Parallel()
	texts, err := os.ReadFile(filepath.Join("testdata", "edit", "namesrv.properties"))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(texts), "a=1\r\nb:2\rc 3\n\\\n#x\nd\\\n  =4\\", "k\\\n\\\nv"} {
		ps, err := Parse(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dump(parseDoc(t, text).Properties()), dump(ps); got != want {
			t.Errorf("%q:\n got %s\nwant %s", text, got, want)
		}
	}
}
