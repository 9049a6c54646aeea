// Fuzz targets: the REGISTER_BROKER decoder (plain and compressed, and the
// inflated compressed layout), the dialect re-encoder, and the response
// bodies a client decodes (KV table, route, cluster info, topic list).

package body

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec/codectest"
)

func FuzzDecodeRegisterBroker(f *testing.F) {
	codectest.SkipUnderRace(f)
	for _, fr := range loadVectors(f) {
		if fr.Dir != "req" || fr.Code != 103 {
			continue
		}
		f.Add(fr.Payload, false, fr.Version)
		rb, err := DecodeRegisterBroker(fr.Payload, false, fr.Version)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range []int32{409, 413} {
			z, err := EncodeRegisterBroker(rb, true, v)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(z, true, v)
		}
	}
	f.Add([]byte(spec47Head+`,"topicQueueMappingInfoMap":{"S":{"currIdMap":{0:0},"topic":"S"}}}}`), false, int32(413))
	f.Add([]byte(`{"dataVersion":{"counter":1},"topicConfigTable":{"A":{}}}`), false, int32(36))
	f.Add(deflate(f, layout(`{}`, 1, "T 1 1 6 SINGLE_TAG {}", `[]`, 1, `{"topic":"T","currIdMap":{0:0}}`)), true, int32(413))

	f.Fuzz(func(t *testing.T, b []byte, compressed bool, version int32) {
		rb, err := DecodeRegisterBroker(b, compressed, version)
		if err != nil {
			return
		}
		// What decodes must encode, and decode again to the same shape.
		enc, err := EncodeRegisterBroker(rb, compressed, version)
		if err != nil {
			t.Fatalf("encode of decoded body: %v", err)
		}
		again, err := DecodeRegisterBroker(enc, compressed, version)
		if err != nil {
			t.Fatalf("decode of re-encoded body: %v\n%q", err, enc)
		}
		if again.DataVersion != rb.DataVersion || len(again.Topics) != len(rb.Topics) || len(again.MappingInfo) != len(rb.MappingInfo) {
			t.Fatalf("round trip changed the body:\n%+v\n%+v", rb, again)
		}
	})
}

