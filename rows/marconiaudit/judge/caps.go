package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// capsExact judges the queue's caps at their bound (spec 002 §3.6:
// max_entries and max_bytes are the most the queue holds, inclusive): with
// n offers of size s and no writer, the queue must hold exactly
// min(n, max_entries, ⌊max_bytes/s⌋) entries, lose (and count) the rest,
// and — reject_new — keep exactly the first ones. The loss-budget ledger
// cannot see a cap off by one, because every loss is still counted.
func capsExact(hs []AuditCapHistory) check.Result {
	const name = "marconi-audit-caps"
	var bad, observed []string
	for _, h := range hs {
		if h.EntrySize <= 0 || h.MaxBytes%h.EntrySize != 0 {
			return check.Unknownf(name, "%s: max_bytes %d is not a whole number of %d-byte entries: the bound is not exercised exactly", h.Name, h.MaxBytes, h.EntrySize)
		}
		capacity := min(h.MaxEntries, int(h.MaxBytes/h.EntrySize))
		if len(h.Kept) <= capacity {
			return check.Unknownf(name, "%s: %d offers never exceed the capacity %d", h.Name, len(h.Kept), capacity)
		}
		n := len(h.Kept)
		observed = append(observed, fmt.Sprintf("%s (%s): %d offers of %d B into max_entries %d, max_bytes %d (capacity %d): depth %d, bytes %d, dropped %d",
			h.Name, h.Policy, n, h.EntrySize, h.MaxEntries, h.MaxBytes, capacity, h.Depth, h.Bytes, h.Dropped))
		var why []string
		if h.Depth != capacity || h.Bytes != int64(capacity)*h.EntrySize {
			why = append(why, fmt.Sprintf("holds %d entries (%d B), want exactly %d (%d B)", h.Depth, h.Bytes, capacity, int64(capacity)*h.EntrySize))
		}
		if h.Dropped != int64(n-capacity) {
			why = append(why, fmt.Sprintf("counted %d losses, want %d", h.Dropped, n-capacity))
		}
		if h.Policy == AuditPolicyRejectNew {
			for i, k := range h.Kept {
				if k != (i < capacity) {
					why = append(why, fmt.Sprintf("offer %d of %d answered kept=%v, want %v", i+1, n, k, i < capacity))
					break
				}
			}
		}
		if len(why) > 0 {
			bad = append(bad, h.Name+": "+strings.Join(why, "; "))
		}
	}
	if len(bad) > 0 {
		return check.Result{Checker: name, Status: check.Fail, Message: fmt.Sprintf("%d of %d queues off their caps", len(bad), len(hs)),
			Counterexample: strings.Join(bad, "\n"), Observed: observed}
	}
	r := check.Passf(name, "%d queues hold exactly their caps", len(hs))
	r.Observed = observed
	return r
}
