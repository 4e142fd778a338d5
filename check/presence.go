package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// PresencePositional is the silently-wrong checker of the presence-mget row
// (spec 000 §Conformance, Presence MGET: "nil/order preservation when split
// per node"): every successful bulk read answered exactly one value per key,
// at the key's position — the value where the key is present, nil where it
// is absent. Failed reads are the errors column's business; minPositions
// guards against a run whose reads all failed.
func PresencePositional(want map[string]history.PresenceWant, reads []history.PresenceRead, minPositions int) Result {
	const name = "presence-positional"
	judged, wrongReads, failed, lapsed := 0, 0, 0, 0
	var bad []string
	for i, r := range reads {
		if r.ErrKind != "" {
			failed++
			continue
		}
		if len(r.Got) != len(r.Keys) {
			wrongReads++
			bad = append(bad, fmt.Sprintf("read %d: %d answers for %d keys", i, len(r.Got), len(r.Keys)))
			continue
		}
		wrong := 0
		for p, k := range r.Keys {
			w, ok := want[k]
			if !ok || w.Unknown {
				continue
			}
			g := r.Got[p]
			if w.Present && w.ExpiresAt != 0 && r.Return >= w.ExpiresAt && !g.Present {
				lapsed++ // its TTL may have elapsed: nil is right too (the value is judged below)
				continue
			}
			judged++
			if g.Present == w.Present && (!w.Present || g.Value == w.Value) {
				continue
			}
			wrong++
			if wrong <= 2 {
				bad = append(bad, fmt.Sprintf("read %d @%v position %d %s: want %s, got %s", i, r.Call.Round(time.Millisecond), p, k, showWant(w), showGot(g)))
			}
		}
		if wrong > 0 {
			wrongReads++
		}
	}
	if judged < minPositions {
		if lapsed > 0 {
			return unknown(name, "only %d positions judged (%d of %d reads failed; %d positions read a present key after its TTL may have elapsed: the run outlasted the keys), need %d", judged, failed, len(reads), lapsed, minPositions)
		}
		return unknown(name, "only %d positions judged (%d of %d reads failed), need %d", judged, failed, len(reads), minPositions)
	}
	if wrongReads > 0 {
		return fail(name, strings.Join(first(bad, 6), "\n"), "%d of %d successful reads answered wrong values or nils at some position", wrongReads, len(reads)-failed)
	}
	if lapsed > 0 {
		return pass(name, "%d reads, %d positions: every value and nil at its position (%d positions not judged: read after their key's TTL may have elapsed)", len(reads)-failed, judged, lapsed)
	}
	return pass(name, "%d reads, %d positions: every value and nil at its position", len(reads)-failed, judged)
}

// PresenceOutcomes turns reads into loud outcomes for NoErrors/RefusedWith.
func PresenceOutcomes(reads []history.PresenceRead) []history.OpOutcome {
	out := make([]history.OpOutcome, len(reads))
	for i, r := range reads {
		out[i] = history.OpOutcome{Op: fmt.Sprintf("bulk read of %d keys @%v", len(r.Keys), r.Call.Round(time.Millisecond)), ErrKind: r.ErrKind, Err: r.Err}
	}
	return out
}

func showWant(w history.PresenceWant) string {
	if w.Present {
		return fmt.Sprintf("%q", w.Value)
	}
	return "nil"
}

func showGot(g history.PresenceGot) string {
	if g.Present {
		return fmt.Sprintf("%q", g.Value)
	}
	return "nil"
}

// PresenceRetriesCounted judges a retrying reader's instrumentation
// (presence.ReadOptions.Retries and Redirects: "so a caller can show that a
// read really spanned a slot migration"): a read through a retrying mode
// that failed with TRYAGAIN, MOVED or ASK got that answer on its last
// attempt, after at least one retried attempt within its budget (the budget
// is far longer than the first backoff), and every retry is counted as one
// or the other — so the two counters together are at least the number of
// such failed reads. A counter that skips TRYAGAIN (or counts nothing)
// falls short; reads that failed otherwise, or none at all, prove nothing
// and pass.
func PresenceRetriesCounted(reads []history.PresenceRead, retries, redirects int64) Result {
	const name = "presence-retries-counted"
	retried := 0
	for _, r := range reads {
		switch r.ErrKind {
		case "TRYAGAIN", "MOVED", "ASK":
			retried++
		}
	}
	if retried == 0 {
		// No read gave up after retrying: a reader that never counts its
		// retries would pass too, so nothing was judged.
		return unknown(name, "no read failed after retrying (%d TRYAGAIN retries and %d redirects counted): the counting was never put to the test", retries, redirects)
	}
	if retries+redirects < int64(retried) {
		return fail(name, "", "%d reads failed with TRYAGAIN/MOVED/ASK after retrying, but the reader counted %d TRYAGAIN retries and %d redirects", retried, retries, redirects)
	}
	return pass(name, "%d reads failed after retrying; %d TRYAGAIN retries and %d redirects counted", retried, retries, redirects)
}
