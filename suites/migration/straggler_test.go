package migration_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
)

// Stragglers of a rollout (spec 000 §The protocol, C-gate; §Deployment
// Gate rule 3): an A pod replaced during the A→B rollout lingers in its
// grace period — no phase gauge, still renewing its old-keyspace leases in
// place with the A scripts. The C-gate must not open while those leases
// live: the drain is proven by observation. A gate that trusts the time
// elapsed since the backfill ("wait one TTL") is the negative control.
var _ = Describe("fencing-migration straggler", func() {
	harness.Emit(harness.Scenario{
		Name: "fencing-migration/straggler", Row: row, Column: report.ColumnSilentlyWrong,
		Spec: "an A pod lingering in its grace period after the A→B rollout replaced it (no phase gauge) keeps renewing its old-keyspace leases: the C-gate opens only once they are observed drained, never on elapsed time (000 §The protocol, C-gate; §Deployment Gate rule 3)",
		Run:  stragglerDeploy,
	})
})

// stragglerGrace is the straggler's termination grace period: longer than
// the A→B rollout, the backfill and one TTL together, so a timer gate asks
// while it still renews.
const stragglerGrace = 4 * leaseTTL

// stragglerPlan: O→A, hold past a TTL (the pods hold old-keyspace leases);
// advance to B, and as the rollout starts the last slot's A pod is replaced
// by a fresh B pod and lingers for stragglerGrace; at full-B the backfill,
// then C is asked exactly when a "wait one TTL after the backfill" gate
// would allow it. With timer set, the gate is that known-bad variant.
func stragglerPlan(timer bool) func(ctx context.Context, r *staged) error {
	return func(ctx context.Context, r *staged) error {
		if timer {
			r.op.Gate = gate.New(gate.Options{DrainTimer: leaseTTL, Now: r.clock.Now})
		}
		r.hold(ctx, leaseTTL/2)
		if err := r.advance(ctx, fencing.A); err != nil {
			return err
		}
		r.hold(ctx, leaseTTL*3/2)
		done, err := r.op.Advance(ctx, fencing.B)
		if err != nil {
			return err
		}
		if _, err := r.fleet.Replace(r.fleet.Size()-1, fencing.B, stragglerGrace); err != nil {
			return err
		}
		wait(ctx, done)
		if _, err := r.op.Backfill(ctx); err != nil {
			return err
		}
		r.hold(ctx, leaseTTL+leaseTTL/10)
		if err := r.advance(ctx, fencing.C); err != nil {
			return err
		}
		r.hold(ctx, leaseTTL)
		return nil
	}
}

func stragglerDeploy(ctx SpecContext) report.Check {
	sz := scale()
	By(fmt.Sprintf("O→A→B with an A pod lingering %v after the rollout replaced it, backfill, C asked one TTL (%v) after the backfill", stragglerGrace, leaseTTL))
	r := stage(ctx, run{name: "fencing-migration/straggler", sessions: sz.mutantSessions, pods: 5, plan: stragglerPlan(false)})
	result, observed := judgeStraggler(r)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, "errors (not scored here): "+check.Judge(check.MigrationErrors, r.history, 1).Message)
	ev.Observed = append(ev.Observed, observed...)
	ev.Metrics = metrics(r)

	By("negative control: the same deploy through a gate that trusts one TTL elapsed since the backfill")
	tr := stage(ctx, run{name: "fencing-migration/straggler/timer-gate", sessions: sz.mutantSessions, pods: 5, plan: stragglerPlan(true)})
	ctlResult, ctlObserved := judgeStraggler(tr)
	ev.Observed = append(ev.Observed, prefix("timer gate: ", ctlObserved)...)
	if ctlResult.Counterexample != "" {
		ev.Observed = append(ev.Observed, "timer gate counterexample:\n"+firstLines(ctlResult.Counterexample, 6))
	}
	ctl := harness.Variant("elapsed-time-gate", "C-gate on time elapsed since the backfill (one TTL) instead of the observed old-keyspace count: a straggler's renewed lease never expires (impl/gate DrainTimer, run against the node)", ctlResult)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

// judgeStraggler: the C-gate opened with no straggler lease certainly live,
// after an observation saw the old keyspace drain to 0, and T1/T2 held.
func judgeStraggler(r *staged) (check.Result, []string) {
	backfill, okB := r.step("backfill", 1)
	c, okC := r.step("advance to C", 1)
	Expect(okB && okC).To(BeTrue(), "%s: the deploy reached C through the gate", r.name)
	stragglers := r.fleet.Stragglers()
	drained := check.Judge(check.StragglersDrained, r.history, stragglers, backfill.At, c.At, leaseTTL, slack)
	observed := check.Judge(check.OldKeyspaceDrained, r.samples, backfill.At, c.At)
	var out []string
	for _, s := range stragglers {
		renews := 0
		for _, op := range r.history {
			if op.Pod == s.Pod && op.Kind == history.OpRenew && op.OK && op.Call >= s.Left {
				renews++
			}
		}
		gone := "still lingering when the run ended"
		if s.Gone > 0 {
			gone = "exited @" + s.Gone.Round(time.Millisecond).String()
		}
		out = append(out, fmt.Sprintf("straggler %s (phase %s) left the gauges @%v, %s; %d renews in place after it left", s.Pod, s.Phase, s.Left.Round(time.Millisecond), gone, renews))
	}
	out = append(out, "backfill @"+backfill.At.Round(time.Millisecond).String()+", "+c.String(), "stragglers: "+drained.Message, "observed drain: "+observed.Message)
	return check.All("fencing-migration-straggler", drained, observed, invariants(r)), out
}

func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
