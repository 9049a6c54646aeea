// The compressed REGISTER_BROKER body (header compressed=true) and the
// encoder that produces REGISTER_BROKER bodies the way a Java broker does.

package body

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// MaxInflated bounds what the sections of a compressed registration may
// add up to. The frame limit is 16 MiB, and text topic records compress
// roughly 10:1, so 256 MiB leaves room for any real broker.
const MaxInflated = 256 << 20

// Caps on one section. Java writes a DataVersion as three longs and a
// topic record as a name of at most 127 characters, four short fields and
// the few attributes TopicAttributes knows; the filter-server list and a
// static-topic mapping (a currIdMap entry per queue) grow with the
// deployment but stay far below a frame. A claim beyond its cap is refused
// before anything is inflated for it, so no single section can make the
// decoder buffer a bomb.
const (
	maxRecordSection = 64 << 10
	maxListSection   = 4 << 20
)

// trailWindow is how far past the last section the stream is inflated to
// see it end. A body that ends there, as every broker's does, has its
// checksum verified; what lies beyond is left uninflated, as Java leaves it.
const trailWindow = 4 << 10

// maxPrealloc caps how many elements a count read from the body may
// reserve room for before the elements have been parsed.
const maxPrealloc = 1024

// decodeCompressed reads the layout Java's RegisterBrokerBody.encode(true)
// writes into a zlib stream, all integers 4-byte big-endian:
//
//	len, DataVersion JSON
//	count, then count times: len, TopicConfig text record
//	len, filterServerList JSON
//	count, then count times: len, TopicQueueMappingInfo JSON  (version >= 413)
//
// Like Java's InflaterInputStream it inflates only as far as the sections
// it parses, so bytes after the last section cost nothing: a few hundred
// kilobytes that would inflate to gigabytes of padding are read as the few
// bytes in front. What the sections claim is checked before it is read,
// against the per-section caps and against maxInflated (MaxInflated in
// production; tests pass less) for all of them together, so a lying length
// or count is an error, never a large allocation. n is how many inflated
// bytes the sections took.
func decodeCompressed(b []byte, version int32, maxInflated int) (rb *RegisterBroker, n int, err error) {
	return decodeCompressedTopics(b, version, maxInflated, 0)
}

// decodeCompressedTopics is decodeCompressed refusing, before any topic
// record is read, a topic count above maxTopics (0: no bound).
func decodeCompressedTopics(b []byte, version int32, maxInflated, maxTopics int) (rb *RegisterBroker, n int, err error) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, 0, fmt.Errorf("compressed register body: %w", err)
	}
	rd := sectionReader{r: bufio.NewReader(zr), max: maxInflated}

	rb = &RegisterBroker{}
	dvJSON, err := rd.chunk(maxRecordSection)
	if err != nil {
		return nil, 0, fmt.Errorf("compressed register body: data version: %w", err)
	}
	if rb.DataVersion, _, err = DecodeDataVersion(dvJSON); err != nil {
		return nil, 0, fmt.Errorf("compressed register body: %w", err)
	}

	count, err := rd.count() // each record has at least its length word
	if err != nil {
		return nil, 0, fmt.Errorf("compressed register body: topic count: %w", err)
	}
	if maxTopics > 0 && count > maxTopics {
		return nil, 0, &TooManyTopicsError{Count: count, Max: maxTopics}
	}
	// count is only checked against 4 bytes a record; a 64-byte
	// TopicConfig per claimed record would let a zlib bomb ask for 16
	// times the limit. Records that really follow grow the slice.
	rb.Topics = make([]TopicConfig, 0, min(count, maxPrealloc))
	for i := 0; i < count; i++ {
		rec, err := rd.chunk(maxRecordSection)
		if err != nil {
			return nil, 0, fmt.Errorf("compressed register body: topic %d: %w", i, err)
		}
		tc, err := parseTopicRecord(rec)
		if err != nil {
			return nil, 0, fmt.Errorf("compressed register body: topic %d: %w", i, err)
		}
		rb.Topics = append(rb.Topics, tc)
	}

	fsJSON, err := rd.chunk(maxListSection)
	if err != nil {
		return nil, 0, fmt.Errorf("compressed register body: filter server list: %w", err)
	}
	// Java logs a bad list and goes on with an empty one; a JSON null
	// gives no list at all.
	if !isNull(fsJSON) {
		rb.FilterServerList = []string{}
		var list []string
		if jsonAPI.Unmarshal(fsJSON, &list) == nil && list != nil {
			rb.FilterServerList = list
		}
	}

	if version >= versionV5_0_0 {
		m, err := rd.count()
		if err != nil {
			return nil, 0, fmt.Errorf("compressed register body: mapping count: %w", err)
		}
		for i := 0; i < m; i++ {
			js, err := rd.chunk(maxListSection)
			if err != nil {
				return nil, 0, fmt.Errorf("compressed register body: mapping %d: %w", i, err)
			}
			var head struct {
				Topic *string `json:"topic"`
			}
			stored, err := compactStored(js)
			if err == nil {
				err = jsonAPI.Unmarshal(stored, &head)
			}
			if err != nil {
				return nil, 0, fmt.Errorf("compressed register body: mapping %d: %w", i, err)
			}
			if head.Topic == nil {
				// Java's map refuses the null key and the registration fails.
				return nil, 0, fmt.Errorf("compressed register body: mapping %d: no topic", i)
			}
			if rb.MappingInfo == nil {
				rb.MappingInfo = make(map[string][]byte, min(m, maxPrealloc))
			}
			rb.MappingInfo[*head.Topic] = stored
		}
	}
	if err := rd.end(); err != nil {
		return nil, 0, fmt.Errorf("compressed register body: %w", err)
	}
	return rb, rd.used, nil
}

