package workload

import (
	"errors"
	"testing"
)

// DecodeShapes: the protocol-aware decoder reads both RESP2 and RESP3
// shapes to the same canonical value; the RESP3-only decoder fails loudly
// (DecodeErr) on RESP2 shapes instead of returning a wrong value; a
// failed read keeps its error and is not decoded.
func TestDecodeShapes(t *testing.T) {
	raw := []RawShape{
		{Op: "ZSCORE", Key: "z", Want: "1.5", Reply: 1.5},
		{Op: "ZSCORE", Key: "z", Want: "1.5", Reply: "1.5"},
		{Op: "HGETALL", Key: "h", Want: "a=1,b=2", Reply: map[string]any{"b": "2", "a": "1"}},
		{Op: "HGETALL", Key: "h", Want: "a=1,b=2", Reply: []any{"b", "2", "a", "1"}},
		{Op: "HGETALL", Key: "h", Reply: []any{"a", "1", "b"}}, // odd: not a hash
		{Op: "ZSCORE", Key: "z", Err: errors.New("read tcp: timeout")},
	}
	aware := DecodeShapes(raw, ProtocolAware)
	naive := DecodeShapes(raw, RESP3Only)
	for i, want := range []struct{ shape, got string }{{"float64", "1.5"}, {"string", "1.5"}, {"map", "a=1,b=2"}, {"array", "a=1,b=2"}, {"array", ""}, {"nil", ""}} {
		if aware[i].Shape != want.shape || aware[i].Got != want.got {
			t.Errorf("protocol-aware read %d = %+v, want shape %s got %q", i, aware[i], want.shape, want.got)
		}
	}
	if aware[4].DecodeErr == "" {
		t.Error("an odd HGETALL array decoded without error")
	}
	if aware[5].Err == "" || aware[5].DecodeErr != "" || aware[5].Got != "" {
		t.Errorf("failed read recorded as %+v", aware[5])
	}
	for _, i := range []int{0, 2} {
		if naive[i].Got != raw[i].Want || naive[i].DecodeErr != "" {
			t.Errorf("RESP3-only on a RESP3 reply %d: %+v", i, naive[i])
		}
	}
	for _, i := range []int{1, 3} {
		if naive[i].Got != "" || naive[i].DecodeErr == "" {
			t.Errorf("RESP3-only on a RESP2 reply %d decoded silently: %+v", i, naive[i])
		}
	}
	if got := CanonScore(3); got != "3" {
		t.Errorf("CanonScore(3) = %q", got)
	}
}
