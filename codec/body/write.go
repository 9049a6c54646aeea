// JSON primitives written byte for byte as fastjson 1.2.83 writes them, in
// both dialects.

package body

import (
	"strconv"

	"github.com/rocketns/rocketns/codec/jsontext"
)

// maxSafeLong is the largest magnitude a JavaScript number holds exactly;
// fastjson's BrowserCompatible mode quotes any long beyond it.
const maxSafeLong = 9007199254740991

// AppendString appends s as a quoted JSON string in dialect d: fastjson's
// default form in Legacy (the form of headers too), BrowserCompatible in
// Standard (see jsontext).
func AppendString(dst []byte, s string, d Dialect) []byte {
	if d == Standard {
		return jsontext.AppendStringASCII(dst, s)
	}
	return jsontext.AppendString(dst, s)
}

// AppendInt32 appends v as a JSON number.
func AppendInt32(dst []byte, v int32) []byte {
	return strconv.AppendInt(dst, int64(v), 10)
}

// AppendInt64 appends a Java long: a number, except that Standard quotes
// values a JavaScript client could not hold exactly.
func AppendInt64(dst []byte, v int64, d Dialect) []byte {
	if d == Standard && (v > maxSafeLong || v < -maxSafeLong) {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v, 10)
		return append(dst, '"')
	}
	return strconv.AppendInt(dst, v, 10)
}

// AppendBool appends true or false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendIntKey writes a Long/Integer map key: bare in Legacy (fastjson
// without WriteNonStringKeyAsString), quoted in Standard.
func appendIntKey(dst []byte, id int64, d Dialect) []byte {
	if d == Standard {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, '"', ':')
	}
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, ':')
}

// appendField writes a bean property name and colon. Names are constant
// ASCII identifiers, so no escaping is needed.
func appendField(dst []byte, comma bool, name string) []byte {
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendStringList writes a JSON array of strings.
func appendStringList(dst []byte, list []string, d Dialect) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s, d)
	}
	return append(dst, ']')
}

// appendStringMap writes a legacy map[string]string with sorted keys.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k, Legacy)
		dst = append(dst, ':')
		dst = AppendString(dst, m[k], Legacy)
	}
	return append(dst, '}')
}
