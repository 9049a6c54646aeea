// remark_test.go checks that remarks quoting request text stay bounded.

package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/remoting/remotingtest"
)

// rawJSONRequest sends a JSON header built by hand: codec's encoder would
// escape the control bytes the header scanner accepts raw, as fastjson does.
func rawJSONRequest(w *remotingtest.Wire, code, opaque int32, ext ...string) {
	w.T.Helper()
	h := []byte(`{"code":` + strconv.Itoa(int(code)) + `,"extFields":{`)
	for i := 0; i+1 < len(ext); i += 2 {
		if i > 0 {
			h = append(h, ',')
		}
		h = append(h, `"`+ext[i]+`":"`+ext[i+1]+`"`...)
	}
	h = append(h, `},"flag":0,"language":"JAVA","opaque":`+strconv.Itoa(int(opaque))+`,"version":479}`...)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(h)))
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(h)))
	w.SendRaw(append(frame, h...))
}

// recvSized reads one frame and returns it decoded with its size on the
// wire, prefix included.
func recvSized(t *testing.T, w *remotingtest.Wire) (*codec.Command, int) {
	t.Helper()
	w.NC.SetReadDeadline(time.Now().Add(30 * time.Second))
	var pre [4]byte
	if _, err := io.ReadFull(w.NC, pre[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(pre[:]))
	if _, err := io.ReadFull(w.NC, frame); err != nil {
		t.Fatal(err)
	}
	c := new(codec.Command)
	if err := codec.Decode(frame, c); err != nil {
		t.Fatalf("answer of %d bytes does not decode: %v", len(frame)+4, err)
	}
	return c, len(frame) + 4
}

// wantEchoed checks that remark quotes in, cut to maxEcho bytes with its
// length, in place of the whole text.
func wantEchoed(t *testing.T, remark, in string) {
	t.Helper()
	want := in[:maxEcho] + "...(" + strconv.Itoa(len(in)) + " bytes)"
	if !strings.Contains(remark, want) || strings.Contains(remark, in[:maxEcho+1]) {
		t.Fatalf("remark of %d bytes does not quote the %d-byte input cut to %d bytes:\n%.400q", len(remark), len(in), maxEcho, remark)
	}
}

func TestRemarkEchoOfControlBytesIsBounded(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	// Each raw 0x01 would be written back as the 6-byte \u0001.
	long := string(bytes.Repeat([]byte{0x01}, 1<<20))

	rawJSONRequest(w, codec.GetRouteInfoByTopic, 1, "topic", long)
	resp, size := recvSized(t, w)
	if resp.Code != codec.TopicNotExist {
		t.Fatalf("code %d remark %.100q", resp.Code, resp.Remark)
	}
	wantEchoed(t, resp.Remark, long)
	if size > 4<<10 {
		t.Fatalf("a missing topic of %d bytes is answered with %d bytes", len(long), size)
	}

	rawJSONRequest(w, codec.GetKVConfig, 2, "namespace", long, "key", long+"k")
	resp, size = recvSized(t, w)
	if resp.Code != codec.QueryNotFound || !strings.HasPrefix(resp.Remark, "No config item, Namespace: ") {
		t.Fatalf("code %d remark %.100q", resp.Code, resp.Remark)
	}
	wantEchoed(t, resp.Remark, long)
	wantEchoed(t, resp.Remark, long+"k")
	if size > 4<<10 {
		t.Fatalf("a missing KV item is answered with %d bytes", size)
	}

	rawJSONRequest(w, codec.GetKVListByNamespace, 3, "namespace", long)
	resp, size = recvSized(t, w)
	if resp.Code != codec.QueryNotFound {
		t.Fatalf("code %d remark %.100q", resp.Code, resp.Remark)
	}
	wantEchoed(t, resp.Remark, long)
	if size > 4<<10 {
		t.Fatalf("a missing KV namespace is answered with %d bytes", size)
	}
}

// Names Java accepts are quoted whole, so those answers stay Java's.
func TestRemarkEchoOfNormalNamesIsWhole(t *testing.T) {
	s, _ := startServer(t, testConfig(t))
	w := dialWire(t, s.Addr())
	topic := strings.Repeat("t", 127)
	resp := w.Call(request(codec.GetRouteInfoByTopic, 1, "topic", topic))
	if want := "No topic route info in name server for the topic: " + topic + faqSuffix; resp.Code != codec.TopicNotExist || resp.Remark != want {
		t.Fatalf("code %d remark %q, want %q", resp.Code, resp.Remark, want)
	}
	ns, key := strings.Repeat("n", maxEcho), strings.Repeat("é", 100)
	resp = w.Call(request(codec.GetKVConfig, 2, "namespace", ns, "key", key))
	if want := "No config item, Namespace: " + ns + " Key: " + key; resp.Code != codec.QueryNotFound || resp.Remark != want {
		t.Fatalf("code %d remark %q, want %q", resp.Code, resp.Remark, want)
	}
}

func TestConfigUpdateRemarkEchoIsBounded(t *testing.T) {
	s, _ := startServer(t, adminConfig(t))
	w := dialWire(t, s.Addr())
	key := strings.Repeat("\x01", 1<<20)
	resp := w.Call(configUpdate(1, key+"=1\n"))
	if resp.Code != codec.NoPermission {
		t.Fatalf("code %d remark %.100q", resp.Code, resp.Remark)
	}
	wantEchoed(t, resp.Remark, key)
	value := strings.Repeat("x", 1<<20)
	resp = w.Call(configUpdate(2, "orderMessageEnable=true\nwaitSecondsForService="+value+"\n"))
	if resp.Code != codec.SystemError || len(resp.Remark) > 4*maxEcho {
		t.Fatalf("bad value: code %d remark of %d bytes: %.300q", resp.Code, len(resp.Remark), resp.Remark)
	}
}

func TestEchoedCutsOnRuneBoundary(t *testing.T) {
	for _, tc := range []struct {
		in       string
		keep     int // bytes of in kept; len(in) for whole
		whole    bool
		validOut bool
	}{
		{strings.Repeat("a", maxEcho), maxEcho, true, true},
		{strings.Repeat("a", maxEcho+1), maxEcho, false, true},
		{strings.Repeat("é", maxEcho), maxEcho - 1, false, true},       // 2-byte runes: 255 is mid-rune
		{strings.Repeat("€", maxEcho), maxEcho, false, true},           // 3-byte runes: 255 is a boundary
		{"a" + strings.Repeat("€", maxEcho), maxEcho - 2, false, true}, // 1 + 3k: back 2 bytes
		{strings.Repeat("\x80", 2*maxEcho), maxEcho - 3, false, false}, // not UTF-8: bounded walk back
	} {
		out := echoed(tc.in)
		if tc.whole {
			if out != tc.in {
				t.Fatalf("%d bytes: changed to %q", len(tc.in), out)
			}
			continue
		}
		want := tc.in[:tc.keep] + "...(" + strconv.Itoa(len(tc.in)) + " bytes)"
		if out != want {
			t.Fatalf("%d bytes: got %q, want %q", len(tc.in), out, want)
		}
		if tc.validOut && !utf8.ValidString(out) {
			t.Fatalf("%d bytes: cut inside a rune: %q", len(tc.in), out)
		}
	}
}
