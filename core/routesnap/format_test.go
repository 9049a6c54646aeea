// Tests of the file format: a round trip keeps every field, and a stale,
// corrupt, truncated or other-version file is refused with its own error.

package routesnap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/core/route"
)

func tc(name string, q, perm int32) body.TopicConfig {
	return body.TopicConfig{TopicName: name, ReadQueueNums: q, WriteQueueNums: q, Perm: perm}
}

// sample is the snapshot of a table with a master and a slave, a 4.x
// broker of another cluster, filter servers, a static topic and negative
// and large numbers where the table allows them.
func sample(t testing.TB) *route.Snapshot {
	t.Helper()
	now := int64(1_700_000_000_000)
	tb := route.New(route.Options{}, func() int64 { return now })
	acting := true
	regs := []*route.Registration{
		{Cluster: "c1", BrokerName: "a", BrokerAddr: "10.0.0.1:10911", HAServerAddr: "10.0.0.1:10912", ZoneName: "z1",
			EnableActingMaster: &acting, Owner: "ak", HeartbeatTimeoutMillis: 30000,
			Body: &body.RegisterBroker{DataVersion: body.DataVersion{StateVersion: -1, Timestamp: now, Counter: 1 << 40},
				FilterServerList: []string{"10.0.0.1:30000"},
				Topics:           []body.TopicConfig{tc("T1", 8, 6), tc("S", 4, 6), {TopicName: "U", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 7, TopicSysFlag: 3}},
				MappingInfo:      map[string][]byte{"S": []byte(`{"bname":"a","epoch":1}`)}}},
		{Cluster: "c1", BrokerName: "a", BrokerAddr: "10.0.0.2:10911", BrokerID: 1, EnableActingMaster: &acting,
			Body: &body.RegisterBroker{Topics: []body.TopicConfig{tc("T1", 8, 6), tc("S", 4, 6)}}},
		{Cluster: "c2", BrokerName: "b", BrokerAddr: "10.0.1.1:10911",
			Body: &body.RegisterBroker{Topics: []body.TopicConfig{tc("T1", 8, 6), tc("T2", 1000, 2)}}},
	}
	for _, r := range regs {
		if _, err := tb.Register(r); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := tb.Export()
	return s
}

func TestRoundTrip(t *testing.T) {
	s := sample(t)
	b := Encode(s)
	got, h, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != Version || h.TakenAt != s.TakenAt || h.Length != uint64(len(b)-headerSize) {
		t.Fatalf("header %+v", h)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, s)
	}
	// The decoded snapshot owns its memory.
	clear(b)
	if !reflect.DeepEqual(got, s) {
		t.Fatal("the decoded snapshot shares the file's bytes")
	}
	// And restores.
	tb := route.New(route.Options{}, func() int64 { return s.TakenAt })
	if err := tb.Restore(got); err != nil {
		t.Fatal(err)
	}
	if r, ok := tb.RouteBody("S", body.Standard); !ok || !bytes.Contains(r, []byte(`"epoch":1`)) {
		t.Fatalf("restored route %s", r)
	}
}

func TestEmptyRoundTrip(t *testing.T) {
	s := &route.Snapshot{TakenAt: 5}
	got, _, err := Decode(Encode(s))
	if err != nil || got.TakenAt != 5 || len(got.Groups)+len(got.Topics)+len(got.Brokers) != 0 {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := Encode(sample(t))
	f := func(name string, b []byte, want error) {
		t.Helper()
		s, _, err := Decode(b)
		if !errors.Is(err, want) || s != nil {
			t.Errorf("%s: %v (snapshot %v), want %v", name, err, s != nil, want)
		}
	}
	edit := func(fn func(b []byte) []byte) []byte { return fn(bytes.Clone(good)) }
	f("empty", nil, ErrCorrupt)
	f("other file", []byte(`{"configTable":{}}`+string(make([]byte, 40))), ErrCorrupt)
	f("other version", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[len(magic):], Version+1); return b }), ErrVersion)
	f("flipped payload byte", edit(func(b []byte) []byte { b[len(b)-3] ^= 0x40; return b }), ErrCorrupt)
	f("flipped checksum", edit(func(b []byte) []byte { b[headerSize-1] ^= 1; return b }), ErrCorrupt)
	f("trailing bytes", append(bytes.Clone(good), 0), ErrCorrupt)
	// Every cut is refused, never half-read.
	for n := len(magic); n < len(good); n++ {
		if _, _, err := Decode(good[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d of %d: %v", n, len(good), err)
		}
	}
	// A payload that passes the checksum but does not decode: a length
	// beyond the end, re-summed.
	bad := edit(func(b []byte) []byte {
		p := b[headerSize:]
		p[0] = 0xff // the group count, now huge
		binary.BigEndian.PutUint32(b[headerSize-4:], crc32c(p))
		return b
	})
	f("count beyond the payload", bad, ErrCorrupt)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "routes.snapshot")
	s := sample(t)
	if _, _, err := Load(path, s.TakenAt, 120000); !IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	n, err := Write(path, s)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(n) {
		t.Fatalf("written %d bytes: %v %v", n, fi, err)
	}
	f := func(name string, now int64, want error) {
		t.Helper()
		got, h, err := Load(path, now, 120000)
		if want == nil {
			if err != nil || !reflect.DeepEqual(got, s) {
				t.Fatalf("%s: %v", name, err)
			}
		} else if !errors.Is(err, want) || got != nil {
			t.Fatalf("%s: %v, want %v", name, err, want)
		}
		if h.TakenAt != s.TakenAt {
			t.Fatalf("%s: header %+v", name, h)
		}
	}
	f("fresh", s.TakenAt+1000, nil)
	f("at the limit", s.TakenAt+120000, nil)
	f("stale", s.TakenAt+120001, ErrStale)
	f("from the future", s.TakenAt-120001, ErrStale)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	f("truncated", s.TakenAt, ErrTruncated)
	// A rewrite replaces it whole.
	if _, err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	f("rewritten", s.TakenAt, nil)
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(sample(f)))
	f.Add(Encode(&route.Snapshot{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Fix the checksum, so the fuzzer reaches the payload's decoder.
		if len(b) >= headerSize {
			binary.BigEndian.PutUint32(b[headerSize-4:], crc32c(b[headerSize:]))
		}
		s, _, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes either restores or is refused whole.
		tb := route.New(route.Options{}, func() int64 { return 0 })
		if err := tb.Restore(s); err != nil && tb.Stats() != (route.Stats{}) {
			t.Fatalf("refused restore left %+v", tb.Stats())
		}
	})
}
