// Tests of both echo servers: a route query through the project's client
// gets the canned body with its own opaque, pipelined requests (one frame
// split across writes, several in one write) are all answered, and a bad
// frame closes the connection.

package echo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/client"
)

var testBody = []byte(`{"brokerDatas":[],"queueDatas":[]}`)

func startBoth(t *testing.T) map[string]*Server {
	t.Helper()
	out := map[string]*Server{}
	for _, kind := range []string{KindNetpoll, KindStd} {
		s, err := Start(kind, "127.0.0.1:0", testBody)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Error(err)
			}
		})
		out[kind] = s
	}
	return out
}

func TestRouteThroughClient(t *testing.T) {
	for kind, s := range startBoth(t) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cl, err := client.Dial(ctx, s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			code, _, body, err := cl.RouteBody(ctx, "TopicA", codec.ServerVersion)
			if err != nil || code != codec.Success || !bytes.Equal(body, testBody) {
				t.Errorf("%s: code %d body %q err %v", kind, code, body, err)
			}
		}
		cl.Close()
		cancel()
	}
}

func request(opaque int32) []byte {
	c := codec.Command{Code: codec.GetRouteInfoByTopic, Opaque: opaque, Version: codec.ServerVersion}
	c.SetExt("topic", "T-opaque:1")
	return codec.AppendFrame(nil, &c)
}

func TestPipelined(t *testing.T) {
	for kind, s := range startBoth(t) {
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		var all []byte
		for i := range 5 {
			all = append(all, request(int32(-7+i*1000))...)
		}
		// The first frame in two writes, the rest in one.
		if _, err := conn.Write(all[:5]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		if _, err := conn.Write(all[5:]); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		for i := range 5 {
			var pre [4]byte
			if _, err := io.ReadFull(br, pre[:]); err != nil {
				t.Fatalf("%s: reply %d: %v", kind, i, err)
			}
			frame := make([]byte, binary.BigEndian.Uint32(pre[:]))
			if _, err := io.ReadFull(br, frame); err != nil {
				t.Fatal(err)
			}
			var cmd codec.Command
			if err := codec.Decode(frame, &cmd); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if want := int32(-7 + i*1000); cmd.Opaque != want || !cmd.IsResponse() || cmd.Code != 0 || !bytes.Equal(cmd.Body, testBody) {
				t.Errorf("%s: reply %d: opaque %d flag %d code %d body %q, want opaque %d", kind, i, cmd.Opaque, cmd.Flag, cmd.Code, cmd.Body, want)
			}
		}
		conn.Close()
	}
}

func TestBadFrameCloses(t *testing.T) {
	for kind, s := range startBoth(t) {
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte{0, 0, 0, 2, 0, 0})
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Errorf("%s: a frame of length 2 was answered", kind)
		}
		conn.Close()
	}
}

func TestOpaqueDigits(t *testing.T) {
	f := func(hdr string, want string) {
		t.Helper()
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)))
		frame = append(frame, hdr...)
		got, err := opaqueDigits(frame)
		if want == "" {
			if err == nil {
				t.Errorf("%q: got %q, want an error", hdr, got)
			}
			return
		}
		if err != nil || string(got) != want {
			t.Errorf("%q: got %q %v, want %q", hdr, got, err, want)
		}
	}
	f(`{"code":105,"extFields":{"topic":"a"},"flag":0,"opaque":1000000001,"version":479}`, "1000000001")
	f(`{"opaque":-12}`, "-12")
	f(`{"code":1}`, "")
	f(`{"opaque":x}`, "")
	f(`{"opaque":123456789012}`, "")
}
