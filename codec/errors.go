// DecodeError: the one error type every framing and header failure returns.
package codec

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
