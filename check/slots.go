package check

import (
	"fmt"
	"strings"
)

// PairSlots is a key pair that must share a slot, with the server's slots.
type PairSlots struct {
	A, B         string
	SlotA, SlotB int
}

// PairsShareSlot is the pre-G3 checklist (spec 000 §Deployment Gate rule 5):
// CLUSTER KEYSLOT equality on real tagged pairs, the server's answer.
func PairsShareSlot(pairs []PairSlots) Result {
	const name = "pairs-share-slot"
	if len(pairs) == 0 {
		return unknown(name, "no pairs checked")
	}
	var bad []string
	for _, p := range pairs {
		if p.SlotA != p.SlotB {
			bad = append(bad, fmt.Sprintf("%q → %d, %q → %d", p.A, p.SlotA, p.B, p.SlotB))
		}
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 5), "\n"), "%d of %d pairs span two slots", len(bad), len(pairs))
	}
	return pass(name, "%d pairs share a slot (CLUSTER KEYSLOT)", len(pairs))
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
	}
	return s
}
