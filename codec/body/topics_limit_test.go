// topics_limit_test.go checks the bound on topics per registration body,
// compressed (refused on its declared count) and uncompressed.

package body

import (
	"errors"
	"fmt"
	"testing"
)

func TestRegisterBodyTopicBound(t *testing.T) {
	t.Parallel()
	mk := func(n int) *RegisterBroker {
		rb := &RegisterBroker{FilterServerList: []string{}, DataVersion: DataVersion{Counter: 1, Timestamp: 1}}
		for i := 0; i < n; i++ {
			rb.Topics = append(rb.Topics, TopicConfig{TopicName: fmt.Sprintf("T%d", i), ReadQueueNums: 4,
				WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
		}
		return rb
	}
	f := func(topics, max int, compressed, wantRefused bool) {
		t.Helper()
		b, err := EncodeRegisterBroker(mk(topics), compressed, 479)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := DecodeRegisterBrokerBounded(b, compressed, 479, MaxInflated, max)
		var tm *TooManyTopicsError
		if got := errors.As(err, &tm); got != wantRefused {
			t.Fatalf("%d topics, bound %d, compressed %v: err %v, want refused %v", topics, max, compressed, err, wantRefused)
		}
		if wantRefused {
			if tm.Count != topics || tm.Max != max {
				t.Fatalf("error %+v, want count %d max %d", tm, topics, max)
			}
			return
		}
		if len(rb.Topics) != topics {
			t.Fatalf("decoded %d topics, want %d", len(rb.Topics), topics)
		}
	}
	for _, compressed := range []bool{false, true} {
		f(100, 100, compressed, false)
		f(101, 100, compressed, true)
		f(5000, 0, compressed, false) // 0: no bound
	}
}
