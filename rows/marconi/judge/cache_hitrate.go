package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// CacheRead is one send to a live, attached recipient in a phase where no
// session changes: the session the harness registered under the recipient
// (Want), the session the send resolved (Got), and the SessionStore
// commands the mesh issued on that send's hot path, counted at its Redis
// client seam (StoreReads).
type CacheRead struct {
	Recipient  string
	Want, Got  string
	StoreReads int64
}

// marconiCacheHitFloor is spec 002 §8 Stage 2's exit criteria, "cache
// hit-rate ≥ 99%; SessionStore reads converge to startup-rehydrate +
// write-through misses only", judged from outside the instrument: a send
// is a hit when it resolved its recipient without a SessionStore read on
// its hot path. With no session changing during the phase, every read is a
// miss the cache should not have had, so the rate must reach floor (the
// spec's 0.99). Premises: the seam counted the phase's setup
// (seamCounted: the registrations' store writes went through it, so a zero
// is a count, not a blind seam), at least minReads sends, and every send
// resolved the session the harness expected — a wrong delivery is a
// correctness failure other checks own, and this one judges the rate of a
// correct cache only; else unknown.
func marconiCacheHitFloor(reads []CacheRead, floor float64, minReads int, seamCounted bool) check.Result {
	const name = "marconi-cache-hit-floor"
	if !seamCounted {
		return check.Unknownf(name, "the SessionStore seam counted nothing during the setup: a zero read count would not be a count")
	}
	if len(reads) < minReads {
		return check.Unknownf(name, "%d sends to live recipients, fewer than the %d the rate needs", len(reads), minReads)
	}
	var wrong, missed []string
	hits, storeReads := 0, int64(0)
	missBy := map[string]int{}
	for _, r := range reads {
		if r.Got != r.Want {
			wrong = append(wrong, fmt.Sprintf("%s resolved %q, want %q", r.Recipient, r.Got, r.Want))
			continue
		}
		storeReads += r.StoreReads
		if r.StoreReads == 0 {
			hits++
			continue
		}
		missBy[r.Recipient]++
		missed = append(missed, fmt.Sprintf("%s (%d store reads)", r.Recipient, r.StoreReads))
	}
	if len(wrong) > 0 {
		return check.Unknownf(name, "%d of %d sends resolved another session than the harness registered (a correctness failure, not a hit-rate one): %s", len(wrong), len(reads), sample(wrong, 3))
	}
	rate := float64(hits) / float64(len(reads))
	observed := []string{fmt.Sprintf("%d sends, %d hits, %d resolved through the SessionStore (%d store commands on the hot path); hit rate %.2f%% (floor %.0f%%); misses by recipient %v",
		len(reads), hits, len(reads)-hits, storeReads, 100*rate, 100*floor, missBy)}
	var r check.Result
	if rate < floor {
		r = check.Failf(name, observed[0], "hit rate %.2f%% under the Stage 2 floor %.0f%%: %d of %d correct sends read the SessionStore on the hot path (%s)",
			100*rate, 100*floor, len(reads)-hits, len(reads), sample(missed, 3))
	} else {
		r = check.Passf(name, "hit rate %.2f%% ≥ %.0f%% over %d correct sends (%d store commands on the hot path)", 100*rate, 100*floor, len(reads), storeReads)
	}
	r.Observed = observed
	return r
}

// sample lists the first n of ids and how many there were in all.
func sample(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(", … (%d in all)", len(ids))
}