// sectionReader reads length-prefixed sections straight from the
// inflating stream.
type sectionReader struct {
	r    *bufio.Reader
	max  int    // the limit on all sections together
	used int    // inflated bytes the sections have taken
	big  []byte // sections longer than r's buffer, reused
}

var errShort = errors.New("truncated")

// take returns the next n inflated bytes, valid until the next call.
func (r *sectionReader) take(n int) ([]byte, error) {
	if n > r.max-r.used {
		return nil, fmt.Errorf("%d bytes at offset %d: inflates beyond %d bytes", n, r.used, r.max)
	}
	r.used += n
	var b []byte
	var err error
	if n <= r.r.Size() {
		// Peek hands out the buffered bytes without a copy.
		if b, err = r.r.Peek(n); err == nil {
			_, err = r.r.Discard(n)
		}
	} else {
		b, err = r.readLong(n)
	}
	switch err {
	case nil:
		return b, nil
	case io.EOF, io.ErrUnexpectedEOF:
		return nil, errShort
	}
	return nil, fmt.Errorf("inflate: %w", err)
}

// readLong reads a section longer than r's buffer, growing the buffer as
// the bytes arrive rather than by the length claimed: a lie then costs
// what the stream really holds.
func (r *sectionReader) readLong(n int) ([]byte, error) {
	b := r.big[:0]
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(n-len(b), max(len(b), r.r.Size())))
		}
		m, err := io.ReadFull(r.r, b[len(b):min(n, cap(b))])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	r.big = b
	return b, nil
}

func (r *sectionReader) int32() (int32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// count reads an element count and checks that count elements of at least
// their 4-byte length word each fit under the limit.
func (r *sectionReader) count() (int, error) {
	v, err := r.int32()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("negative count %d", v)
	}
	if need := int64(v) * 4; need > int64(r.max-r.used) {
		return 0, fmt.Errorf("count %d at offset %d: inflates beyond %d bytes", v, r.used, r.max)
	}
	return int(v), nil
}

// chunk reads a length, at most limit, and that many bytes, valid until
// the next read.
func (r *sectionReader) chunk(limit int) ([]byte, error) {
	v, err := r.int32()
	if err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, fmt.Errorf("negative length %d", v)
	}
	if int(v) > limit {
		return nil, fmt.Errorf("length %d exceeds the %d bytes such a section can hold", v, limit)
	}
	return r.take(int(v))
}

