package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// leasesKeptAcrossFailover asks whether a failover costs live leases (spec
// 000 §The Fencing Migration: renew every 10 s against a 30 s TTL; the
// store's failure detection, §Problem Statement): every lease certainly
// live when a fault window began (an acknowledged acquire or renew whose
// certainly-live window, MigrationSingleAuthority's, covers the start) and
// reached by the outage (a renew of it inside the window unanswered or
// refused; leases on shards that kept answering are not counted) must be
// renewed successfully after the window ended — held through the outage,
// not lost to expiry while the directory could not answer. A lease its
// owner released is not counted. It reports each fault's kept and lost
// leases.
//
// Premises, checked: at least one fault window, healthy; a lease the
// outage reached at each window; every such lease decided — renewed after the window
// or past its certainly-live end when the history ends. A broken premise is
// Unknown.
func leasesKeptAcrossFailover(ops []history.MigrationOp, windows []history.FaultWindow, ttl, slack time.Duration) check.Result {
	const name = "leases-kept-across-failover"
	if len(windows) == 0 {
		return check.Unknownf(name, "premise: no fault window in the history (no failover was injected)")
	}
	var last time.Duration
	for _, op := range ops {
		last = max(last, op.Return)
	}
	ws := append([]history.FaultWindow(nil), windows...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	_, byKey := check.MigrationLeases(ops, ttl, slack)
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var observed, lost []string
	lostTotal := 0
	for _, w := range ws {
		if w.Unhealthy != "" {
			return check.Unknownf(name, "premise: fault %s %s left the topology unhealthy: %s", w.Fault, w.Target, w.Unhealthy)
		}
		live, kept, undecided := 0, 0, 0
		for _, k := range keys {
			l := byKey[k]
			// Only a lease the outage reached counts: certainly live at the
			// start, its owner's call inside the window unanswered or refused
			// (a lease on a shard that kept answering proves nothing), and
			// not released since (a release ends it by choice).
			if !l.LiveAt(w.Start) || !exposed(ops, k, w) || l.Released() {
				continue
			}
			live++
			switch {
			case renewedAfter(ops, k, w.End):
				kept++
			case last < l.LiveUntil():
				undecided++ // not renewed yet, not expired yet when the history ends
			default:
				if len(lost) < 3 {
					lost = append(lost, fmt.Sprintf("%s's lease at gen %d (%s), live at the start of %s %s, never renewed after it", l.Owner, l.Gen, k, w.Fault, w.Target))
				}
			}
		}
		if live == 0 {
			return check.Unknownf(name, "premise: no lease live when fault %s %s began met the outage (no call of its owner inside the window went unanswered: nothing was at risk)", w.Fault, w.Target)
		}
		if undecided > 0 {
			return check.Unknownf(name, "premise: the history ends before %d leases live at fault %s %s were either renewed after it or expired (their fate is undecided)", undecided, w.Fault, w.Target)
		}
		lostTotal += live - kept
		observed = append(observed, fmt.Sprintf("%s %s (%v): %d of %d live leases kept, %d lost", w.Fault, w.Target, (w.End-w.Start).Round(time.Millisecond), kept, live, live-kept))
	}
	var r check.Result
	if lostTotal > 0 {
		r = check.Failf(name, strings.Join(lost, "\n"), "%d leases live when a failover began were lost to it (the outage outlasted what a renewed lease has left, TTL − renew)", lostTotal)
	} else {
		r = check.Passf(name, "every lease live at each of %d failovers was renewed after it", len(ws))
	}
	r.Observed = observed
	return r
}

// exposed says whether lease key's owner made a call for it inside w that
// went unanswered or was refused: the outage reached it.
func exposed(ops []history.MigrationOp, key string, w history.FaultWindow) bool {
	for _, op := range ops {
		if op.Call >= w.Start && op.Call <= w.End && (op.Unknown || !op.OK) && op.Kind == history.OpRenew && check.LeaseKey(op) == key {
			return true
		}
	}
	return false
}

// renewedAfter says whether lease key had a successful renew called after t.
func renewedAfter(ops []history.MigrationOp, key string, t time.Duration) bool {
	for _, op := range ops {
		if op.Kind == history.OpRenew && op.OK && !op.Unknown && op.Call > t && check.LeaseKey(op) == key {
			return true
		}
	}
	return false
}
