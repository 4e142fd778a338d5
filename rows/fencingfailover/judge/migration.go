package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// migrationAnomalies counts, for one fault window, what broke T1/T2 in a
// staged-deploy history (spec 000 §Safety theorems): each anomaly is
// charged to the last fault window that began at or before it was seen.
type migrationAnomalies struct {
	Fault string
	// Step is the deploy step the fault was injected inside.
	Step string
	// GenerationsReused: a generation issued to two acknowledged acquires
	// of one session.
	GenerationsReused int
	// GenerationsBackwards: an acquire got a lower generation than one
	// that returned before it began.
	GenerationsBackwards int
	// TwoOwners: an acknowledged acquire ran while another lease of the
	// session was certainly live.
	TwoOwners int
	// LeasesLost: a renew refused while its own lease was certainly live
	// (the acknowledged lease write is gone).
	LeasesLost int
	// ObservedForks: atomic observations of a session leased on both
	// keyspaces.
	ObservedForks int
	// CountersBehind: an acknowledged acquire's generation above what the
	// read-back after the deploy found in the session's counter — the
	// counter the next acquire issues from lost it (a lost acquire or a
	// lost backfill). Charged to the first fault that could have lost it:
	// the one in progress at, else the next to begin after, the last
	// acknowledged write that carried it (the acquire or a later merge).
	CountersBehind int
}

func (a migrationAnomalies) total() int {
	return a.GenerationsReused + a.GenerationsBackwards + a.TwoOwners + a.LeasesLost + a.ObservedForks + a.CountersBehind
}

func (a migrationAnomalies) String() string {
	where := a.Fault
	if a.Step != "" {
		where += " inside " + a.Step
	}
	return fmt.Sprintf("%s: %d generations issued twice, %d went backwards, %d acquisitions of a live lease, %d acknowledged leases lost, %d counters behind an acknowledged generation, %d observed forks",
		where, a.GenerationsReused, a.GenerationsBackwards, a.TwoOwners, a.LeasesLost, a.CountersBehind, a.ObservedForks)
}

