package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// positional is the silently-wrong checker of the presence-mget row
// (spec 000 §Conformance, Presence MGET: "nil/order preservation when split
// per node"): every successful bulk read answered exactly one value per key,
// at the key's position — the value where the key is present, nil where it
// is absent. Failed reads are the errors column's business; minPositions
// guards against a run whose reads all failed.
func positional(want map[string]Want, reads []Read, minPositions int) check.Result {
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
			return check.Unknownf(name, "only %d positions judged (%d of %d reads failed; %d positions read a present key after its TTL may have elapsed: the run outlasted the keys), need %d", judged, failed, len(reads), lapsed, minPositions)
		}
		return check.Unknownf(name, "only %d positions judged (%d of %d reads failed), need %d", judged, failed, len(reads), minPositions)
	}
	if wrongReads > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 6), "\n"), "%d of %d successful reads answered wrong values or nils at some position", wrongReads, len(reads)-failed)
	}
	if lapsed > 0 {
		return check.Passf(name, "%d reads, %d positions: every value and nil at its position (%d positions not judged: read after their key's TTL may have elapsed)", len(reads)-failed, judged, lapsed)
	}
	return check.Passf(name, "%d reads, %d positions: every value and nil at its position", len(reads)-failed, judged)
}

// Outcomes turns reads into loud outcomes for check.NoErrors and
// check.RefusedWith: the errors column judges what Positional leaves out.
func Outcomes(reads []Read) []history.OpOutcome {
	out := make([]history.OpOutcome, len(reads))
	for i, r := range reads {
		out[i] = history.OpOutcome{Op: fmt.Sprintf("bulk read of %d keys @%v", len(r.Keys), r.Call.Round(time.Millisecond)), ErrKind: r.ErrKind, Err: r.Err}
	}
	return out
}

func showWant(w Want) string {
	if w.Present {
		return fmt.Sprintf("%q", w.Value)
	}
	return "nil"
}

func showGot(g Got) string {
	if g.Present {
		return fmt.Sprintf("%q", g.Value)
	}
	return "nil"
}

// retriesCounted judges a retrying reader's instrumentation
// (presence.ReadOptions.Retries and Redirects: "so a caller can show that a
// read really spanned a slot migration"): a read through a retrying mode
// that failed with TRYAGAIN, MOVED or ASK got that answer on its last
// attempt, after at least one retried attempt within its budget (the budget
// is far longer than the first backoff), and every retry is counted as one
// or the other — so the two counters together are at least the number of
// such failed reads. A counter that skips TRYAGAIN (or counts nothing)
// falls short; reads that failed otherwise, or none at all, prove nothing
// and are unknown.
func retriesCounted(reads []Read, retries, redirects int64) check.Result {
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
		return check.Unknownf(name, "no read failed after retrying (%d TRYAGAIN retries and %d redirects counted): the counting was never put to the test", retries, redirects)
	}
	if retries+redirects < int64(retried) {
		return check.Failf(name, "", "%d reads failed with TRYAGAIN/MOVED/ASK after retrying, but the reader counted %d TRYAGAIN retries and %d redirects", retried, retries, redirects)
	}
	return check.Passf(name, "%d reads failed after retrying; %d TRYAGAIN retries and %d redirects counted", retried, retries, redirects)
}

// PositionalInput is a run's reads and the pattern they read
// (positional): Want from acknowledged writes, and the fewest positions
// that make a verdict.
type PositionalInput struct {
	Want         map[string]Want
	Reads        []Read
	MinPositions int
}

// RetriesCountedInput is a retrying reader's reads and the TRYAGAIN
// retries and redirects its counters showed (retriesCounted).
type RetriesCountedInput struct {
	Reads     []Read
	Retries   int64
	Redirects int64
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	Positional = check.Define("presence-mget/positional", func(in PositionalInput) check.Result {
		return positional(in.Want, in.Reads, in.MinPositions)
	}, "PresencePositional")
	RetriesCounted = check.Define("presence-mget/retries-counted", func(in RetriesCountedInput) check.Result {
		return retriesCounted(in.Reads, in.Retries, in.Redirects)
	}, "PresenceRetriesCounted")
)
