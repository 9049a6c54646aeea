// Steady-state allocation checks for the decode and encode paths.

package codec

import (
	"io"
	"testing"

	"github.com/cloudwego/netpoll"
)

// Headers the server sees most: a Java route query, a Go client query, a
// 5.x heartbeat, a header needing unescaping, and the binary route query.
var allocFrames = []struct {
	name  string
	frame []byte
}{
	{"java-105", rawFrame(SerializeJSON, []byte(`{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`), nil)},
	{"go-105", rawFrame(SerializeJSON, []byte(`{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"RouteTopic"}}`), nil)},
	{"heartbeat-904", rawFrame(SerializeJSON, []byte(`{"code":904,"extFields":{"clusterName":"DefaultCluster","brokerAddr":"192.168.0.2:10911","brokerName":"broker-a","brokerId":"0","epoch":"0","maxOffset":"0","confirmOffset":"0","heartbeatTimeoutMills":"10000","electionPriority":"0"},"flag":2,"language":"JAVA","opaque":13,"serializeTypeCurrentRPC":"JSON","version":479}`), nil)},
	{"escaped", rawFrame(SerializeJSON, []byte(`{"code":100,"extFields":{"namespace":"N\u00e9","key":"k\"1\"","value":"\ud83d\ude00 \\ \/"},"flag":0,"language":"JAVA","opaque":9,"remark":"a\nb","serializeTypeCurrentRPC":"JSON","version":479,"x":[{"y":null}]}`), []byte("body"))},
	{"binary-105", AppendFrame(nil, &Command{Code: GetRouteInfoByTopic, Version: 479, Opaque: 7, SerializeType: SerializeRocketMQ,
		HasExt: true, Ext: []Field{{"topic", "TopicTest"}}})},
}

// sliceReader serves ReadCommand's Peek and Next from a byte slice without
// allocating, so its own cost can be measured; the other Reader methods are
// not used by ReadCommand and are left to the nil embedded interface.
type sliceReader struct {
	netpoll.Reader
	b   []byte
	off int
}

func (r *sliceReader) Peek(n int) ([]byte, error) {
	if len(r.b)-r.off < n {
		return nil, io.ErrUnexpectedEOF
	}
	return r.b[r.off : r.off+n], nil
}

func (r *sliceReader) Next(n int) ([]byte, error) {
	p, err := r.Peek(n)
	r.off += len(p)
	return p, err
}

func TestDecodeZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, tc := range allocFrames {
		var c Command
		frame := tc.frame[4:]
		if err := Decode(frame, &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n := testing.AllocsPerRun(100, func() {
			if err := Decode(frame, &c); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Fatalf("%s: Decode allocates %.1f times per frame", tc.name, n)
		}
	}
}

func TestEncodeZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, tc := range allocFrames {
		var c Command
		if err := Decode(tc.frame[4:], &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		buf := make([]byte, 0, 1024)
		n := testing.AllocsPerRun(100, func() {
			buf = AppendFrame(buf[:0], &c)
			buf = AppendFramePrefix(buf[:0], &c, 10)
		})
		if n != 0 {
			t.Fatalf("%s: encoding allocates %.1f times per frame", tc.name, n)
		}
	}
}

func TestReadCommandZeroAllocDecode(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	// The reader is a plain byte slice here: what ReadCommand adds to Decode
	// must not allocate either.
	frame := allocFrames[0].frame
	var c Command
	r := &sliceReader{}
	n := testing.AllocsPerRun(100, func() {
		r.b, r.off = frame, 0
		if err := ReadCommand(r, DefaultMaxFrame, &c); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("ReadCommand allocates %.1f times per frame", n)
	}
}
