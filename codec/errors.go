// DecodeError and EncodeError: what framing and header failures return.

package codec

import "fmt"

// Reasons a frame is rejected. They are fixed, short and few, so they can be
// used as metric labels. Java closes the connection on every one of them.
const (
	ReasonFrameTooLarge        = "frame_too_large"
	ReasonFrameTooShort        = "frame_too_short"
	ReasonBadHeaderLength      = "bad_header_length"
	ReasonUnknownSerializeType = "unknown_serialize_type"
	ReasonBadJSONHeader        = "bad_json_header"
	ReasonBadBinaryHeader      = "bad_binary_header"
)

// DecodeError says why a frame could not be decoded. Reason is one of the
// Reason* labels; Err carries the detail (an offset, a length) for logs.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	if e.Err == nil {
		return "decode frame: " + e.Reason
	}
	return "decode frame: " + e.Reason + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// EncodeError is a command that cannot be framed: its header does not fit
// the 24-bit header-length field, or header and body together do not fit
// the 32-bit length prefix.
type EncodeError struct {
	HeaderLen int // bytes the header would take
	BodyLen   int
}

func (e *EncodeError) Error() string {
	if e.HeaderLen > maxHeaderLen {
		return fmt.Sprintf("encode frame: header of %d bytes exceeds the %d-byte header-length field", e.HeaderLen, maxHeaderLen)
	}
	return fmt.Sprintf("encode frame: header of %d bytes and body of %d bytes exceed the 32-bit frame length", e.HeaderLen, e.BodyLen)
}
