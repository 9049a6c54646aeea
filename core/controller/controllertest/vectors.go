// The recorded frames, their headers and bodies, the replay script built
// from them, and the comparison of a reply with a recorded one.

package controllertest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/codectest"
)

// RecordingOrder is the order the files were recorded in; each continues
// the controller state the previous one left.
var RecordingOrder = []string{
	"ctl-startup-two-brokers.jsonl",
	"ctl-mqadmin-reads.jsonl",
	"ctl-errors.jsonl",
}

// Frame is one recorded frame (one line of a .jsonl file).
type Frame struct {
	File          string          `json:"-"`
	Conn          int             `json:"conn"`
	Dir           string          `json:"dir"` // "req" (towards the listening side) or "resp"
	Seq           int             `json:"seq"`
	TS            time.Time       `json:"ts"`
	FrameB64      string          `json:"frame_b64"`
	Header        json.RawMessage `json:"header"`
	SerializeType int             `json:"serializeType"`
	BodyEnc       string          `json:"body_enc"` // "utf8", "base64" or "none"
	BodyText      string          `json:"body"`

	// Synthetic marks a frame the script added (see Script); it was not
	// on the wire.
	Synthetic bool `json:"-"`
}

// Raw returns the whole frame as sent, including its 4-byte length prefix.
func (f *Frame) Raw() ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(f.FrameB64)
	if err != nil {
		return nil, fmt.Errorf("%s conn %d seq %d: bad frame_b64: %w", f.File, f.Conn, f.Seq, err)
	}
	return b, nil
}

// Body returns the frame's body, nil when it has none.
func (f *Frame) Body() ([]byte, error) {
	switch f.BodyEnc {
	case "none", "":
		return nil, nil
	case "base64":
		return base64.StdEncoding.DecodeString(f.BodyText)
	}
	return []byte(f.BodyText), nil
}

// Header is a recorded header, from a JSON or a decoded binary header.
type Header struct {
	Code   int32
	Flag   int32
	Opaque int32
	Remark string // "" when absent or null
	// Ext is nil when the header has no extFields; ExtOrder lists its keys
	// in wire order.
	Ext      map[string]string
	ExtOrder []string
}

// Oneway reports flag bit 1.
func (h *Header) Oneway() bool { return h.Flag&2 != 0 }

// ExtValue lets a header's extFields serve as a request's fields.
func (h *Header) ExtValue(key string) (string, bool) {
	v, ok := h.Ext[key]
	return v, ok
}

// ParseHeader decodes f's header.
func (f *Frame) ParseHeader() (Header, error) {
	var raw struct {
		Code      int32           `json:"code"`
		Flag      int32           `json:"flag"`
		Opaque    int32           `json:"opaque"`
		Remark    *string         `json:"remark"`
		ExtFields json.RawMessage `json:"extFields"`
	}
	if err := json.Unmarshal(f.Header, &raw); err != nil {
		return Header{}, fmt.Errorf("%s conn %d seq %d: header: %w", f.File, f.Conn, f.Seq, err)
	}
	h := Header{Code: raw.Code, Flag: raw.Flag, Opaque: raw.Opaque}
	if raw.Remark != nil {
		h.Remark = *raw.Remark
	}
	if len(raw.ExtFields) > 0 && string(raw.ExtFields) != "null" {
		if err := json.Unmarshal(raw.ExtFields, &h.Ext); err != nil {
			return Header{}, fmt.Errorf("%s conn %d seq %d: extFields: %w", f.File, f.Conn, f.Seq, err)
		}
		order, err := keyOrder(raw.ExtFields)
		if err != nil {
			return Header{}, fmt.Errorf("%s conn %d seq %d: extFields: %w", f.File, f.Conn, f.Seq, err)
		}
		h.ExtOrder = order
	}
	return h, nil
}

// keyOrder lists the keys of a flat JSON object of strings in order.
func keyOrder(obj []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Dir is the absolute path of the vectors directory.
func Dir() string {
	return codectest.RepoPath("core", "controller", "testdata", "vectors")
}

// Load reads one file's frames in recorded order.
func Load(path string) ([]Frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Frame
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var fr Frame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fr.File = filepath.Base(path)
		out = append(out, fr)
	}
	return out, sc.Err()
}

