// Test helpers shared by the loadgen tests.

package loadgen

import (
	"testing"

	"github.com/rocketns/rocketns/codec"
)

// assertRequest decodes frame (length prefix included) and checks it is a
// route request for topic i with the given opaque.
func assertRequest(t *testing.T, frame []byte, rf *requestFrames, i int, opaque int32) {
	t.Helper()
	n, err := codec.FrameLength(frame, 0)
	if err != nil || n+4 != len(frame) {
		t.Fatalf("frame length %d (%v), frame has %d bytes", n, err, len(frame))
	}
	var c codec.Command
	if err := codec.Decode(frame[4:], &c); err != nil {
		t.Fatalf("decode patched frame: %v", err)
	}
	want, _ := decodeTopic(rf.frames[i])
	got, _ := c.ExtValue("topic")
	if c.Code != codec.GetRouteInfoByTopic || c.Opaque != opaque || got != want || c.Version != 479 {
		t.Fatalf("decoded code %d opaque %d topic %q version %d; want 105, %d, %q, 479", c.Code, c.Opaque, got, c.Version, opaque, want)
	}
}

func decodeTopic(frame []byte) (string, error) {
	var c codec.Command
	if err := codec.Decode(frame[4:], &c); err != nil {
		return "", err
	}
	v, _ := c.ExtValue("topic")
	return string([]byte(v)), nil
}
