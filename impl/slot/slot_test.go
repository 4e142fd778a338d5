package slot_test

import (
	"testing"

	"github.com/slotgate/slotgate/impl/slot"
)

// Known values from the Valkey cluster specification and CLUSTER KEYSLOT.
func TestOf(t *testing.T) {
	cases := map[string]int{
		"123456789":            12739, // CRC16 check value 0x31C3 mod 16384
		"foo":                  12182,
		"{user1000}.following": slot.Of("user1000"),
		"{}":                   slot.Of("{}"),
		"a{b}{c}":              slot.Of("b"),
		"{{a}}":                slot.Of("{a"),
	}
	for key, want := range cases {
		if got := slot.Of(key); got != want {
			t.Errorf("slot.Of(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestHashTag(t *testing.T) {
	cases := map[string]string{
		"plain":                   "plain",
		"{}":                      "{}",
		"a{}b":                    "a{}b",
		"{{a}}":                   "{a",
		"a{b}{c}":                 "b",
		"{a":                      "{a",
		"}{a}":                    "a",
		"x{}{y}":                  "x{}{y}",
		"buzz:tunnel:{c:s}:lease": "c:s",
	}
	for key, want := range cases {
		if got := slot.HashTag(key); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", key, got, want)
		}
	}
}
