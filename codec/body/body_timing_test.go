// Benchmarks of the route encoder and the registration decoder.

package body

import (
	"fmt"
	"testing"
)

func BenchmarkAppendTopicRoute(b *testing.B) {
	r := specRoute()
	for _, bc := range []struct {
		name string
		d    Dialect
	}{{"legacy", Legacy}, {"standard", Standard}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := AppendTopicRoute(nil, r, bc.d)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendTopicRoute(buf[:0], r, bc.d)
			}
		})
	}
}

func benchRegisterBody(b *testing.B, topics int, version int32, compressed bool) []byte {
	b.Helper()
	rb := &RegisterBroker{FilterServerList: []string{}, DataVersion: DataVersion{Counter: 3, Timestamp: 1700000000123}}
	rb.Topics = make([]TopicConfig, topics)
	for i := range rb.Topics {
		tc := TopicConfig{TopicName: fmt.Sprintf("BenchmarkTopic-%07d", i), ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"}
		if version >= versionV5_0_0 {
			tc.Attributes = map[string]string{}
		}
		rb.Topics[i] = tc
	}
	body, err := EncodeRegisterBroker(rb, compressed, version)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecodeRegisterBroker(b *testing.B) {
	for _, bc := range []struct {
		topics     int
		version    int32
		compressed bool
	}{
		{1000, 409, false},
		{1000, 413, false},
		{1000, 409, true},
		{100000, 409, false},
		{100000, 413, false},
		{100000, 409, true},
	} {
		b.Run(fmt.Sprintf("topics=%d/v%d/compressed=%v", bc.topics, bc.version, bc.compressed), func(b *testing.B) {
			body := benchRegisterBody(b, bc.topics, bc.version, bc.compressed)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				rb, err := DecodeRegisterBroker(body, bc.compressed, bc.version)
				if err != nil || len(rb.Topics) != bc.topics {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLenientNoBareKeys(b *testing.B) {
	body := benchRegisterBody(b, 1000, 413, false)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Lenient(body)
	}
}
