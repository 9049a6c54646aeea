// command.go holds Command, one RemotingCommand, and the protocol's flag,
// serialize-type and version constants.

package codec

// Serialize types, the high byte of the header-length word.
const (
	SerializeJSON     byte = 0
	SerializeRocketMQ byte = 1
)

// Flag bits.
const (
	FlagResponse int32 = 1 << 0
	FlagOneway   int32 = 1 << 1
)

// ServerVersion is what the Java 5.3.3 NameServer stamps into every command
// it sends (MQVersion V5_3_3 ordinal); clients do not act on it.
const ServerVersion int32 = 479

// Field is one extFields entry, in wire order.
type Field struct {
	Key   string
	Value string
}

// Command is one RemotingCommand, request or response. It is reused across
// frames: Reset keeps its slices' capacity.
type Command struct {
	Code     int32
	Language byte // LanguageCode byte; JSON names are mapped to it
	Version  int32
	Opaque   int32
	Flag     int32
	Remark   string // "" is written as absent
	// Ext holds extFields in wire order. HasExt says whether the header had
	// an extFields object at all: Java writes none for a command without a
	// custom header and {} for one whose fields are all null.
	Ext    []Field
	HasExt bool
	Body   []byte // nil when the frame has no body
	// SerializeType is the header encoding the frame used; responses are
	// encoded with the request's.
	SerializeType byte

	scratch []byte    // backing store for unescaped JSON strings
	idx     *extIndex // finds repeated keys in a long header; nil until one does
	indexed bool      // the header being decoded uses idx
	// compared counts the key bytes the last decode compared in full, at
	// most, so tests can count that work rather than time it.
	compared int
}
