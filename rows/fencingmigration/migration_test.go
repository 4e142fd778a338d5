package fencingmigration_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/rows/fencingmigration/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowFencingMigration

var _ = Describe("fencing-migration", func() {
	harness.Emit(
		harness.Scenario{
			Name: "fencing-migration/staged-deploy", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "T1 single authority and T2 generation monotonicity along the whole rollback matrix — O→A→B→(rollback)A→(rollback: new keyspace drained, reverse merge)O→A→B→backfill→drain→C→(rollback)B→backfill→C — under pod kills and link faults (latency, reset-peer); every step through the Deployment Gate, C-gate by observed drain, not a timer (000 §Safety theorems, §The protocol, §Deployment Gate)",
			Run:  stagedDeploy,
		},
		harness.Scenario{
			Name: "fencing-migration/errors", Row: row, Column: report.ColumnErrors,
			Spec: "every directory call of the staged deploy succeeded, was abandoned by a pod kill, or failed on the network inside a recorded link-fault window (000 §Conformance, Fencing migration)",
			Run:  errorsColumn,
		},
		harness.Scenario{
			Name: "fencing-migration/slot-rules", Row: row, Column: report.ColumnErrors,
			Spec: "T3: the mode door opens only with the fleet fully on C, backfilled and drained; A/B meet slot rules as CROSSSLOT (000 §Safety theorems T3, §Deployment Gate)",
			Run:  slotRules,
		},
	)
})

// mainRuns runs the staged deploy (mainPlan) once; the staged-deploy,
// errors and read-side scenarios judge the same run.
var mainRuns = harness.NewOnce(func(ctx SpecContext, name string) *staged {
	GinkgoHelper()
	sz := scale()
	By(fmt.Sprintf("staged deploy: %d pods, %d sessions over both lanes, pod kills every ~%v, TTL %v renew %v", sz.pods, sz.sessions, sz.killEvery, leaseTTL, leaseTTL/3))
	return stage(ctx, run{name: name, sessions: sz.sessions, pods: sz.pods, kills: true, reads: true, plan: mainPlan})
})

// mainPlan is the staged deploy along the whole rollback matrix (000
// §Deployment Gate rule 4), every step asked of the gate:
//
//	O → A → B → (rollback) A → (rollback: new keyspace drained + reverse
//	max-merge) O → A [latency on the pod links] → B → backfill → (observed
//	drain) C → (rollback) B [reset-peer mid-phase] → backfill → C
//
// Two refusals are part of the correct path: into O before the reverse
// merge, and into C after the C→B rollback before the backfill re-ran.
func mainPlan(ctx context.Context, r *staged) error {
	jitter := func() { r.hold(ctx, r.sz.hold/2+randDur(r, r.sz.hold)) }
	jitter() // O with live traffic
	if err := r.advance(ctx, fencing.A); err != nil {
		return err
	}
	// NOTE: full-A with live renewers for more than one TTL: the window a
	// "wait one TTL" drain would trust (the timer-drain control).
	r.timerFrom = append(r.timerFrom, r.clock.Now())
	r.hold(ctx, leaseTTL+r.sz.hold/2)
	if err := r.advance(ctx, fencing.B); err != nil {
		return err
	}
	jitter()
	if err := r.rollback(ctx, fencing.A); err != nil {
		return err
	}
	// Into O, asked at once at full-A: the gate refuses while B-era leases
	// live on the new keyspace (A renews the old key only, so they lapse)
	// and the operator observes until the count is 0; then it refuses until
	// the reverse max-merge has run — which no observation can clear.
	err := r.rollback(ctx, fencing.O)
	if gate.ReasonOf(err) != gate.ReasonNotReverseMerged {
		return fmt.Errorf("rollback to O before the reverse merge: want refusal %s, got %v", gate.ReasonNotReverseMerged, err)
	}
	if _, err := r.op.ReverseMerge(ctx); err != nil {
		return err
	}
	if err := r.rollback(ctx, fencing.O); err != nil {
		return err
	}
	jitter()
	heal, err := r.latency(ctx, fault.Latency{Latency: r.sz.latency, Jitter: r.sz.jitter})
	if err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.A); err != nil {
		return err
	}
	r.timerFrom = append(r.timerFrom, r.clock.Now())
	r.hold(ctx, leaseTTL+r.sz.hold/2)
	if err := heal(); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.B); err != nil {
		return err
	}
	// Backfill and C asked at once at full-B: the C-gate refuses while
	// A-era leases live on the old keyspace, until B's renew-migrate and
	// expiry drain it (observed).
	if _, err := r.op.Backfill(ctx); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.C); err != nil {
		return err
	}
	jitter()
	if err := r.rollback(ctx, fencing.B); err != nil {
		return err
	}
	r.hold(ctx, r.sz.hold/2)
	if err := r.resetPeer(ctx, r.sz.reset); err != nil { // mid-B: every pod link cut
		return err
	}
	r.hold(ctx, r.sz.hold/2)
	// The rollback invalidated the backfill: C is refused until it re-runs.
	err = r.advance(ctx, fencing.C)
	if gate.ReasonOf(err) != gate.ReasonNotBackfilled {
		return fmt.Errorf("advance to C after a C→B rollback, before the backfill re-ran: want refusal %s, got %v", gate.ReasonNotBackfilled, err)
	}
	if _, err := r.op.Backfill(ctx); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.C); err != nil {
		return err
	}
	jitter()
	return nil
}