// countMigrationAnomalies returns the anomalies of a staged-deploy history
// charged to the fault windows they fell in, one entry per window (in
// start order, labelled with aims[i] when given) plus "no fault" first when
// anything broke outside every window's reach.
func countMigrationAnomalies(ops []history.MigrationOp, samples []history.KeyspaceSample, windows []history.FaultWindow, aims []Aim, ttl, slack time.Duration) []migrationAnomalies {
	ws := append([]history.FaultWindow(nil), windows...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	out := make([]migrationAnomalies, len(ws)+1)
	out[0].Fault = "no fault"
	for i, w := range ws {
		out[i+1].Fault = w.Fault + " " + w.Target
		if i < len(aims) {
			out[i+1].Step = aims[i].Step
		}
	}
	charge := func(at time.Duration) *migrationAnomalies {
		return &out[sort.Search(len(ws), func(i int) bool { return ws[i].Start > at })]
	}
	reused, backwards, _, _ := check.GenerationViolations(ops)
	for _, v := range reused {
		charge(v.At).GenerationsReused++
	}
	for _, v := range backwards {
		charge(v.At).GenerationsBackwards++
	}
	owners, _ := check.TwoAuthorities(ops, ttl, slack)
	for _, v := range owners {
		charge(v.At).TwoOwners++
	}
	for _, v := range leasesLost(ops, ttl, slack) {
		charge(v.At).LeasesLost++
	}
	for _, s := range samples {
		if len(s.Forks) > 0 {
			charge(s.At).ObservedForks++
		}
	}
	for _, v := range countersBehind(ops) {
		// A write is lost by a fault in progress when it was acknowledged
		// or by a later one, never by one that was over before it.
		// One acknowledged after every fault was over is no fault's.
		if i := sort.Search(len(ws), func(i int) bool { return ws[i].End >= v.At }); i < len(ws) {
			out[i+1].CountersBehind++
		} else {
			out[0].CountersBehind++
		}
	}
	if out[0].total() == 0 {
		out = out[1:]
	}
	return out
}

// migrationAcrossFailover judges a staged O→A→B→backfill→drain→C deploy
// recorded across primary failovers injected inside its steps (spec 000
// §The Fencing Migration on the production topology, §Problem Statement:
// one primary + replica, auto-failover): over the whole history, fault
// windows included, single authority from the fleet's calls and from the
// atomic observer, generations strictly increasing across both counters,
// no acknowledged lease lost, and every session's counter read back after
// the deploy (history.OpKnown) at or above each generation acknowledged
// before the read; it counts each anomaly with the fault and the step it
// fell in.
//
// Premises, checked: at least one fault window, every window healthy after
// its fault and overlapping the step it was aimed at (p.Aims); calls
// answered before the first fault; at least p.MinCalledInside fleet calls
// inside each window; p.MinSamples observations; a read-back. A broken
// premise is Unknown.
func migrationAcrossFailover(ops []history.MigrationOp, samples []history.KeyspaceSample, windows []history.FaultWindow, p MigrationFailoverPremise) check.Result {
	const name = "migration-across-failover"
	if len(ops) == 0 {
		return check.Unknownf(name, "premise: empty history")
	}
	if broken := faultWindowsPremise(fencingOps(ops), windows, p.MinCalledInside); broken != "" {
		return check.Unknownf(name, "%s", broken)
	}
	ws := append([]history.FaultWindow(nil), windows...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	if len(p.Aims) > 0 && len(p.Aims) != len(ws) {
		return check.Unknownf(name, "premise: %d fault windows for %d aimed steps", len(ws), len(p.Aims))
	}
	for i, a := range p.Aims {
		if w := ws[i]; a.End < w.Start || a.Start > w.End {
			return check.Unknownf(name, "premise: fault %s %s during [%v, %v] missed its step %q [%v, %v] (the step was not tried under the fault)",
				w.Fault, w.Target, w.Start.Round(time.Millisecond), w.End.Round(time.Millisecond), a.Step, a.Start.Round(time.Millisecond), a.End.Round(time.Millisecond))
		}
	}
	readBack, acquired := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		switch {
		case op.Kind == history.OpKnown && !op.Unknown:
			readBack[op.Session] = true
		case op.Kind == history.OpAcquire && op.OK && !op.Unknown:
			acquired[op.Session] = true
		}
	}
	unread := 0
	for s := range acquired {
		if !readBack[s] {
			unread++
		}
	}
	if len(readBack) == 0 || unread > 0 {
		return check.Unknownf(name, "premise: %d of %d acquired sessions have no successful read-back of their counter after the deploy (a lost counter write there would go unseen)", unread, len(acquired))
	}
	reads := len(readBack)
	behind := countersBehind(ops)
	behindResult := check.Passf("acknowledged-generations-kept", "every session's counter read back at or above each generation acknowledged before the read (%d reads)", reads)
	if len(behind) > 0 {
		behindResult = check.Failf("acknowledged-generations-kept", strings.Join(check.Elide(violationTexts(behind), 3), "\n"), "%d acknowledged generations above their session's counter read back after the deploy: the next acquire reissues them", len(behind))
	}
	lost := leasesLost(ops, p.TTL, p.Slack)
	lostResult := check.Passf("acknowledged-leases-kept", "no renew refused while its lease was certainly live")
	if len(lost) > 0 {
		lostResult = check.Failf("acknowledged-leases-kept", strings.Join(check.Elide(violationTexts(lost), 3), "\n"), "%d acknowledged leases vanished while certainly live (a write the store acknowledged was lost)", len(lost))
	}
	r := check.All(name,
		check.MigrationSingleAuthority(ops, p.TTL, p.Slack),
		check.ObservedSingleAuthority(samples, p.MinSamples),
		check.MigrationGenerations(ops),
		lostResult,
		behindResult,
	)
	r.Checker = name
	unknowns := 0
	for _, op := range ops {
		if op.Unknown {
			unknowns++
		}
	}
	anomalies := countMigrationAnomalies(ops, samples, ws, p.Aims, p.TTL, p.Slack)
	total := 0
	var observed []string
	for _, a := range anomalies {
		total += a.total()
		observed = append(observed, a.String())
	}
	observed = append(observed, fmt.Sprintf("%d fleet calls, %d with unknown outcome, %d observations, across %d faults", len(ops), unknowns, len(samples), len(ws)))
	if r.Status == check.Pass && total > 0 {
		// Every anomaly counted fails one of the checks above; a
		// disagreement is a bug in the count, not a verdict.
		r = check.Unknownf(name, "%d anomalies counted though every check passed: the count and the checks disagree", total)
		r.Counterexample = strings.Join(observed, "\n")
	}
	r.Observed = append(r.Observed, observed...)
	return r
}

// fencingOps is the directory calls of a migration history.
func fencingOps(ops []history.MigrationOp) []history.FencingOp {
	out := make([]history.FencingOp, len(ops))
	for i, op := range ops {
		out[i] = op.FencingOp
	}
	return out
}

// carries says whether merge m moves acquire a's generation into the other
// counter: the backfill carries what phases O and A issued from the old
// counter into the new; the reverse merge, what B and C issued from the new
// counter into the old. (B writes the new counter itself.)
func carries(m, a history.MigrationOp) bool {
	switch m.Phase {
	case "backfill":
		return a.Phase == "O" || a.Phase == "A"
	case "reverse merge":
		return a.Phase == "B" || a.Phase == "C"
	}
	return false
}

// countersBehind finds every acknowledged acquire whose generation is above
// a later read of its session's counter (history.OpKnown), once per
// acquire. Each is dated by the last acknowledged write that should have
// carried the generation to the read: the acquire, or a later merge of its
// session that moves it (history.OpMerge, carries) — the loss happened at
// or after it.
func countersBehind(ops []history.MigrationOp) []check.Violation {
	acks := map[string][]history.MigrationOp{}
	merges := map[string][]history.MigrationOp{}
	for _, op := range ops {
		if !op.OK || op.Unknown {
			continue
		}
		switch op.Kind {
		case history.OpAcquire:
			acks[op.Session] = append(acks[op.Session], op)
		case history.OpMerge:
			merges[op.Session] = append(merges[op.Session], op)
		}
	}
	var found []check.Violation
	counted := map[string]bool{}
	for _, read := range ops {
		if read.Kind != history.OpKnown || read.Unknown {
			continue
		}
		for _, a := range acks[read.Session] {
			k := check.LeaseKey(a)
			if a.Gen <= read.Gen || a.Return >= read.Call || counted[k] {
				continue
			}
			counted[k] = true
			at, by := a.Return, "acquire"
			for _, m := range merges[read.Session] {
				if m.Call > a.Return && m.Return < read.Call && m.Return > at && carries(m, a) {
					at, by = m.Return, m.Phase
				}
			}
			found = append(found, check.Violation{At: at, Text: fmt.Sprintf("%v [pod %s, phase %s]\n  above the counter %d read back at %v; last carried by the %s at %v", a.FencingOp, a.Pod, a.Phase, read.Gen, read.Call, by, at)})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].At < found[j].At })
	return found
}

// leasesLost finds every renew the directory refused although it ran
// entirely inside a window over which its own lease was certainly live
// and before its owner released it: the lease the store acknowledged is
// gone (a write lost at a failover), not expired.
func leasesLost(ops []history.MigrationOp, ttl, slack time.Duration) []check.Violation {
	_, byKey := check.MigrationLeases(ops, ttl, slack)
	var found []check.Violation
	counted := map[*check.MigrationLease]bool{}
	for _, op := range ops {
		if op.Unknown || op.OK || op.Kind != history.OpRenew {
			continue
		}
		l := byKey[check.LeaseKey(op)]
		if l == nil || counted[l] {
			continue
		}
		for _, w := range l.Live {
			if w[0] <= op.Call && op.Return < min(w[1], l.End) {
				found = append(found, check.Violation{At: op.Return, Text: fmt.Sprintf("%v [pod %s, phase %s, lane %s]\n  refused while the lease was certainly live during [%v, %v)",
					op.FencingOp, op.Pod, op.Phase, op.Lane, w[0], min(w[1], l.End))})
				counted[l] = true
				break
			}
		}
	}
	return found
}

func violationTexts(vs []check.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}
