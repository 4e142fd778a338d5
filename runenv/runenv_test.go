package runenv

import (
	"errors"
	"testing"
	"time"
)

func TestParseHaltBudget(t *testing.T) {
	d := DefaultHaltBudget
	for _, tc := range []struct {
		in   string
		want HaltBudget
	}{
		{"", HaltBudget{d, d, d}},
		{"1ms", HaltBudget{time.Millisecond, time.Millisecond, time.Millisecond}},
		{"pool=5s, replica-reads=2s", HaltBudget{5 * time.Second, d, 2 * time.Second}},
		{"subscription=30s", HaltBudget{d, 30 * time.Second, d}},
	} {
		got, err := ParseHaltBudget(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseHaltBudget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"ten", "0s", "-1s", "pool=", "reads=1s", "pool=1s,bogus=2s"} {
		if _, err := ParseHaltBudget(in); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseHaltBudget(%q): err %v, want ErrBadConfig", in, err)
		}
	}
}
