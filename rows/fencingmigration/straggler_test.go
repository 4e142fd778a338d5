package fencingmigration_test

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
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Stragglers of a rollout (spec 000 §The protocol, C-gate; §Deployment
// Gate rule 3): an A pod replaced during the A→B rollout lingers — no phase
// gauge, still renewing its old-keyspace leases in place with the A scripts
// — and the rollout no longer lists it (force-deleted while its process
// runs on), so rule 2(b) cannot see it (a listed one: rollout_test.go). The C-gate must not open while those leases
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
		if err := r.backfillReplacing(ctx, leaseTTL*3/2, traffic.ReplaceOptions{Grace: stragglerGrace}); err != nil {
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
	r := stage(ctx, run{name: "fencing-migration/straggler", sessions: sz.mutantSessions, pods: 5, grace: stragglerGrace, plan: stragglerPlan(false)})
	result, observed := judgeStraggler(r)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, "errors (not scored here): "+check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: r.history, MinOps: 1}).Message)
	ev.Observed = append(ev.Observed, observed...)
	ev.Metrics = metrics(r)

	By("negative control: the same deploy through a gate that trusts one TTL elapsed since the backfill")
	tr := stage(ctx, run{name: "fencing-migration/straggler/timer-gate", sessions: sz.mutantSessions, pods: 5, grace: stragglerGrace, plan: stragglerPlan(true)})
	ctlResult, ctlObserved := judgeStraggler(tr)
	ev.Observed = append(ev.Observed, variantObserved("timer gate", ctlResult, ctlObserved)...)
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
	drained := judge.StragglersDrained.Judge(judge.StragglersDrainedInput{Ops: r.history, Stragglers: stragglers, After: backfill.At, GateAt: c.At, TTL: leaseTTL, Slack: slack})
	observed := judge.OldKeyspaceDrained.Judge(judge.KeyspaceDrainedInput{Samples: r.samples, Since: backfill.At, By: c.At})
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

// variantObserved is what a variant's run adds to the evidence: its
// observations under label, then its counterexample's first lines.
func variantObserved(label string, r check.Result, observed []string) []string {
	out := prefix(label+": ", observed)
	if r.Counterexample != "" {
		out = append(out, label+" counterexample:\n"+firstLines(r.Counterexample, 6))
	}
	return out
}

func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
