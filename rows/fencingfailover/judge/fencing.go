package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// failoverAnomalies counts, per fault window, what broke T1/T2 (spec 000
// §Safety theorems) in a directory history across failovers. An anomaly is
// charged to the last fault window that began before it was seen; one seen
// before any fault is charged to "no fault".
type failoverAnomalies struct {
	Fault string
	// GenerationsReused: an acknowledged acquire was issued a generation
	// an earlier acknowledged acquire of the session already had (T2).
	GenerationsReused int
	// TwoOwners: an acknowledged acquire took a session another owner held
	// by an acknowledged acquire not released since (T1).
	TwoOwners int
	// LeasesLost: an owner's renew at its acknowledged generation was
	// refused although it had not released it: the acquire was lost.
	LeasesLost int
	// StaleAccepted: validate said "valid" for an (owner, generation)
	// whose generation a later acknowledged acquire issued again, or that
	// was not the latest acknowledged acquire at the time (a stale frame
	// passed the fence).
	StaleAccepted int
	// AcquiresLost: an acknowledged acquire whose generation a later read
	// of the counter (known_generation) did not reach — the write the
	// primary acknowledged is gone (charged to the fault the acquire
	// returned in).
	AcquiresLost int
}

func (a failoverAnomalies) total() int {
	return a.GenerationsReused + a.TwoOwners + a.LeasesLost + a.StaleAccepted + a.AcquiresLost
}

func (a failoverAnomalies) String() string {
	return fmt.Sprintf("%s: %d acknowledged acquires lost, %d generations issued twice, %d acquisitions of a held session, %d acknowledged leases lost, %d stale frames accepted",
		a.Fault, a.AcquiresLost, a.GenerationsReused, a.TwoOwners, a.LeasesLost, a.StaleAccepted)
}