// end inflates at most trailWindow bytes past the last section: a stream
// that ends within them must end well (checksum and all).
func (r *sectionReader) end() error {
	if _, err := r.r.Discard(trailWindow); err != nil && err != io.EOF {
		return fmt.Errorf("inflate: %w", err)
	}
	return nil
}

// parseTopicRecord parses TopicConfig.encode() text: "name read write perm
// filterType[ attributesJSON]". Like Java's String.split(" "), trailing
// empty fields vanish and inner empty ones fail the number parse. The
// record carries no topicSysFlag or order: they decode as 0 and false.
// Attributes that do not parse (Java's split breaks any value holding a
// space) are dropped silently, as Java does.
func parseTopicRecord(rec []byte) (TopicConfig, error) {
	var fields [6][]byte
	nf := 0
	rest := rec
	for nf < len(fields) {
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			fields[nf] = rest
			nf++
			rest = nil
			break
		}
		fields[nf] = rest[:i]
		nf++
		rest = rest[i+1:]
	}
	// Trailing empty fields do not count (String.split semantics).
	for nf > 0 && len(fields[nf-1]) == 0 && len(rest) == 0 {
		nf--
	}
	if nf < 5 {
		return TopicConfig{}, fmt.Errorf("record %q: want at least 5 fields", rec)
	}
	tc := TopicConfig{TopicName: string(fields[0])}
	var err error
	if tc.ReadQueueNums, err = parseInt32(fields[1]); err != nil {
		return TopicConfig{}, fmt.Errorf("record %q: readQueueNums: %w", rec, err)
	}
	if tc.WriteQueueNums, err = parseInt32(fields[2]); err != nil {
		return TopicConfig{}, fmt.Errorf("record %q: writeQueueNums: %w", rec, err)
	}
	if tc.Perm, err = parseInt32(fields[3]); err != nil {
		return TopicConfig{}, fmt.Errorf("record %q: perm: %w", rec, err)
	}
	// The constants are shared by every topic; a copy per record would not be.
	switch string(fields[4]) {
	case "SINGLE_TAG":
		tc.TopicFilterType = "SINGLE_TAG"
	case "MULTI_TAG":
		tc.TopicFilterType = "MULTI_TAG"
	default:
		// TopicFilterType.valueOf throws on anything else.
		return TopicConfig{}, fmt.Errorf("record %q: unknown topicFilterType %q", rec, fields[4])
	}
	if nf == 6 {
		var attrs map[string]string
		if jsonAPI.Unmarshal(fields[5], &attrs) == nil {
			tc.Attributes = attrs
		}
	}
	return tc, nil
}

// EncodeRegisterBroker produces the REGISTER_BROKER body a Java broker
// sends for rb at the given request version: the plain JSON form, or with
// compressed the zlib layout read by decodeCompressed, deflated at level 9
// like java.util.zip.Deflater(BEST_COMPRESSION). Versions below 37 get the
// bare wrapper; from 413 (5.0.0) on the wrapper has the 5.x mapping keys.
// Topics are written in rb's order, mappings sorted by topic.
func EncodeRegisterBroker(rb *RegisterBroker, compressed bool, version int32) ([]byte, error) {
	if compressed {
		return encodeCompressed(rb, version)
	}
	var dst []byte
	if version >= versionV3_0_11 {
		dst = append(dst, `{"filterServerList":`...)
		dst = appendStringList(dst, rb.FilterServerList, Legacy)
		dst = append(dst, `,"topicConfigSerializeWrapper":`...)
	}
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendDataVersion(dst, rb.DataVersion)
	v5 := version >= versionV5_0_0
	if v5 {
		// A 5.x broker versions its mappings apart; the NameServer never
		// reads that version, so a zero one stands in for it.
		dst = append(dst, `,"mappingDataVersion":`...)
		dst = AppendDataVersion(dst, DataVersion{})
	}
	dst = append(dst, `,"topicConfigTable":{`...)
	for i := range rb.Topics {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, rb.Topics[i].TopicName, Legacy)
		dst = append(dst, ':')
		dst = appendTopicConfig(dst, &rb.Topics[i])
	}
	dst = append(dst, '}')
	if v5 {
		// The NameServer reads only the info map; details stay empty.
		dst = append(dst, `,"topicQueueMappingDetailMap":{}`...)
	}
	if v5 || len(rb.MappingInfo) > 0 {
		dst = append(dst, `,"topicQueueMappingInfoMap":{`...)
		for i, topic := range sortedKeys(rb.MappingInfo) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, topic, Legacy)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSON(dst, rb.MappingInfo[topic], Legacy); err != nil {
				return nil, fmt.Errorf("encode mapping of %q: %w", topic, err)
			}
		}
		dst = append(dst, '}')
	}
	dst = append(dst, '}')
	if version >= versionV3_0_11 {
		dst = append(dst, '}')
	}
	return dst, nil
}

