package fencingmigration_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

// readDivergence is the first read where a real script and the model's read
// rule disagree, with a shortest trace to a state holding that keyspace.
type readDivergence struct {
	trace model.Trace
	what  string
	// errored: the call failed rather than answered differently.
	errored bool
}

// traceReads is the trace conformance of the read actions (spec 000
// §Per-phase operation table, rows lookup, known_generation,
// validate_fenced_header): every distinct keyspace of the model's reachable
// states is loaded into a fresh session, and every phase's real lookup and
// validate scripts are run on it — lookup once (its holder and
// known_generation), validate with every frame model.Frames presents (each
// live lease's own, and per pod a stale, current and future generation) —
// and compared with model.ReadRuleFor. The model's InvReadSide (every pod's
// rule tells the authority's truth in every reachable state) is checked
// beside it, so the scripts are tied to the truth through the model.
//
// Negative controls: each read mutant's real scripts against the correct
// rules must diverge; the mutant's own model rule must agree with them (one
// switch, as for M1–M3 and M5).
func traceReads(ctx context.Context, pool client.Pool, correct *model.Model, reachable *model.Graph, prefix string) (check.Result, []report.Control, []string) {
	GinkgoHelper()
	began := time.Now()
	inv := correct.CheckReads(reachable)
	calls, d := replayReads(ctx, pool, correct, reachable, fencing.ReadCorrect, fencing.ReadCorrect, prefix+"r", true)
	var observed []string
	observed = append(observed, fmt.Sprintf("read actions: %d real lookup/validate calls over every distinct keyspace of %d reachable states × 4 phases, wall time %v; the model's %s checked in %d states (%d read evaluations)",
		calls, len(reachable.States), time.Since(began).Round(time.Millisecond), model.InvReadSide, inv.States, inv.Reads))
	replay := judge.ReadReplay{Calls: calls, States: inv.States, Invariant: model.InvReadSide, Divergence: d.record(correct)}
	if inv.Violation != nil {
		replay.Broken = &judge.TraceDivergence{Steps: inv.Violation.Trace.Len(), What: inv.Why, Trace: correct.FormatTrace(inv.Violation.Trace)}
	}
	var controls []report.Control
	for _, rm := range fencing.ReadMutants {
		mm, err := model.New(model.Config{Read: rm})
		Expect(err).NotTo(HaveOccurred())
		same, sd := replayReads(ctx, pool, mm, reachable, rm, rm, prefix+"m", false)
		_, bd := replayReads(ctx, pool, correct, reachable, fencing.ReadCorrect, rm, prefix+"c", false)
		minv := mm.CheckReads(reachable)
		m := judge.ReadMutantReplay{Mutant: string(rm), Divergence: bd.record(nil), SameCalls: same, Same: sd.record(nil)}
		if minv.Violation != nil {
			m.Killed = &judge.TraceDivergence{Steps: minv.Violation.Trace.Len(), What: minv.Why}
		}
		replay.Mutants = append(replay.Mutants, m)
		controls = append(controls, harness.Variant("read-"+string(rm)+"-scripts", fmt.Sprintf("real %s scripts (impl/fencing/lua/mutants/read, phases %v) against the correct read rules: the replay must diverge", rm, rm.Phases()),
			judge.ReadScriptsDiverge.Judge(judge.ReadScriptsDivergeInput{Mutant: m, Invariant: model.InvReadSide})))
	}
	result := judge.ReadConformance.Judge(replay)
	observed = append(observed, fmt.Sprintf("read actions with their controls: wall time %v", time.Since(began).Round(time.Millisecond)))
	return result, controls, observed
}

// record is the divergence as the checkers judge it (judge.TraceDivergence),
// its trace rendered by m (nil: not shown); nil for no divergence.
func (d *readDivergence) record(m *model.Model) *judge.TraceDivergence {
	if d == nil {
		return nil
	}
	r := &judge.TraceDivergence{Steps: d.trace.Len(), What: d.what, Errored: d.errored}
	if m != nil {
		r.Trace = m.FormatTrace(d.trace) + "diverged: " + d.what + "\n"
	}
	return r
}

// replayReads runs the real scripts of read variant scripts against the
// read rules of m (built with rule) on every distinct keyspace of
// reachable, first seen in BFS order. With all false it stops at the first
// divergence. A mutant's scripts are called only in the phases and for the
// operation it changes (the rest are the correct scripts, replayed once).
func replayReads(ctx context.Context, pool client.Pool, m *model.Model, reachable *model.Graph, rule, scripts fencing.ReadMutant, prefix string, all bool) (int, *readDivergence) {
	dirs := map[fencing.Phase]*fencing.Directory{}
	for _, p := range fencing.Phases {
		dirs[p] = fencing.New(pool, fencing.Options{Scripts: fencing.WithReadMutant(cfg.ScriptSet().Phase(p), scripts), LeaseTTL: time.Hour})
	}
	rp := &replayer{pool: pool, prefix: prefix}
	seen := map[model.Keyspace]bool{}
	calls := 0
	var first *readDivergence
	for i, st := range reachable.States {
		ks := st.Keyspace()
		if seen[ks] {
			continue
		}
		seen[ks] = true
		s := rp.fresh()
		if err := rp.load(ctx, s, ks); err != nil {
			return calls, &readDivergence{trace: reachable.Trace(i), what: "load: " + err.Error(), errored: true}
		}
		k := ks.Stored()
		for _, p := range fencing.Phases {
			if scripts != fencing.ReadCorrect && !scripts.Applies(p) {
				continue
			}
			lookups := scripts == fencing.ReadCorrect || scripts.Op() != string(history.ReadValidate)
			validates := scripts == fencing.ReadCorrect || scripts.Op() == string(history.ReadValidate)
			r := model.ReadRuleFor(p, rule)
			var what string
			errored := false
			if lookups {
				calls++
				snap, err := dirs[p].Lookup(ctx, s)
				got := model.View{Known: snap.KnownGeneration}
				if snap.Held {
					got.Holder = model.Stored{Owner: snap.Holder.Owner, Gen: snap.Holder.Generation}
				}
				if want := r.Lookup(k); err != nil || got != want {
					what = fmt.Sprintf("phase %s lookup over %s: the node %s (%v), the model %s", p, k, got, err, want)
					errored = loudError(err)
				}
			}
			for _, f := range m.Frames(st) {
				if what != "" || !validates {
					break
				}
				calls++
				v, err := dirs[p].ValidateFencedHeader(ctx, s, f.Owner, f.Gen)
				if want := r.Validate(k, f.Owner, f.Gen); err != nil || v != want {
					what = fmt.Sprintf("phase %s validate_fenced_header(%s, %d) over %s: the node %s (%v), the model %s", p, f.Owner, f.Gen, k, v, err, want)
					errored = loudError(err)
				}
			}
			if what != "" {
				if first == nil {
					first = &readDivergence{trace: reachable.Trace(i), what: what, errored: errored}
				}
				if !all {
					return calls, first
				}
			}
		}
	}
	return calls, first
}

// loudError says a read call's error is the loud column's business (the
// node or the link failed), not a divergence. A reply in a shape the
// protocol does not define (fencing.ErrBadReply: the script and the
// directory disagree) is the script's answer, and wrong: a divergence.
// slotgate mutate found a lookup whose PTTL became false: every read
// errored, the check went blind, and no column failed.
func loudError(err error) bool { return err != nil && !errors.Is(err, fencing.ErrBadReply) }
