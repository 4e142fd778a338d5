package judge

import (
	"strings"
	"testing"

	"github.com/slotgate/slotgate/check"
)

func goodHandover(from, to string, old bool, i int) Handover {
	return Handover{Session: "s" + string(rune('a'+i)), From: from, To: to, Acquired: true, Gen: 3, HeldOld: old, HeldNew: !old, Released: true, Reacquired: true, NextGen: 4}
}

func TestReleaseHandovers(t *testing.T) {
	need := []string{"A→B", "B→B"}
	var hs []Handover
	for i := range 3 {
		hs = append(hs, goodHandover("A", "B", true, i), goodHandover("B", "B", false, i))
	}
	if r := judged(t, ReleaseHandovers, ReleaseHandoversInput{Handovers: hs, Need: need, MinPer: 3}); r.Status != check.Pass {
		t.Fatalf("correct handovers: %s %s", r.Status, r.Message)
	}

	// The B release that never falls back to the old key: refused, the
	// lease lingers there, the re-acquire is refused by its own holder.
	lingering := append([]Handover(nil), hs...)
	lingering[0].Released, lingering[0].LeftOld, lingering[0].Reacquired, lingering[0].NextGen, lingering[0].Holder = false, true, false, 0, "p1"
	if r := releaseHandovers(lingering, need, 3); r.Status != check.Fail || !strings.Contains(r.Message, "still on the old key") {
		t.Fatalf("a lingering old lease: %s %s", r.Status, r.Message)
	}
	reused := append([]Handover(nil), hs...)
	reused[1].NextGen = 3
	if r := releaseHandovers(reused, need, 3); r.Status != check.Fail {
		t.Fatalf("a re-acquire at the released generation: %s %s", r.Status, r.Message)
	}
	loud := append([]Handover(nil), hs...)
	loud[2].Err = "release: connection reset"
	if r := releaseHandovers(loud, need, 3); r.Status != check.Fail {
		t.Fatalf("a failed call: %s %s", r.Status, r.Message)
	}

	// Premises: a holder whose acquire was refused, or whose lease sat on
	// both keys (or neither), had nothing to release — not judged, and a
	// pair left short is unknown, never a pass.
	broken := append([]Handover(nil), hs...)
	broken[0].Acquired = false
	broken[2].HeldNew = true
	broken[4].HeldOld, broken[4].HeldNew = false, false
	broken[4].Released = false // would fail if it were judged
	if r := releaseHandovers(broken, need, 3); r.Status != check.Unknown || !strings.Contains(r.Message, "A→B 0 of 3") {
		t.Fatalf("broken premises: %s %s", r.Status, r.Message)
	}
	if r := releaseHandovers(nil, need, 1); r.Status != check.Unknown {
		t.Fatalf("no handovers: %s %s", r.Status, r.Message)
	}
}