func randDur(r *staged, d time.Duration) time.Duration {
	return time.Duration(r.rng.Int64N(max(1, int64(d))))
}

func theMainRun(ctx SpecContext) *staged {
	GinkgoHelper()
	return mainRuns.Get(ctx, "fencing-migration/staged-deploy")
}

// mutantPlans are the spec's mutants M1–M8 with the plan that exposes each:
// the phases where the mutated script runs or the gate step it skips.
var mutantPlans = map[fencing.MigrationMutant]func(ctx context.Context, r *staged) error{
	// M1, M3: B pods next to A-era old-key leases and old counters.
	fencing.M1: steps(adv(fencing.A), hold(400), adv(fencing.B), hold(900)),
	fencing.M3: steps(adv(fencing.A), hold(400), adv(fencing.B), hold(900)),
	// M2, M5: A pods next to B-era new-key leases and counters (mixed fleet, rollback B→A).
	fencing.M2: steps(adv(fencing.A), hold(300), adv(fencing.B), hold(600), back(fencing.A), hold(900)),
	fencing.M5: steps(adv(fencing.A), hold(300), adv(fencing.B), hold(600), back(fencing.A), hold(900)),
	// M4: C right after full-B, without backfill or drain (the correct gate refuses this plan).
	fencing.M4: steps(adv(fencing.A), hold(400), adv(fencing.B), adv(fencing.C), hold(900)),
	// M6: into O while B-era new-key leases live.
	fencing.M6: steps(adv(fencing.A), hold(300), adv(fencing.B), hold(700), back(fencing.A), merge, back(fencing.O), hold(900)),
	// M7: into O without the reverse max-merge (drained, so only T2 can break).
	fencing.M7: steps(adv(fencing.A), hold(300), adv(fencing.B), hold(900), back(fencing.A), back(fencing.O), hold(1200)),
	// M8: a second rollback (B→A) while the first (C→B) is still rolling: C and A pods coexist.
	// NOTE: the downgrade rolls one pod per 400 ms, so C and A pods coexist
	// for seconds: a session whose new-key lease a C pod released (or an A
	// pod abandoned and it lapsed) is free to an A pod, which acquires it on
	// the old key, and a C pod (new key only) then takes the same session on
	// the new one. The pod kills stop for the downgrade: a killed C pod comes
	// back as an A pod (the template is A), and with a roll of 300 ms and a
	// kill every ~350 ms the C pods were gone about as soon as the first A
	// pod's abandoned leases lapsed, and the control went uncaught.
	fencing.M8: steps(adv(fencing.A), hold(300), adv(fencing.B), backfill, adv(fencing.C), hold(500), pauseKills, rollEvery(400), startBack(fencing.B), startBack(fencing.A), hold(2000)),
}

