// Fuzz targets: the REGISTER_BROKER decoder (plain and compressed) and the
// dialect re-encoder.
package body

import (
	"bytes"
	"encoding/json"
	"testing"
)

func FuzzDecodeRegisterBroker(f *testing.F) {
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
	})
}
