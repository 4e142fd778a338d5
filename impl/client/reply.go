package client

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
)

// ErrUnexpectedReply is returned by the As* helpers when a reply does not
// have the shape the caller asked for. Callers branch on it with errors.Is.
var ErrUnexpectedReply = errors.New("unexpected reply type")

// normalise maps one decoded reply, as either backend hands it over, onto the
// Pool.Do vocabulary: nil, int64, string, float64, []any, map[string]any, and
// *ServerError for an error nested inside an aggregate (EXEC, a Lua table).
// RESP3-only types are folded onto their RESP2 shape so RESP2 and RESP3 runs
// compare equal: booleans become int64 1/0, big numbers become strings, and
// map keys are rendered as strings. nestedErr recognises a backend's error
// value inside an aggregate and returns its text.
func normalise(v any, nestedErr func(any) (string, bool)) any {
	if msg, ok := nestedErr(v); ok {
		return ParseServerError(msg)
	}
	switch t := v.(type) {
	case nil, int64, string, float64:
		return t
	case int:
		return int64(t)
	case bool:
		if t {
			return int64(1)
		}
		return int64(0)
	case *big.Int:
		return t.String()
	case []byte:
		return string(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e, nestedErr)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalise(e, nestedErr)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[fmt.Sprint(normalise(k, nestedErr))] = normalise(e, nestedErr)
		}
		return out
	}
	return v
}

// IsNil reports a nil reply (a missing key, RESP2 null bulk, RESP3 null).
func IsNil(reply any) bool { return reply == nil }

// AsInt64 reads an integer reply. A string holding a decimal integer is
// accepted too, because Lua scripts and RESP2 bulk replies often carry
// numbers as strings.
func AsInt64(reply any) (int64, error) {
	switch t := reply.(type) {
	case int64:
		return t, nil
	case string:
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read int64 from %q: %w", t, ErrUnexpectedReply)
		}
		return n, nil
	}
	return 0, fmt.Errorf("read int64 from %T: %w", reply, ErrUnexpectedReply)
}

// AsString reads a string reply (bulk, simple or verbatim string). A nil
// reply is an error here; check IsNil first when nil is legitimate.
func AsString(reply any) (string, error) {
	switch t := reply.(type) {
	case string:
		return t, nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	}
	return "", fmt.Errorf("read string from %T: %w", reply, ErrUnexpectedReply)
}

// AsStrings reads an array reply of strings, such as MGET's. Nil elements
// become "" and are reported in the returned mask, so a missing key and an
// empty value stay distinguishable.
func AsStrings(reply any) (vals []string, isNil []bool, err error) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("read []string from %T: %w", reply, ErrUnexpectedReply)
	}
	vals = make([]string, len(arr))
	isNil = make([]bool, len(arr))
	for i, e := range arr {
		if e == nil {
			isNil[i] = true
			continue
		}
		s, err := AsString(e)
		if err != nil {
			return nil, nil, fmt.Errorf("element %d: %w", i, err)
		}
		vals[i] = s
	}
	return vals, isNil, nil
}