type step func(ctx context.Context, r *staged) error

func steps(s ...step) func(ctx context.Context, r *staged) error {
	return func(ctx context.Context, r *staged) error {
		r.hold(ctx, 300*time.Millisecond)
		for _, st := range s {
			if err := st(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}
}

func adv(p fencing.Phase) step {
	return func(ctx context.Context, r *staged) error { return r.advance(ctx, p) }
}
func back(p fencing.Phase) step {
	return func(ctx context.Context, r *staged) error { return r.rollback(ctx, p) }
}
func startBack(p fencing.Phase) step { // start a rollback, do not wait for it
	return func(ctx context.Context, r *staged) error { _, err := r.op.Rollback(ctx, p); return err }
}
func hold(ms int) step {
	return func(ctx context.Context, r *staged) error {
		r.hold(ctx, time.Duration(ms)*time.Millisecond)
		return nil
	}
}
func rollEvery(ms int) step {
	return func(_ context.Context, r *staged) error { r.op.Roll = time.Duration(ms) * time.Millisecond; return nil }
}
func pauseKills(_ context.Context, r *staged) error { r.killsPaused.Store(true); return nil }
func merge(ctx context.Context, r *staged) error    { _, err := r.op.ReverseMerge(ctx); return err }
func backfill(ctx context.Context, r *staged) error { _, err := r.op.Backfill(ctx); return err }

var mutantWhy = map[fencing.MigrationMutant]string{
	fencing.M1: "AcquireB drops the old-lease check: a new-script pod ignores legacy leases",
	fencing.M2: "AcquireA drops the new-lease check: an old-keyspace writer ignores B's leases",
	fencing.M3: "AcquireB issues newGen+1 without max-merge: the fresh counter re-issues generations",
	fencing.M4: "C-gate dropped: C deployed before backfill and observed drain",
	fencing.M5: "AcquireA drops the union max-merge read: A never sees B's issues",
	fencing.M6: "rollback into O without the new-keyspace drain check",
	fencing.M7: "rollback into O without the reverse max-merge",
	fencing.M8: "rollback started past a running downgrade: skipped-phase coexistence",
}

func stagedDeploy(ctx SpecContext) report.Check {
	r := theMainRun(ctx)
	ev := harness.Evidence(cfg, standalone, nil)
	result := invariants(r)
	// The C-gate's drain on the first B→C, and the new-keyspace drain the
	// rollback into O waited for, both as the observer saw them.
	b2, okB := r.step("advance to B", 2)
	c1, okC := r.step("advance to C", 1)
	a1, okA := r.step("rollback to A", 1)
	o1, okO := r.step("rollback to O", 1)
	Expect(okB && okC && okA && okO).To(BeTrue(), "the staged deploy walked the whole matrix")
	drain := judge.OldKeyspaceDrained.Judge(judge.KeyspaceDrainedInput{Samples: r.samples, Since: b2.At, By: c1.At})
	newDrain := judge.NewKeyspaceDrained.Judge(judge.KeyspaceDrainedInput{Samples: r.samples, Since: a1.At, By: o1.At})
	result = check.All("fencing-migration", result, drain, newDrain)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, "C-gate: "+drain.Message, "into O: "+newDrain.Message)
	ev.Metrics = metrics(r)
	ev.Faults = harness.Windows(r.faults...)

	var controls []report.Control
	By("negative control: a \"wait one TTL\" drain at full-A with live renewers")
	// A timer drain is refuted by one full-A hold where the old keyspace was
	// still live a TTL later; the first such hold is the counterexample.
	var timer check.Result
	for i, from := range r.timerFrom {
		timer = judge.OldKeyspaceDrained.Judge(judge.KeyspaceDrainedInput{Samples: r.samples, Since: from, By: from + leaseTTL})
		ev.Observed = append(ev.Observed, fmt.Sprintf("timer-drain control, full-A hold %d: %s", i+1, timer.Message))
		if timer.Status == check.Fail {
			break
		}
	}
	controls = append(controls, harness.SelfTest("timer-drain", "C-gate by waiting one TTL: renew is PEXPIRE, a renewed lease never expires while its pod lives (000 §The protocol, C-gate)", timer))

	for _, m := range fencing.MigrationMutants {
		if _, ok := mutantPlans[m]; !ok {
			continue // M9 is loud: scored in the errors column (slot-rules)
		}
		By(fmt.Sprintf("negative control: mutant %s (%s)", m, mutantWhy[m]))
		mr := theMutantRun(ctx, m)
		t1 := check.All("t1", check.MigrationSingleAuthorityCheck.Judge(check.MigrationSingleAuthorityInput{Ops: mr.history, TTL: leaseTTL, Slack: slack}), check.ObservedSingleAuthorityCheck.Judge(check.ObservedSingleAuthorityInput{Samples: mr.samples, MinSamples: 20}))
		t2 := check.MigrationGenerationsCheck.Judge(mr.history)
		res := invariants(mr)
		ctl := m6Premise(m, mr, harness.Variant(string(m), mutantWhy[m]+" (spec: trips "+m.Trips()+")", res))
		ctl = m8Premise(m, mr, ctl)
		controls = append(controls, ctl)
		if m == fencing.M8 {
			both, acquires := mr.m8Window()
			ev.Observed = append(ev.Observed, fmt.Sprintf("M8: A and C pods coexisted for %v (TTL %v); %d acquires by A pods meanwhile", both.Round(time.Millisecond), leaseTTL, acquires))
		}
		predicted := t1
		if m.Trips() == "Inv_Monotonic" {
			predicted = t2
		}
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s killed=%v: T1 %s, T2 %s; spec-predicted %s tripped=%v; %d ops, %d pods killed",
			m, ctl.Caught, t1.Status, t2.Status, m.Trips(), predicted.Status == check.Fail, len(mr.history), mr.fleet.Kills()))
		if res.Counterexample != "" {
			ev.Observed = append(ev.Observed, fmt.Sprintf("%s counterexample:\n%s", m, firstLines(res.Counterexample, 6)))
		}
	}
	// The backfill's max-merge carried the main run's B-era counters into C.
	if bf, ok := r.step("backfill", 1); ok {
		ev.Observed = append(ev.Observed, "across the first backfill: "+judge.GenerationsCarried.Judge(judge.GenerationsCarriedInput{Ops: r.history, Since: b2.At, At: bf.At, Ahead: string(fencing.B)}).Message)
	}
	for _, v := range []func(SpecContext) (report.Control, []string){keepBackfillControl, overwriteControl} {
		ctl, observed := v(ctx)
		controls = append(controls, ctl)
		ev.Observed = append(ev.Observed, observed...)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

// keepBackfillPlan walks C→B→A→B and asks for C again: the correct gate
// refuses (rule 4, "any rollback invalidates the backfill") and the
// backfill re-runs; the KeepBackfill gate admits C on the first backfill.
// NOTE: the per-lane cap of 3 leaves many sessions that A pods issued (into
// the old counter only) and no B pod re-acquired before C: those are the
// sessions whose generation a stale backfill loses.
func keepBackfillPlan(ctx context.Context, r *staged) error {
	return steps(adv(fencing.A), hold(300), adv(fencing.B), hold(400), backfill, adv(fencing.C), hold(400),
		back(fencing.B), back(fencing.A), hold(900), adv(fencing.B),
		func(ctx context.Context, r *staged) error {
			err := r.advance(ctx, fencing.C)
			if gate.ReasonOf(err) != gate.ReasonNotBackfilled {
				return err
			}
			if _, err := r.op.Backfill(ctx); err != nil {
				return err
			}
			return r.advance(ctx, fencing.C)
		}, hold(1200))(ctx, r)
}

// overwritePlan: B issues from the new counter (the old one stays behind),
// the backfill runs, then C issues from the new counter.
var overwritePlan = steps(adv(fencing.A), hold(400), adv(fencing.B), hold(900), backfill, adv(fencing.C), hold(900))

// keepBackfillControl runs the gate that keeps the backfill across a
// rollback (gate.Options.KeepBackfill) on keepBackfillPlan: C issues from a
// new counter behind the generations A pods issued after the rollback.
func keepBackfillControl(ctx SpecContext) (report.Control, []string) {
	By("negative control: a gate that keeps the backfill across a rollback (C→B→A→B, then C)")
	sz := scale()
	mr := stage(ctx, run{name: "fencing-migration/variant/keep-backfill", keepBackfill: true, sessions: sz.mutantSessions, pods: sz.mPods, kills: true, cap: 3, plan: keepBackfillPlan})
	rbA, okA := mr.step("rollback to A", 1)
	c2, okC := mr.step("advance to C", 2)
	Expect(okA && okC).To(BeTrue(), "%s: the deploy reached C again through the gate", mr.name)
	res := check.All("keep-backfill", invariants(mr), judge.GenerationsCarried.Judge(judge.GenerationsCarriedInput{Ops: mr.history, Since: rbA.At, At: c2.At, Ahead: string(fencing.A)}))
	ctl := harness.Variant("keep-backfill", "the backfill mark kept across a rollback (impl/gate KeepBackfill, run against the node): C admitted after C→B→A→B on the first backfill, issuing from a new counter behind A's (spec: rule 4, trips Inv_Monotonic)", res)
	_, rebackfilled := mr.step("backfill", 2)
	ctl = harness.Premise(ctl, !rebackfilled, "the backfill re-ran before C: the kept mark had nothing to skip")
	return ctl, variantObserved("keep-backfill", res, []string{fmt.Sprintf("%s; gate steps: %s", res.Message, stepNames(mr))})
}

// overwriteControl runs a backfill that overwrites the new counter with
// the old one (fencing.BackfillOverwrite) on overwritePlan.
func overwriteControl(ctx SpecContext) (report.Control, []string) {
	By("negative control: a backfill that overwrites the new counter (SET, no max-merge)")
	sz := scale()
	mr := stage(ctx, run{name: "fencing-migration/variant/backfill-overwrite", merge: fencing.BackfillOverwrite, sessions: sz.mutantSessions, pods: sz.mPods, kills: true, plan: overwritePlan})
	b, okB := mr.step("advance to B", 1)
	bf, okF := mr.step("backfill", 1)
	Expect(okB && okF).To(BeTrue(), "%s: the deploy ran the backfill", mr.name)
	res := check.All("backfill-overwrite", invariants(mr), judge.GenerationsCarried.Judge(judge.GenerationsCarriedInput{Ops: mr.history, Since: b.At, At: bf.At, Ahead: string(fencing.B)}))
	ctl := harness.Variant("backfill-overwrite", "the backfill writes the old counter over the new one instead of max-merging (lua/mutants/migration/backfill_overwrite.lua, run against the node): sessions B advanced go backwards (spec: trips Inv_Monotonic)", res)
	return ctl, variantObserved("backfill-overwrite", res, []string{res.Message})
}

func stepNames(r *staged) string {
	out := make([]string, len(r.op.Steps))
	for i, st := range r.op.Steps {
		out[i] = st.String()
	}
	return strings.Join(out, ", ")
}

// m6Premise: M6 drops the new-keyspace drain check of the rollback into O,
// so its run proves something only if new-key leases were live when the
// gate allowed that rollback. Under load the A rollout and the merge once
// outlasted the leases (old=91 new=0 at the decision), and the control
// went uncaught with nothing to catch: not exercised, not blind.
func m6Premise(m fencing.MigrationMutant, mr *staged, ctl report.Control) report.Control {
	if m != fencing.M6 {
		return ctl
	}
	return harness.Premise(ctl, mr.newLeasesAt("rollback to O"), "no new-key lease was live when the gate allowed the rollback to O: the missing drain check had nothing to miss")
}

// m8Premise: M8's hazard is an A pod holding a session on the old
// keyspace while a C pod (new keyspace only) takes the same session on the
// new one. A session is free to an A pod once its new-key lease is gone —
// released by a C pod, or abandoned when its holder rolled to A and
// lapsed — so the run proves something only if some A pod acquired while
// C pods were live. A run whose C pods were gone by then had nothing to
// catch: not exercised, not blind. A caught control stands: a fork the
// checker caught is the hazard itself.
func m8Premise(m fencing.MigrationMutant, mr *staged, ctl report.Control) report.Control {
	if m != fencing.M8 || ctl.Caught {
		return ctl
	}
	both, acquires := mr.m8Window()
	return harness.Premise(ctl, acquires > 0, fmt.Sprintf("no A pod acquired while C pods were live (A and C pods coexisted for %v at most)", both.Round(time.Millisecond)))
}

// mutantCap: M7 needs sessions B issued that A never re-acquires before O
// runs; a small per-lane hold over a large population leaves many.
func mutantCap(m fencing.MigrationMutant) int {
	if m == fencing.M7 {
		return 3
	}
	return 0
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func summary(r *staged) []string {
	var out []string
	out = append(out, fmt.Sprintf("%d pods (%d killed and replaced, %d replacement starts retried on a cut link), %d sessions over the reliable and huddle lanes, %d operations, %d keyspace observations in %v",
		r.pods, r.fleet.Kills(), r.fleet.StartFailures(), len(r.sessions), len(r.history), len(r.samples), r.elapsed.Round(time.Millisecond)))
	steps := make([]string, len(r.op.Steps))
	for i, st := range r.op.Steps {
		steps[i] = st.String()
	}
	out = append(out, "gate steps: "+strings.Join(steps, ", "))
	var refusals []string
	for reason, n := range r.op.Refusals {
		refusals = append(refusals, fmt.Sprintf("%d×%s", n, reason))
	}
	sort.Strings(refusals)
	out = append(out, "gate refusals: "+strings.Join(refusals, ", "))
	for i, w := range r.faults {
		sp := r.spans[i]
		n, errs := 0, 0
		var slowest time.Duration
		for _, op := range r.history {
			if op.Call <= sp.End+settle && op.Return >= sp.Start {
				n++
				slowest = max(slowest, op.Return-op.Call)
				if op.ErrKind != "" && !op.Abandoned {
					errs++
				}
			}
		}
		out = append(out, fmt.Sprintf("fault window %d: %s on %s, %v–%v (%v): %d pod calls overlapped it (+%v settle), slowest %v, %d failed",
			i+1, w.Fault, w.Target, sp.Start.Round(time.Millisecond), sp.End.Round(time.Millisecond), w.End.Sub(w.Start).Round(time.Millisecond),
			n, settle, slowest.Round(time.Millisecond), errs))
	}
	return out
}

func metrics(r *staged) map[string]float64 {
	migrated := 0
	for _, op := range r.history {
		if op.Kind == history.OpRenew && op.OK && op.Phase == string(fencing.B) {
			migrated++
		}
	}
	return map[string]float64{
		"pods": float64(r.pods), "pods_killed": float64(r.fleet.Kills()), "sessions": float64(len(r.sessions)),
		"operations": float64(len(r.history)), "acquisitions": float64(r.count(history.OpAcquire, true)),
		"refused_acquires": float64(r.count(history.OpAcquire, false)), "renews_ok": float64(r.count(history.OpRenew, true)),
		"b_renews_ok": float64(migrated), "observations": float64(len(r.samples)), "observer_errors": float64(r.obsErrs),
		"fault_windows": float64(len(r.faults)), "fault_window_errors": float64(r.faultErrors()), "pod_start_retries": float64(r.fleet.StartFailures()),
		"gate_steps": float64(len(r.op.Steps)),
	}
}

// settle is how long after a link-fault window a pod's call may still fail
// on the cut link: one renew tick, the pool finding its connections dead.
const settle = leaseTTL / 3

// faultErrors counts the calls that failed on the network inside a
// link-fault window (+settle) and were not abandoned by a pod kill.
func (r *staged) faultErrors() int {
	n := 0
	for _, op := range r.history {
		if op.ErrKind != check.ErrKindNetwork || op.Abandoned {
			continue
		}
		for _, w := range r.spans {
			if op.Call <= w.End+settle && op.Return >= w.Start {
				n++
				break
			}
		}
	}
	return n
}

func errorsColumn(ctx SpecContext) report.Check {
	r := theMainRun(ctx)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Metrics = metrics(r)
	result := check.MigrationErrorsAroundCheck.Judge(check.MigrationErrorsAroundInput{Ops: r.history, Faults: r.spans, Settle: settle, MinOps: 100})
	ev.Faults = harness.Windows(r.faults...)
	// The staged deploy ran in the scenario that asked first: this column
	// draws its timeline from the same directory calls.
	if rec := history.From(ctx); rec != nil && len(rec.Snapshot().Ops) == 0 {
		harness.RecordOps(ctx, r.clock, workload.TimelineOps("directory calls", r.history))
	}
	if r.obsErrs > 0 {
		result = check.All("fencing-migration-errors", result, check.Result{Status: check.Fail, Message: fmt.Sprintf("%d observer scripts failed", r.obsErrs)})
	}
	By("negative control: the A and B scripts on the single-shard cluster-enabled node")
	Expect(single.Reset(ctx)).To(Succeed())
	cross := crossSlotHistory(ctx, []fencing.Phase{fencing.A, fencing.B}, 8)
	ctl := harness.Variant("a-b-under-slot-rules", "cross-slot A/B scripts where slot rules are on: must fail loudly with CROSSSLOT", check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: cross, MinOps: 1}))
	ctl = harness.Premise(ctl, allCrossSlot(cross), "the scripts did not all fail with CROSSSLOT")
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}

