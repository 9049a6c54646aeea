// Pre-encoded GET_ROUTEINFO_BY_TOPIC request frames whose opaque is patched
// in place, so the load generator spends nothing on encoding.

package loadgen

import (
	"bytes"
	"fmt"

	"github.com/rocketns/rocketns/codec"
)

// Opaques are kept to ten decimal digits so every request frame of a topic
// has the same bytes but for the opaque's digits, which can be overwritten
// without re-encoding: opaque = opaqueBase + seq mod opaqueSpan.
const (
	opaqueBase   = 1_000_000_000
	opaqueSpan   = 1_000_000_000
	opaqueDigits = 10
)

// requestFrames holds one encoded route request per topic and where its
// opaque digits sit. It is read-only after newRequestFrames and shared by
// every connection: each copies a template into its own write buffer and
// patches the copy.
type requestFrames struct {
	frames [][]byte
	// at[i] is the offset of frames[i]'s first opaque digit.
	at []int
}

// newRequestFrames encodes a JSON-header route request for each topic, with
// the field order Java's fastjson writes, as the Java client sends it.
func newRequestFrames(topics []string, version int32) (*requestFrames, error) {
	rf := &requestFrames{frames: make([][]byte, len(topics)), at: make([]int, len(topics))}
	var cmd codec.Command
	marker := []byte(fmt.Sprintf(`"opaque":%d`, opaqueBase))
	for i, t := range topics {
		cmd.Reset()
		cmd.Code = codec.GetRouteInfoByTopic
		cmd.Version = version
		cmd.Language = codec.LanguageJava
		cmd.Opaque = opaqueBase
		cmd.SetExt("topic", t)
		f := codec.AppendFrame(nil, &cmd)
		// The marker cannot occur inside the topic: the encoder writes the
		// extFields before "flag", and "opaque" after it.
		j := bytes.LastIndex(f, marker)
		if j < 0 {
			return nil, fmt.Errorf("encode route request for %q: opaque not found in %q", t, f)
		}
		rf.frames[i] = f
		rf.at[i] = j + len(marker) - opaqueDigits
	}
	return rf, nil
}

// appendRequest appends topic i's request with opaque opaqueBase+seq%span to
// dst and returns it and the opaque used.
func (rf *requestFrames) appendRequest(dst []byte, i int, seq uint64) ([]byte, int32) {
	start := len(dst)
	dst = append(dst, rf.frames[i]...)
	op := opaqueBase + int32(seq%opaqueSpan)
	putDigits(dst[start+rf.at[i]:start+rf.at[i]+opaqueDigits], uint32(op))
	return dst, op
}

// putDigits writes v as exactly len(p) decimal digits, zero-padded.
func putDigits(p []byte, v uint32) {
	for i := len(p) - 1; i >= 0; i-- {
		p[i] = byte('0' + v%10)
		v /= 10
	}
}
