package script

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestSource: an embedded script is replaced only when its mutant is
// active and the text is the one that mutant mutates, and every script
// that passes while a mutant is active is logged by the sha1 of what was
// returned.
func TestSource(t *testing.T) {
	defer func(f func() string) { activeID = f }(activeID)
	log := filepath.Join(t.TempDir(), "served")
	t.Setenv(EnvServed, log)
	ms := map[string]Script{"m1": {Original: "return 1", Mutated: "return 2"}}
	var want string
	for _, tc := range []struct{ active, src, want string }{
		{"", "return 1", "return 1"},
		{"other", "return 1", "return 1"},
		{"m1", "return 3", "return 3"}, // another script of the package
		{"m1", "return 1", "return 2"},
	} {
		activeID = func() string { return tc.active }
		if got := Source(tc.src, ms); got != tc.want {
			t.Errorf("active %q, src %q: got %q, want %q", tc.active, tc.src, got, tc.want)
		}
		if tc.active != "" {
			sum := sha1.Sum([]byte(tc.want))
			want += tc.active + " " + hex.EncodeToString(sum[:]) + "\n"
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("served log %q, want %q (the sha1 of each returned script)", b, want)
	}
}