// crossSlotHistory runs acquire+lookup with phases' scripts on the
// single-shard node (slot rules on) and records them like fleet calls.
func crossSlotHistory(ctx context.Context, phases []fencing.Phase, n int) []history.MigrationOp {
	GinkgoHelper()
	pool := harness.Pool(ctx, cfg.Backends[0], single)
	clock := traffic.ClockOf(ctx)
	rng := cfg.Rand("fencing-migration/cross-slot")
	var out []history.MigrationOp
	for _, p := range phases {
		dir := fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(p), LeaseTTL: leaseTTL})
		for _, s := range harness.Sessions(rng, "slot-rules", n) {
			op := history.MigrationOp{Pod: "probe", Phase: string(p), FencingOp: history.FencingOp{Session: s.String(), Kind: history.OpAcquire, Owner: "probe", Call: clock.Now()}}
			res, err := dir.Acquire(ctx, s, "probe")
			op.Return, op.OK, op.Gen = clock.Now(), res.OK, res.Generation
			if err != nil {
				op.Unknown, op.ErrKind, op.Err = true, traffic.ErrKind(err), err.Error()
			}
			out = append(out, op)
		}
	}
	return out
}

func allCrossSlot(h []history.MigrationOp) bool {
	for _, op := range h {
		if op.ErrKind != "CROSSSLOT" {
			return false
		}
	}
	return len(h) > 0
}
