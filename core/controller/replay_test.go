// The recorded Java 5.3.3 exchanges replayed against the decisions: every
// recorded reply to a request this package decides must come out the same
// (code, remark, extFields and their order, body bytes).

package controller

import (
	"bytes"
	"slices"
	"testing"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/core/controller/controllertest"
)

func TestReplayVectors(t *testing.T) {
	t.Parallel()
	steps, err := controllertest.Script()
	if err != nil {
		t.Fatal(err)
	}
	s, live := NewState(), NewLiveness()
	compared := map[int32]int{}
	for _, st := range steps {
		h, err := st.Req.ParseHeader()
		if err != nil {
			t.Fatal(err)
		}
		now := st.Req.TS.UnixMilli()
		b, err := st.Req.Body()
		if err != nil {
			t.Fatal(err)
		}
		var got Reply
		if h.Code == codec.BrokerHeartbeat {
			var hb Heartbeat
			ParseHeartbeat(&h, &hb)
			live.Heartbeat(&hb, uint64(st.Req.Conn), now)
			got = HeartbeatReply(&hb)
		} else {
			d, ok := s.decide(h.Code, &h, b, Env{Live: live, Now: now})
			if !ok {
				continue // 1005, 1010, unknown codes: the network side's
			}
			if len(d.Events) > 0 {
				if err := s.ApplyEntry(EncodeBatch(nil, d.Events)); err != nil {
					t.Fatal(err)
				}
			}
			got = d.Reply
		}
		if st.Resp == nil {
			continue
		}
		where := st.Req.File + " " + codec.RequestCodeName(h.Code)
		diffs, err := controllertest.Compare(st.Resp, controllertest.Got{
			Code: got.Code, Remark: got.Remark, HasExt: got.HasExt, Ext: extMap(got.Ext), Body: got.Body,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s conn %d opaque %d: %s", where, st.Req.Conn, h.Opaque, d)
		}
		want, _ := st.Resp.ParseHeader()
		if keys := extKeys(got.Ext); len(diffs) == 0 && !slices.Equal(keys, want.ExtOrder) {
			t.Errorf("%s opaque %d: extFields order %v, want %v", where, h.Opaque, keys, want.ExtOrder)
		}
		if wb, _ := st.Resp.Body(); len(diffs) == 0 && !bytes.Equal(wb, got.Body) {
			t.Errorf("%s opaque %d: body %s, want the recorded bytes %s", where, h.Opaque, got.Body, wb)
		}
		// The whole response frame, as the network side will write it
		// (opaque and version are the transport's; a standalone Java
		// controller stamps version 0), is the recorded one byte for byte.
		if len(diffs) == 0 {
			var c codec.Command
			got.Fill(&c)
			c.Opaque, c.Flag, c.Version, c.Language = want.Opaque, codec.FlagResponse, 0, codec.LanguageJava
			raw, err := st.Resp.Raw()
			if err != nil {
				t.Fatal(err)
			}
			if frame := codec.AppendFrame(nil, &c); !bytes.Equal(frame, raw) {
				t.Errorf("%s opaque %d: frame\n%q\nwant\n%q", where, h.Opaque, frame, raw)
			}
		}
		compared[h.Code]++
	}
	// Every decided code of the recordings, and how many replies of each.
	want := map[int32]int{1001: 10, 1002: 9, 1003: 7, 1004: 17, 1006: 4, 1011: 5, 1012: 5, 1013: 10, 904: 3}
	for code, n := range want {
		if compared[code] != n {
			t.Errorf("compared %d replies to %d, want %d", compared[code], code, n)
		}
	}
	t.Logf("compared: %v", compared)
}

func extMap(ext []codec.Field) map[string]string {
	m := make(map[string]string, len(ext))
	for _, f := range ext {
		m[f.Key] = f.Value
	}
	return m
}

func extKeys(ext []codec.Field) []string {
	var keys []string
	for _, f := range ext {
		keys = append(keys, f.Key)
	}
	return keys
}