// countFailoverAnomalies returns the anomalies of ops charged to the fault
// windows they fell in, one entry per window (in start order) plus "no
// fault" first when anything broke before the first window.
func countFailoverAnomalies(ops []history.FencingOp, windows []history.FaultWindow) []failoverAnomalies {
	ws := append([]history.FaultWindow(nil), windows...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	out := make([]failoverAnomalies, len(ws)+1)
	out[0].Fault = "no fault"
	for i, w := range ws {
		out[i+1].Fault = w.Fault + " " + w.Target
	}
	charge := func(at time.Duration) *failoverAnomalies {
		i := sort.Search(len(ws), func(i int) bool { return ws[i].Start > at })
		return &out[i] // i windows began at or before at
	}

	// tenures are the acknowledged acquires of each session not known to
	// have ended (an acknowledged or unknown release by the same owner and
	// generation ends one; a later acquire by another owner does not: that
	// is the anomaly).
	type tenure struct {
		op    history.FencingOp
		ended bool
		lost  bool // its loss was counted (it still holds, for the model)
	}
	tenures := map[string][]*tenure{}
	find := func(op history.FencingOp) *tenure {
		for _, t := range tenures[op.Session] {
			if !t.ended && t.op.Owner == op.Owner && t.op.Gen == op.Gen {
				return t
			}
		}
		return nil
	}
	issued := map[string]map[int64]history.FencingOp{} // session → gen → acquire
	latest := map[string]history.FencingOp{}           // session → latest acknowledged acquire
	events := check.ByEffect(ops)
	for _, op := range events {
		if op.Unknown {
			// An unknown release may have taken effect: the tenure can no
			// longer be proved to last (nothing is charged for it).
			if t := find(op); op.Kind == history.OpRelease && t != nil {
				t.ended = true
			}
			continue
		}
		switch op.Kind {
		case history.OpAcquire:
			if !op.OK {
				continue
			}
			if issued[op.Session] == nil {
				issued[op.Session] = map[int64]history.FencingOp{}
			}
			if _, dup := issued[op.Session][op.Gen]; dup {
				charge(op.Return).GenerationsReused++
			}
			issued[op.Session][op.Gen] = op
			for _, t := range tenures[op.Session] {
				if !t.ended && t.op.Owner != op.Owner {
					charge(op.Return).TwoOwners++
					break
				}
			}
			tenures[op.Session] = append(tenures[op.Session], &tenure{op: op})
			latest[op.Session] = op
		case history.OpRelease:
			if t := find(op); op.OK && t != nil {
				t.ended = true
			}
		case history.OpRenew:
			if t := find(op); !op.OK && t != nil && !t.lost && op.Call > t.op.Return {
				charge(op.Return).LeasesLost++
				t.lost = true // counted once; a later owner is still a second one
			}
		case history.OpValidate:
			if op.Verdict != 1 {
				continue
			}
			if l, ok := latest[op.Session]; ok && (op.Gen < l.Gen && op.Call > l.Return) {
				charge(op.Return).StaleAccepted++
			}
		}
	}
	// An acknowledged acquire above a later read of the counter was lost.
	acks := map[string][]history.FencingOp{}
	for _, a := range events {
		if a.Kind == history.OpAcquire && a.OK && !a.Unknown {
			acks[a.Session] = append(acks[a.Session], a)
		}
	}
	lost := map[history.FencingOp]bool{}
	for _, read := range events {
		if read.Unknown || read.Kind != history.OpKnown {
			continue
		}
		for _, a := range acks[read.Session] {
			if a.Gen > read.Gen && a.Return < read.Call && !lost[a] {
				charge(a.Return).AcquiresLost++
				lost[a] = true
			}
		}
	}
	// A "valid" whose generation was issued again later: the frame it let
	// through had an authority that was lost.
	for _, op := range events {
		if op.Unknown || op.Kind != history.OpValidate || op.Verdict != 1 {
			continue
		}
		for _, a := range acks[op.Session] {
			if a.Gen == op.Gen && a.Owner != op.Owner && a.Call > op.Return {
				charge(a.Return).StaleAccepted++
				break
			}
		}
	}
	if out[0].total() == 0 {
		out = out[1:]
	}
	return out
}

// fencingAcrossFailover judges a C-phase directory history recorded across
// primary failovers (spec 000 §Safety theorems T1, T2 on the production
// topology, §Problem Statement: one primary + replica, auto-failover): the
// whole history, fault windows included, is linearizable against the
// directory's specification, never two owners, generations never reused,
// guards hold; and it counts each anomaly with the fault it fell in.
//
// Premises, checked: at least one fault window, every window healthy after
// its fault; calls answered before the first fault and at least
// p.MinCalledInside calls made inside each window; the history shorter than the
// lease TTL (leases do not expire in the model). A broken premise is
// Unknown.
func fencingAcrossFailover(ops []history.FencingOp, windows []history.FaultWindow, p FailoverPremise) check.Result {
	const name = "fencing-across-failover"
	if len(windows) == 0 {
		return check.Unknownf(name, "premise: no fault window in the history (no failover was injected)")
	}
	if len(ops) == 0 {
		return check.Unknownf(name, "premise: empty history")
	}
	var first, last time.Duration = -1, 0
	for _, op := range ops {
		if first < 0 || op.Call < first {
			first = op.Call
		}
		last = max(last, op.Return)
	}
	if p.LeaseTTL > 0 && last-first >= p.LeaseTTL {
		return check.Unknownf(name, "premise: the history spans %v, not shorter than the lease TTL %v (expiry is not modelled)", (last - first).Round(time.Millisecond), p.LeaseTTL)
	}
	if broken := faultWindowsPremise(ops, windows, p.MinCalledInside); broken != "" {
		return check.Unknownf(name, "%s", broken)
	}
	var observed []string
	unknowns := 0
	for _, op := range ops {
		if op.Unknown {
			unknowns++
		}
	}
	anomalies := countFailoverAnomalies(ops, windows)
	total := 0
	for _, a := range anomalies {
		total += a.total()
		observed = append(observed, a.String())
	}
	observed = append(observed, fmt.Sprintf("%d operations, %d with unknown outcome, across %d faults", len(ops), unknowns, len(windows)))
	r := check.All(name,
		check.FencingLinearizable(ops, 30*time.Second),
		check.SingleAuthority(ops),
		check.GenerationsIncrease(ops, false),
		check.GuardsHold(ops),
	)
	r.Checker = name
	if r.Status == check.Pass && total > 0 {
		// Every anomaly counted is illegal in the model too; a disagreement
		// is a bug in the count or the model, not a verdict.
		r = check.Unknownf(name, "%d anomalies counted though the history checked linearizable: the count and the model disagree", total)
		r.Counterexample = strings.Join(observed, "\n")
	}
	r.Observed = append(r.Observed, observed...)
	return r
}

// directoryResumes is the fencing-failover errors column: from each fault
// window's start until the next window's (or the history's end), the
// directory never goes longer than budget without answering a call (any
// outcome but unknown: a lease granted or refused, a renew, a verdict) — a
// directory that stays unanswered longer loses live leases (spec 000 §The
// Fencing Migration: renew every TTL/3; the halt budget, runenv). It
// reports each window's longest unanswered stretch. An answer counts at
// its return; one the next fault produced is not this fault's.
//
// Premises, checked: at least one fault window, healthy after its fault;
// after each, a call answered before the next fault or the end, or a
// stretch already longer than budget (a directory not yet answering when
// the observation ended shorter than budget is undecided).
func directoryResumes(ops []history.FencingOp, windows []history.FaultWindow, budget time.Duration) check.Result {
	const name = "directory-resumes"
	if len(windows) == 0 {
		return check.Unknownf(name, "premise: no fault window in the history (no failover was injected)")
	}
	ws := append([]history.FaultWindow(nil), windows...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	var last time.Duration
	var answers []time.Duration
	for _, op := range ops {
		last = max(last, op.Return)
		if !op.Unknown {
			answers = append(answers, op.Return)
		}
	}
	slices.Sort(answers)
	var observed, bad []string
	for i, w := range ws {
		if w.Unhealthy != "" {
			return check.Unknownf(name, "premise: fault %s %s left the topology unhealthy: %s", w.Fault, w.Target, w.Unhealthy)
		}
		until := last
		if i+1 < len(ws) {
			until = ws[i+1].Start
		}
		// The longest stretch in [w.Start, until) with no answer.
		longest, from, answered := time.Duration(0), w.Start, false
		for _, a := range answers {
			if a < w.Start {
				continue
			}
			if a >= until {
				break
			}
			longest = max(longest, a-from)
			from, answered = a, true
		}
		longest = max(longest, until-from) // the open stretch up to the next fault or the end
		if !answered && longest <= budget {
			return check.Unknownf(name, "premise: no call answered in the %v between fault %s %s and the next fault or the end, under the %v budget", (until - w.Start).Round(time.Millisecond), w.Fault, w.Target, budget)
		}
		observed = append(observed, fmt.Sprintf("%s %s: longest unanswered %v", w.Fault, w.Target, longest.Round(time.Millisecond)))
		if longest > budget {
			bad = append(bad, fmt.Sprintf("%s %s: unanswered for %v, budget %v", w.Fault, w.Target, longest.Round(time.Millisecond), budget))
		}
	}
	var r check.Result
	if len(bad) > 0 {
		r = check.Failf(name, strings.Join(bad, "\n"), "%d of %d faults halted the directory longer than %v", len(bad), len(ws), budget)
	} else {
		r = check.Passf(name, "the directory answered within %v throughout each of %d faults", budget, len(ws))
	}
	r.Observed = observed
	return r
}

// faultWindowsPremise is the premise the checkers of histories across
// faults share: at least one window, every window healthy after its fault
// and met by at least minInside calls (called between its start and end,
// whatever their outcome), and a call answered before the first fault (the
// run started healthy). It returns the broken premise, "" when all hold.
func faultWindowsPremise(ops []history.FencingOp, windows []history.FaultWindow, minInside int) string {
	if len(windows) == 0 {
		return "premise: no fault window in the history (no failover was injected)"
	}
	first := windows[0].Start
	for _, w := range windows {
		first = min(first, w.Start)
		if w.Unhealthy != "" {
			return fmt.Sprintf("premise: fault %s %s left the topology unhealthy: %s", w.Fault, w.Target, w.Unhealthy)
		}
		n := 0
		for _, op := range ops {
			if op.Call >= w.Start && op.Call <= w.End {
				n++
			}
		}
		if n < minInside {
			return fmt.Sprintf("premise: %d calls made during fault %s %s, want at least %d (the fault was not exercised)", n, w.Fault, w.Target, minInside)
		}
	}
	for _, op := range ops {
		if !op.Unknown && op.Return < first {
			return ""
		}
	}
	return "premise: no call answered before the first fault (the run did not start healthy)"
}