func appendTopicConfig(dst []byte, tc *TopicConfig) []byte {
	dst = append(dst, '{')
	if tc.Attributes != nil {
		dst = append(dst, `"attributes":`...)
		dst = appendStringMap(dst, tc.Attributes)
		dst = append(dst, ',')
	}
	dst = append(dst, `"order":`...)
	dst = AppendBool(dst, tc.Order)
	dst = append(dst, `,"perm":`...)
	dst = AppendInt32(dst, tc.Perm)
	dst = append(dst, `,"readQueueNums":`...)
	dst = AppendInt32(dst, tc.ReadQueueNums)
	filter := tc.TopicFilterType
	if filter == "" {
		filter = defaultFilterType
	}
	dst = append(dst, `,"topicFilterType":`...)
	dst = AppendString(dst, filter, Legacy)
	dst = append(dst, `,"topicName":`...)
	dst = AppendString(dst, tc.TopicName, Legacy)
	dst = append(dst, `,"topicSysFlag":`...)
	dst = AppendInt32(dst, tc.TopicSysFlag)
	dst = append(dst, `,"writeQueueNums":`...)
	dst = AppendInt32(dst, tc.WriteQueueNums)
	return append(dst, '}')
}

func encodeCompressed(rb *RegisterBroker, version int32) ([]byte, error) {
	var raw []byte
	section := func(b []byte) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(b)))
		raw = append(raw, b...)
	}
	section(AppendDataVersion(nil, rb.DataVersion))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(rb.Topics)))
	var rec []byte
	for i := range rb.Topics {
		rec = appendTopicRecord(rec[:0], &rb.Topics[i], version)
		section(rec)
	}
	section(appendStringList(nil, rb.FilterServerList, Legacy))
	if version >= versionV5_0_0 {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(rb.MappingInfo)))
		for _, topic := range sortedKeys(rb.MappingInfo) {
			js, err := appendJSON(nil, rb.MappingInfo[topic], Legacy)
			if err != nil {
				return nil, fmt.Errorf("encode mapping of %q: %w", topic, err)
			}
			section(js)
		}
	}
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("compress register body: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compress register body: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress register body: %w", err)
	}
	return out.Bytes(), nil
}

// appendTopicRecord writes TopicConfig.encode(): 5.x brokers (version >=
// 413) add a trailing space and the attributes JSON ("{}" when empty); 4.x
// brokers stop after the filter type.
func appendTopicRecord(dst []byte, tc *TopicConfig, version int32) []byte {
	dst = append(dst, tc.TopicName...)
	dst = append(dst, ' ')
	dst = AppendInt32(dst, tc.ReadQueueNums)
	dst = append(dst, ' ')
	dst = AppendInt32(dst, tc.WriteQueueNums)
	dst = append(dst, ' ')
	dst = AppendInt32(dst, tc.Perm)
	dst = append(dst, ' ')
	filter := tc.TopicFilterType
	if filter == "" {
		filter = defaultFilterType
	}
	dst = append(dst, filter...)
	if version >= versionV5_0_0 {
		dst = append(dst, ' ')
		dst = appendStringMap(dst, tc.Attributes)
	}
	return dst
}
