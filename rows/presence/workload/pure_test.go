package workload

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
)

func TestPubkeyInSlot(t *testing.T) {
	for _, s := range []int{0, 777, 16383} {
		pk := PubkeyInSlot("comm", s, "pin-")
		if !strings.HasPrefix(pk, "pin-") {
			t.Errorf("pubkey %q lost its base", pk)
		}
		if got := slot.Of(presence.Key("comm", pk)); got != s {
			t.Errorf("presence key of %q hashes to %d, asked %d", pk, got, s)
		}
	}
}

// Shuffled keeps every key and adds exactly dupes repeats; Sample holds
// every must key plus n drawn ones.
func TestShuffledAndSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "d", "e"}
	out := Shuffled(rng, keys, 3)
	if len(out) != 8 {
		t.Fatalf("Shuffled gave %d keys, want 8", len(out))
	}
	for _, k := range keys {
		if !slices.Contains(out, k) {
			t.Fatalf("Shuffled dropped %q: %v", k, out)
		}
	}
	s := Sample(rng, keys, 4, []string{"x", "y"})
	if len(s) != 6 || !slices.Contains(s, "x") || !slices.Contains(s, "y") {
		t.Fatalf("Sample = %v", s)
	}
	for _, k := range s {
		if k != "x" && k != "y" && !slices.Contains(keys, k) {
			t.Fatalf("Sample drew %q from nowhere", k)
		}
	}
}
