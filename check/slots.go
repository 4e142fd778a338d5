package check

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/history"
)

// SlotMathAgrees is Axiom A1 (spec 000 §Axioms): the local slot function
// equals the server's on every sampled key. minSamples guards the checker's
// own assumption: a handful of keys proves nothing.
func SlotMathAgrees(samples []history.SlotSample, minSamples int) Result {
	const name = "slot-math-agrees"
	if len(samples) < minSamples {
		return unknown(name, "only %d keys sampled, need %d", len(samples), minSamples)
	}
	var bad []string
	for _, s := range samples {
		if s.Local != s.Server {
			bad = append(bad, fmt.Sprintf("%q: local %d, server %d", s.Key, s.Local, s.Server))
		}
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 10), "\n"), "%d of %d keys disagree with CLUSTER KEYSLOT", len(bad), len(samples))
	}
	return pass(name, "%d keys agree with CLUSTER KEYSLOT", len(samples))
}

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