// Step is one request of the replay, with the recorded reply (nil for a
// oneway request, or one Java did not answer).
type Step struct {
	Req  *Frame
	Resp *Frame
}

// Script loads every file in RecordingOrder and returns the requests
// towards the controller in recorded order, each with its reply. The 1007
// exchanges (mqadmin to a broker) are left out.
//
// The brokers kept heartbeating between the files without those frames
// being kept, so that a replay sees them alive as Java did: at the start of
// each file after the first, the script repeats the latest heartbeat of
// every connection seen so far (marked Synthetic, timestamped like the
// file's first frame).
func Script() ([]Step, error) {
	var steps []Step
	lastHB := map[int]*Frame{}
	for i, name := range RecordingOrder {
		frames, err := Load(filepath.Join(Dir(), name))
		if err != nil {
			return nil, err
		}
		if i > 0 && len(frames) > 0 {
			conns := make([]int, 0, len(lastHB))
			for c := range lastHB {
				conns = append(conns, c)
			}
			slices.Sort(conns)
			for _, c := range conns {
				hb := *lastHB[c]
				hb.TS, hb.Synthetic = frames[0].TS, true
				steps = append(steps, Step{Req: &hb})
			}
		}
		resps := map[[2]int]*Frame{}
		for j := range frames {
			fr := &frames[j]
			if fr.Dir != "resp" {
				continue
			}
			h, err := fr.ParseHeader()
			if err != nil {
				return nil, err
			}
			resps[[2]int{fr.Conn, int(h.Opaque)}] = fr
		}
		for j := range frames {
			fr := &frames[j]
			if fr.Dir != "req" {
				continue
			}
			h, err := fr.ParseHeader()
			if err != nil {
				return nil, err
			}
			if h.Code == 1007 {
				continue
			}
			if h.Code == 904 {
				lastHB[fr.Conn] = fr
			}
			st := Step{Req: fr}
			if !h.Oneway() {
				st.Resp = resps[[2]int{fr.Conn, int(h.Opaque)}]
			}
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// Got is a reply to compare with a recorded one.
type Got struct {
	Code   int32
	Remark string
	HasExt bool
	Ext    map[string]string
	Body   []byte
}

// Compare returns how got differs from the recorded reply want: code,
// remark, extFields as a map (absent vs {} counts), and body as parsed JSON
// (bare integer keys allowed). Opaque, version and flag are not compared:
// they vary between runs or belong to the transport. An empty result means
// equal.
func Compare(want *Frame, got Got) ([]string, error) {
	h, err := want.ParseHeader()
	if err != nil {
		return nil, err
	}
	var diffs []string
	if h.Code != got.Code {
		diffs = append(diffs, fmt.Sprintf("code %d, want %d", got.Code, h.Code))
	}
	if h.Remark != got.Remark {
		diffs = append(diffs, fmt.Sprintf("remark %q, want %q", got.Remark, h.Remark))
	}
	if (h.Ext != nil) != got.HasExt {
		diffs = append(diffs, fmt.Sprintf("has extFields %v, want %v", got.HasExt, h.Ext != nil))
	} else if h.Ext != nil && !reflect.DeepEqual(h.Ext, nonNil(got.Ext)) {
		diffs = append(diffs, fmt.Sprintf("extFields %v, want %v", got.Ext, h.Ext))
	}
	wantBody, err := want.Body()
	if err != nil {
		return nil, err
	}
	if !SameJSON(wantBody, got.Body) {
		diffs = append(diffs, fmt.Sprintf("body %s, want %s", got.Body, wantBody))
	}
	return diffs, nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// SameJSON reports whether a and b hold the same JSON value (fastjson's
// bare integer keys allowed); two empty bodies are the same, and bodies
// that are not JSON must be equal bytes.
func SameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(body.Lenient(a), &va) != nil || json.Unmarshal(body.Lenient(b), &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}
