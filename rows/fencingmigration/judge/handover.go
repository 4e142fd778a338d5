package judge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// Handover is one session's release by a pod whose script version changed
// while it held the lease, and the re-acquire after it (spec 000 §Per-phase
// operation table, release: O and A release the old key, C the new one, B
// tries the new key and falls back to the old — a B pod still holds the
// leases it took while it ran A, on the old key).
type Handover struct {
	Session string
	// From and To are the holder's phase when it acquired and when it
	// released ("A", "B"); the re-acquirer runs To.
	From, To string
	// Acquired: the holder's acquire was granted at Gen.
	Acquired bool
	Gen      int64
	// HeldOld and HeldNew: where the lease sat just before the release,
	// read back from the node.
	HeldOld, HeldNew bool
	// Released is the release's reply to its owner.
	Released bool
	// LeftOld and LeftNew: lease keys still present right after the release.
	LeftOld, LeftNew bool
	// Reacquired: another pod's acquire right after the release was granted
	// at NextGen; otherwise refused, the lease held by Holder.
	Reacquired bool
	NextGen    int64
	Holder     string
	// Err is the first call that failed loudly ("" when none).
	Err string
}

func (h Handover) pair() string { return h.From + "→" + h.To }

// premise: the holder really held a live lease, on exactly one key, before
// it released; otherwise the record says nothing about the release.
func (h Handover) premise() bool { return h.Acquired && h.Gen > 0 && h.HeldOld != h.HeldNew }

// releaseHandovers judges the release-handover probes (the errors column: a
// release its owner is told failed, or an acquire refused on a session its
// holder released, is loud). Each released lease must be acknowledged to its
// owner, gone from both keyspaces (a lease left on the old key drains a TTL
// late, spec 000 §The protocol, C-gate), and re-acquirable at once by
// another pod at a higher generation. Premises: every pair of need ("A→B")
// has at least minPer records whose holder held a live lease on exactly one key
// before releasing; a record without one is not judged.
func releaseHandovers(hs []Handover, need []string, minPer int) check.Result {
	const name = "release-handovers"
	judged := map[string]int{}
	onOld := map[string]int{}
	var bad []string
	for _, h := range hs {
		if h.Err != "" {
			bad = append(bad, fmt.Sprintf("%s %s: %s", h.pair(), h.Session, h.Err))
			continue
		}
		if !h.premise() {
			continue
		}
		judged[h.pair()]++
		if h.HeldOld {
			onOld[h.pair()]++
		}
		var why []string
		if !h.Released {
			why = append(why, "the owner's release was refused")
		}
		if h.LeftOld {
			why = append(why, "the lease is still on the old key")
		}
		if h.LeftNew {
			why = append(why, "the lease is still on the new key")
		}
		switch {
		case !h.Reacquired:
			why = append(why, fmt.Sprintf("the re-acquire was refused, held by %q", h.Holder))
		case h.NextGen <= h.Gen:
			why = append(why, fmt.Sprintf("the re-acquire got generation %d, not above the released %d", h.NextGen, h.Gen))
		}
		if len(why) > 0 {
			where := "new"
			if h.HeldOld {
				where = "old"
			}
			bad = append(bad, fmt.Sprintf("%s %s (gen %d on the %s key): %s", h.pair(), h.Session, h.Gen, where, strings.Join(why, "; ")))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad[:min(len(bad), 10)], "\n"), "%d of %d handovers failed: %s", len(bad), len(hs), bad[0])
	}
	var short []string
	for _, p := range need {
		if judged[p] < minPer {
			short = append(short, fmt.Sprintf("%s %d of %d", p, judged[p], minPer))
		}
	}
	if len(short) > 0 {
		return check.Unknownf(name, "too few handovers of a live lease to judge: %s", strings.Join(short, ", "))
	}
	pairs := make([]string, 0, len(judged))
	for p, n := range judged {
		pairs = append(pairs, fmt.Sprintf("%s %d (%d on the old key)", p, n, onOld[p]))
	}
	sort.Strings(pairs)
	return check.Passf(name, "every released lease was acknowledged, left both keyspaces and was re-acquired at a higher generation: %s", strings.Join(pairs, ", "))
}
