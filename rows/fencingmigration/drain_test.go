package fencingmigration_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// A drain that can never finish (spec 000 §The protocol, C-gate: a renewed
// lease never expires while its pod lives; §Deployment Gate rule 3): an A
// pod replaced by the A→B rollout hangs instead of exiting and renews its
// old-keyspace leases forever; it was force-deleted, so the rollout no
// longer lists it and only the keyspace shows it. The C-gate must keep refusing, and the
// operator must give up with a drain-stuck error within a bound derived from
// the TTL — an operator that waits on it forever is the negative control.
var _ = Describe("fencing-migration stuck drain", func() {
	harness.Emit(harness.Scenario{
		Name: "fencing-migration/drain-bound", Row: row, Column: report.ColumnErrors,
		Spec: "a pod stuck renewing its old-keyspace leases forever: the C-gate never admits C, and the operator ends the step with a drain-stuck error within a bound derived from the lease TTL (3 TTLs and 2 s of scheduling slack), not by the run's timeout (000 §The protocol, C-gate; §Deployment Gate rule 3)",
		Run:  drainBound,
	})
})

// stuckFor outlives any run: the stuck pod stops only when the fleet does.
const stuckFor = time.Hour

// drainTolerance is how far past its bound a bounded operator may end: its
// last observation and ask before it gives up, each one round trip that a
// contended host can stretch by a second or more.
const drainTolerance = leaseTTL/2 + 2*time.Second

// drainCut is the scenario's own bound on the C ask: the drain bound, its
// tolerance and two more TTLs. An operator still waiting then has no bound
// of its own.
var drainCut = traffic.DrainBound(leaseTTL, 0) + drainTolerance + 2*leaseTTL

// stuckPlan: O→A, hold past a TTL (the pods hold old-keyspace leases);
// advance to B, and as the rollout starts the last slot's A pod is replaced
// and hangs (stuckFor); at full-B the backfill, then C is asked under the
// scenario's cut. The C ask's outcome is the scenario's data, not an error
// of the plan.
func stuckPlan(attempt *judge.DrainAttempt) func(ctx context.Context, r *staged) error {
	return func(ctx context.Context, r *staged) error {
		if err := r.backfillReplacing(ctx, leaseTTL*3/2, traffic.ReplaceOptions{Grace: stuckFor}); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, drainCut)
		defer cancel()
		_, err := r.op.Advance(cctx, fencing.C)
		st := r.op.Steps[len(r.op.Steps)-1]
		*attempt = judge.DrainAttempt{Step: st.Name, Asked: st.Asked, Ended: st.Ended, Admitted: st.Allowed, Stuck: st.Stuck, Err: st.Err,
			Cut: err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil}
		return ctx.Err()
	}
}

func drainBound(ctx SpecContext) report.Check {
	sz := scale()
	bound := traffic.DrainBound(leaseTTL, 0)
	By(fmt.Sprintf("O→A→B with an A pod hanging after the rollout replaced it, backfill, C asked: the drain must end stuck within %v", bound))
	var a judge.DrainAttempt
	r := stage(ctx, run{name: "fencing-migration/drain-bound", sessions: sz.mutantSessions, pods: 5, plan: stuckPlan(&a)})
	result := judgeDrain(r, a, bound)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, fmt.Sprintf("C ask: asked @%v, ended @%v, admitted=%v stuck=%v cut=%v: %s", a.Asked.Round(time.Millisecond), a.Ended.Round(time.Millisecond), a.Admitted, a.Stuck, a.Cut, a.Err))
	ev.Metrics = metrics(r)

	By("negative control: the same deploy through an operator whose drain has no bound")
	var ua judge.DrainAttempt
	ur := stage(ctx, run{name: "fencing-migration/drain-bound/unbounded", sessions: sz.mutantSessions, pods: 5, unboundedDrain: true, plan: stuckPlan(&ua)})
	ctlResult := judgeDrain(ur, ua, bound)
	ev.Observed = append(ev.Observed, fmt.Sprintf("unbounded drain: C asked @%v, ended @%v, admitted=%v stuck=%v cut=%v: %s; %s", ua.Asked.Round(time.Millisecond), ua.Ended.Round(time.Millisecond), ua.Admitted, ua.Stuck, ua.Cut, ua.Err, ctlResult.Message))
	ctl := harness.Variant("unbounded-drain", "an operator that waits for the old keyspace to drain with no bound of its own (traffic.Operator with Drain 0, run against the node): a stuck pod's renewed lease keeps it waiting until the run's timeout", ctlResult)
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}

// judgeDrain: the C ask ended by itself with a drain-stuck error within
// bound while the old keyspace stayed live (the observer's samples), and
// the gate never admitted C.
func judgeDrain(r *staged, a judge.DrainAttempt, bound time.Duration) check.Result {
	Expect(a.Step).To(Equal("advance to "+string(fencing.C)), "%s: the deploy asked for C", r.name)
	return judge.DrainBounded.Judge(judge.DrainBoundedInput{Attempt: a, Samples: r.samples, Target: string(fencing.C), Bound: bound, Tolerance: drainTolerance, MinSamples: 20})
}
