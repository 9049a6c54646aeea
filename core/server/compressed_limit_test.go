// A compressed registration may inflate to no more than an uncompressed
// frame may carry (frameMaxLength): the compressed layout is dense enough
// that a small body could otherwise carry millions of topics.

package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
)

func TestCompressedRegistrationBoundByFrameLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.FrameMaxLength = 64 << 10
	cfg.MaxPendingRequestBytes = 4 << 20
	cfg.MaxTopicsPerBroker, cfg.MaxTopics = 1<<20, 1<<20 // this test is about the inflation bound
	s, _ := startServer(t, cfg)
	w := dialWire(t, s.Addr())

	register := func(topics int, opaque int32) *codec.Command {
		t.Helper()
		rb := &body.RegisterBroker{FilterServerList: []string{}, DataVersion: body.DataVersion{Counter: 1, Timestamp: 1700000000000}}
		for i := 0; i < topics; i++ {
			rb.Topics = append(rb.Topics, body.TopicConfig{TopicName: fmt.Sprintf("T%07d", i), ReadQueueNums: 4,
				WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"})
		}
		b, err := body.EncodeRegisterBroker(rb, true, 479)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= cfg.FrameMaxLength {
			t.Fatalf("compressed body of %d bytes does not fit the frame", len(b))
		}
		req := request(codec.RegisterBroker, opaque, "brokerName", "a", "brokerAddr", "10.0.0.1:10911", "clusterName", "c",
			"haServerAddr", "", "brokerId", "0", "enableActingMaster", "false", "compressed", "true", "bodyCrc32", "0")
		req.Body = b
		return w.Call(req)
	}
	// Each topic inflates to 32 bytes: 1,200 topics to 37.5 KiB, under
	// the 64 KiB limit; 4,000 to 125 KiB, while their compressed body
	// fits the frame several times over.
	if r := register(1200, 1); r.Code != codec.Success {
		t.Fatalf("1,200 topics: code %d %q", r.Code, r.Remark)
	}
	r := register(4000, 2)
	if r.Code == codec.Success || !strings.Contains(r.Remark, "inflates beyond 65536 bytes") {
		t.Fatalf("4,000 topics inflating past the frame limit: code %d %q", r.Code, r.Remark)
	}
}
