// Frame decoding: the length prefix, the header-length word, and dispatch to
// the JSON or binary header parser.

package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/cloudwego/netpoll"
)

// DefaultMaxFrame is Java's com.rocketmq.remoting.frameMaxLength default. It
// bounds the whole frame including its 4-byte length prefix, as Netty's
// LengthFieldBasedFrameDecoder does, so the largest legal length field is
// DefaultMaxFrame-4.
const DefaultMaxFrame = 16 << 20

// maxHeaderLen is what the 24-bit header-length field can carry.
const maxHeaderLen = 1<<24 - 1

// MaxExtEntries bounds the extFields entries one header may hold, counting
// every entry read (repeats and nulls included, over all extFields objects
// of a JSON header), so the per-connection state a header builds stays
// small (see extIndex). Java has no bound; its largest header class has
// fewer than 40 fields.
const MaxExtEntries = 1024

// FrameLength validates the 4-byte big-endian length prefix and returns L,
// the number of bytes that follow it. max bounds L+4; max <= 0 means
// DefaultMaxFrame. L counts the header-length word, so L < 4 cannot be a
// frame.
func FrameLength(prefix []byte, max int) (int, error) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	if len(prefix) < 4 {
		return 0, &DecodeError{Reason: ReasonFrameTooShort, Err: fmt.Errorf("length prefix has %d bytes, want 4", len(prefix))}
	}
	l := int64(binary.BigEndian.Uint32(prefix))
	if l < 4 {
		return 0, &DecodeError{Reason: ReasonFrameTooShort, Err: fmt.Errorf("length field %d is below the 4-byte header-length word", l)}
	}
	if l+4 > int64(max) {
		return 0, &DecodeError{Reason: ReasonFrameTooLarge, Err: fmt.Errorf("frame of %d bytes exceeds the %d-byte limit", l+4, max)}
	}
	return int(l), nil
}

// Decode parses one frame without its length prefix (the header-length
// word, the header and the body) into c, which is reset first.
//
// Nothing is copied: c.Body and every string in c alias frame, except JSON
// strings that had escapes, which live in c's scratch buffer. All of them
// are valid until frame is reused (for a netpoll frame: until the Reader is
// released) or until the next Decode into c, whichever comes first.
func Decode(frame []byte, c *Command) error {
	c.Reset()
	if len(frame) < 4 {
		return &DecodeError{Reason: ReasonFrameTooShort, Err: fmt.Errorf("frame has %d bytes, want at least 4", len(frame))}
	}
	word := binary.BigEndian.Uint32(frame)
	typ := byte(word >> 24)
	h := int(word & maxHeaderLen)
	// Java checks the header length before looking at the type.
	if h > len(frame)-4 {
		return &DecodeError{Reason: ReasonBadHeaderLength, Err: fmt.Errorf("header length %d exceeds the %d bytes after the header-length word", h, len(frame)-4)}
	}
	header := frame[4 : 4+h]
	var err error
	switch typ {
	case SerializeJSON:
		err = decodeJSONHeader(header, c)
	case SerializeRocketMQ:
		err = decodeBinaryHeader(header, c)
	default:
		return &DecodeError{Reason: ReasonUnknownSerializeType, Err: fmt.Errorf("serialize type %d", typ)}
	}
	c.extDone()
	if err != nil {
		return err
	}
	c.SerializeType = typ
	if body := frame[4+h:]; len(body) > 0 {
		// Capped so an append by the holder cannot run into the next frame.
		c.Body = body[:len(body):len(body)]
	}
	return nil
}

// ReadCommand reads and decodes the next frame from r into c, waiting until
// the whole frame has arrived. max bounds the frame as in FrameLength.
//
// The frame is consumed but not released: c.Body and c's strings point into
// r's buffer and stay valid until the caller calls r.Release(), which it
// must do once it is done with c (and after copying whatever must outlive
// the request). A *DecodeError means the stream is unusable: Java closes the
// connection without answering, and so should the caller.
//
// Memory: the length field is checked against max before anything waits
// for or allocates the frame, so max is what bounds a frame's memory. A
// claimed length below max costs nothing until the bytes exist: netpoll's
// readers (the connection's and netpoll.NewReader's) grow their buffers as
// data arrives, not by the n passed to Next, and Next copies into one
// n-byte slice only once all n bytes are buffered. A peer that claims 16
// MiB and sends 10 bytes holds 10 bytes, and a peer has to send max bytes
// to make the server hold them.
func ReadCommand(r netpoll.Reader, max int, c *Command) error {
	prefix, err := r.Peek(4)
	if err != nil {
		return fmt.Errorf("read frame length: %w", err)
	}
	return ReadCommandOfLength(r, binary.BigEndian.Uint32(prefix), max, c)
}

// ReadCommandOfLength is ReadCommand for a caller that has peeked the
// frame's length prefix already (length is its value, the bytes after the
// prefix): the same checks and errors, without peeking the prefix again.
func ReadCommandOfLength(r netpoll.Reader, length uint32, max int, c *Command) error {
	var prefix [4]byte
	binary.BigEndian.PutUint32(prefix[:], length)
	l, err := FrameLength(prefix[:], max)
	if err != nil {
		return err
	}
	frame, err := r.Next(4 + l)
	if err != nil {
		return fmt.Errorf("read frame of %d bytes: %w", l+4, err)
	}
	return Decode(frame[4:], c)
}