func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte(specMappingLegacy))
	f.Add([]byte(`{"hostedQueues":{0:[{"gen":0}]},"s":"\u00fc\/"}`))
	f.Add([]byte(`[1,-2.5e3,"x",null,true,{}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		std, err := appendJSON(nil, b, Standard)
		if err != nil {
			return
		}
		if !json.Valid(std) {
			t.Fatalf("standard output is not JSON: %q from %q", std, b)
		}
		// Standard output re-encodes to itself.
		again, err := appendJSON(nil, std, Standard)
		if err != nil || !bytes.Equal(again, std) {
			t.Fatalf("not idempotent: %q -> %q (%v)", std, again, err)
		}
		if _, err := appendJSON(nil, b, Legacy); err != nil {
			t.Fatalf("legacy failed where standard worked: %v", err)
		}
		// Keeping a value in the stored form loses nothing Standard writes.
		stored, err := compactStored(b)
		if err != nil {
			t.Fatalf("not storable where standard worked: %v", err)
		}
		if via, err := appendJSON(nil, stored, Standard); err != nil || !bytes.Equal(via, std) {
			t.Fatalf("stored %q writes %q, not %q (%v)", stored, via, std, err)
		}
	})
}

// fuzzInflateLimit stands in for MaxInflated in FuzzCompressedLayout so the
// fuzzer can reach the bound with inputs of a few kilobytes.
const fuzzInflateLimit = 4 << 10

// FuzzCompressedLayout fuzzes the inflated form of a compressed
// registration (length-prefixed sections and topic text records): the
// input is deflated here, so mutations reach the section reader instead of
// dying on the zlib checksum. The limit counts the bytes the sections take
// and nothing else; those bytes alone decide the result; what decodes must
// survive an encode and a decode.
func FuzzCompressedLayout(f *testing.F) {
	codectest.SkipUnderRace(f)
	for _, fr := range loadVectors(f) {
		if fr.Dir != "req" || fr.Code != 103 {
			continue
		}
		rb, err := DecodeRegisterBroker(fr.Payload, false, fr.Version)
		if err != nil {
			f.Fatal(err)
		}
		if len(rb.Topics) > 8 {
			rb.Topics = rb.Topics[:8]
		}
		for _, v := range []int32{409, 413} {
			z, err := EncodeRegisterBroker(rb, true, v)
			if err != nil {
				f.Fatal(err)
			}
			raw, err := io.ReadAll(zlibReader(f, z))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw, v)
		}
	}
	f.Add(layout(`{}`, 1, "T 1 1 6 SINGLE_TAG {}", `[]`, 1, `{"topic":"T","currIdMap":{0:0}}`), int32(413))
	f.Add(layout(`{"counter":1,"timestamp":2}`, 2, "T 1 1 6 SINGLE_TAG", " 1 1 6 MULTI_TAG  ", `null`), int32(409))
	f.Add(layout(`{}`, 0x7fffffff), int32(409))
	f.Add(bytes.Repeat([]byte{0}, fuzzInflateLimit+1), int32(409))
	f.Add(append(layout(`{}`, 0, "["+strings.Repeat(" ", fuzzInflateLimit)+"]"), 0, 0, 0, 0), int32(413))

	f.Fuzz(func(t *testing.T, raw []byte, version int32) {
		z := deflate(t, raw)
		rb, n, err := decodeCompressed(z, version, fuzzInflateLimit)
		full, fullN, fullErr := decodeCompressed(z, version, MaxInflated)
		switch {
		case err == nil && (fullErr != nil || n != fullN || !reflect.DeepEqual(rb, full)):
			t.Fatalf("the limit changed an accepted body: %+v (%d bytes) vs %+v (%d bytes, %v)", rb, n, full, fullN, fullErr)
		case err == nil && n > fuzzInflateLimit:
			t.Fatalf("%d inflated bytes accepted past the %d-byte limit", n, fuzzInflateLimit)
		case err != nil && fullErr == nil && fullN <= fuzzInflateLimit:
			t.Fatalf("sections of %d bytes refused under the %d-byte limit: %v", fullN, fuzzInflateLimit, err)
		}
		if fullErr != nil {
			return
		}
		// The sections are the first fullN bytes: cut there the body
		// decodes the same, a byte shorter it does not decode.
		if fullN < len(raw) {
			cut, cutN, err := decodeCompressed(deflate(t, raw[:fullN]), version, MaxInflated)
			if err != nil || cutN != fullN || !reflect.DeepEqual(cut, full) {
				t.Fatalf("the bytes after the sections changed the result: %+v vs %+v (%v)", cut, full, err)
			}
		}
		if _, _, err := decodeCompressed(deflate(t, raw[:fullN-1]), version, MaxInflated); err == nil {
			t.Fatalf("decodes without the last of its %d section bytes", fullN)
		}

		enc, err := EncodeRegisterBroker(full, true, version)
		if err != nil {
			t.Fatalf("encode of decoded body: %v", err)
		}
		again, _, err := decodeCompressed(enc, version, MaxInflated)
		if err != nil {
			t.Fatalf("decode of re-encoded body: %v\n%+v", err, full)
		}
		sameRegistration(t, full, again, version)
	})
}

// sameRegistration compares a decoded compressed registration with its
// re-encoded and decoded copy. Attributes survive only where the text
// record can carry them: from 5.0.0 on, and without a space (the record is
// split on spaces, in Java too).
func sameRegistration(t *testing.T, a, b *RegisterBroker, version int32) {
	t.Helper()
	if a.DataVersion != b.DataVersion || len(a.Topics) != len(b.Topics) || len(a.MappingInfo) != len(b.MappingInfo) ||
		!slices.Equal(a.FilterServerList, b.FilterServerList) {
		t.Fatalf("round trip changed the body:\n%+v\n%+v", a, b)
	}
	for i := range a.Topics {
		x, y := a.Topics[i], b.Topics[i]
		xa, ya := x.Attributes, y.Attributes
		x.Attributes, y.Attributes = nil, nil
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("topic %d changed:\n%+v\n%+v", i, x, y)
		}
		carried := version >= versionV5_0_0
		for k, v := range xa {
			carried = carried && !strings.Contains(k+v, " ")
		}
		if carried && len(xa)+len(ya) > 0 && !maps.Equal(xa, ya) {
			t.Fatalf("topic %d attributes changed: %q -> %q", i, xa, ya)
		}
	}
	for k, v := range a.MappingInfo {
		if !bytes.Equal(v, b.MappingInfo[k]) {
			t.Fatalf("mapping of %q changed: %s -> %s", k, v, b.MappingInfo[k])
		}
	}
}

func zlibReader(t testing.TB, z []byte) io.Reader {
	t.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// responseSeeds adds the recorded success bodies answering the given codes.
func responseSeeds(f *testing.F, codes ...int) {
	for _, ex := range exchanges(loadVectors(f)) {
		if ex.resp != nil && ex.resp.Code == 0 && len(ex.resp.Payload) > 0 && slices.Contains(codes, ex.req.Code) {
			f.Add(ex.resp.Payload)
		}
	}
}

// checkFixpoint asserts that a body, once decoded and re-encoded, encodes
// to the same bytes again: the decoder reads back everything the encoder
// writes, whatever odd input the first decode started from.
func checkFixpoint(t *testing.T, name string, b []byte, reencode func([]byte) ([]byte, error)) {
	t.Helper()
	first, err := reencode(b)
	if err != nil {
		return
	}
	second, err := reencode(first)
	if err != nil {
		t.Fatalf("%s: re-encoded body does not decode: %v\n%q\nfrom %q", name, err, first, b)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("%s: not a fixed point\nfirst  %q\nsecond %q\nfrom   %q", name, first, second, b)
	}
}

func FuzzDecodeKVTable(f *testing.F) {
	responseSeeds(f, 219, 103)
	f.Add([]byte(`{"table":{"TopicTest":"broker-a:4","k":"\u00e9\ud83d\ude00\/"}}`))
	f.Add([]byte(`{"table":null}`))
	f.Add([]byte(`{"table":{"a":"1","a":"2","b":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFixpoint(t, "kv table", b, func(b []byte) ([]byte, error) {
			m, err := DecodeKVTable(b)
			if err != nil {
				return nil, err
			}
			if m == nil {
				t.Fatal("nil table without an error")
			}
			return AppendKVTable(nil, m), nil
		})
	})
}

func FuzzDecodeTopicRoute(f *testing.F) {
	responseSeeds(f, 105)
	f.Add([]byte(`{"brokerDatas":[{"brokerAddrs":{0:"a:1",1:"b:1"},"brokerName":"b","cluster":"c"}],"filterServerTable":{},"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":4,"topicSynFlag":1,"writeQueueNums":4}]}`))
	f.Add([]byte(`{"brokerDatas":[{"brokerAddrs":{"-1":"x"}}],"orderTopicConf":"b:4","topicQueueMappingByBroker":{"b":{"currIdMap":{0:0}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{Legacy, Standard} {
			checkFixpoint(t, "topic route", b, func(b []byte) ([]byte, error) {
				r, err := DecodeTopicRoute(b)
				if err != nil {
					return nil, err
				}
				return AppendTopicRoute(nil, r, d), nil
			})
		}
	})
}

func FuzzDecodeClusterInfo(f *testing.F) {
	responseSeeds(f, 106)
	f.Add([]byte(`{"brokerAddrTable":{"b":{"brokerAddrs":{0:"a:1"},"brokerName":"b","cluster":"c"},null:{"brokerAddrs":{}}},"clusterAddrTable":{"c":["b",null]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFixpoint(t, "cluster info", b, func(b []byte) ([]byte, error) {
			ci, err := DecodeClusterInfo(b)
			if err != nil {
				return nil, err
			}
			if ci.Clusters == nil {
				t.Fatal("nil cluster table without an error")
			}
			return AppendClusterInfo(nil, ci), nil
		})
	})
}

func FuzzDecodeTopicList(f *testing.F) {
	responseSeeds(f, 206, 224, 304, 311, 312, 313)
	f.Add([]byte(`{"brokerAddr":"10.0.0.1:10911","topicList":["a",null,"\u00e9"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFixpoint(t, "topic list", b, func(b []byte) ([]byte, error) {
			topics, addr, err := DecodeTopicList(b)
			if err != nil {
				return nil, err
			}
			return AppendTopicList(nil, topics, addr), nil
		})
	})
}
