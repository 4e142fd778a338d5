package fencingmigration_test

import (
	"context"
	"fmt"
	"strings"
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

// The Deployment Gate's rollout rules against the real node (spec 000
// §Deployment Gate rules 2 and 4, §Safety theorems): each scenario drives
// the gate, and a gate with the rule switched off is its negative control.
var _ = Describe("fencing-migration rollout gate", func() {
	harness.Emit(
		harness.Scenario{
			Name: "fencing-migration/older-replicasets", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "rule 2(b): an A pod the A→B rollout replaced is still terminating (listed by the rollout, no phase gauge) and still takes sessions; the backfill and C wait until it is gone, so every generation it issued is carried into the counter C reads (000 §Deployment Gate rule 2(b), §Safety theorems T2)",
			Run:  olderReplicaSets,
		},
		harness.Scenario{
			Name: "fencing-migration/advance-mid-rollout", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "rule 2(a): B is asked while the O→A rollout still has O pods; the gate admits it only once every live pod reports A, so no O pod ever runs beside a B pod (000 §Deployment Gate rule 2(a), §Safety theorems T1)",
			Run:  advanceMidRollout,
		},
		harness.Scenario{
			Name: "fencing-migration/mode-doors", Row: row, Column: report.ColumnErrors,
			Spec: "the mode doors on the single-shard cluster node with a C fleet: no phase rollback in compatible, enabled one-way, phase and mode never in one step; a door opened wrongly brings A/B scripts under live slot rules (000 §Deployment Gate rule 4, §Safety theorems T3, A3)",
			Run:  modeDoors,
		},
	)
})

// olderGrace is the listed straggler's grace: long enough that a gate
// without rule 2(b) runs the backfill while it still takes sessions.
const olderGrace = 3 * leaseTTL

// olderPlan: O→A, hold; advance to B and, as the rollout starts, replace
// the last slot's A pod with a B pod, leaving the A pod terminating —
// listed by the rollout and still taking sessions — for olderGrace; then
// the backfill and C through the gate.
func olderPlan(ctx context.Context, r *staged) error {
	if err := r.backfillReplacing(ctx, leaseTTL, traffic.ReplaceOptions{Grace: olderGrace, Listed: true, Serving: true}); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.C); err != nil {
		return err
	}
	r.hold(ctx, leaseTTL)
	return nil
}

func olderReplicaSets(ctx SpecContext) report.Check {
	sz := scale()
	By(fmt.Sprintf("O→A→B with the replaced A pod terminating and serving for %v, backfill, C; every counter read back through C", olderGrace))
	r := stage(ctx, run{name: "fencing-migration/older-replicasets", sessions: sz.mutantSessions, pods: 5, cap: 3, grace: olderGrace, plan: olderPlan})
	result, observed := judgeOlder(ctx, r)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, observed...)
	ev.Metrics = metrics(r)

	By("negative control: the same deploy through a gate without rule 2(b)")
	vr := stage(ctx, run{name: "fencing-migration/older-replicasets/no-2b", sessions: sz.mutantSessions, pods: 5, cap: 3, grace: olderGrace, ignoreTerminating: true, plan: olderPlan})
	vResult, vObserved := judgeOlder(ctx, vr)
	ev.Observed = append(ev.Observed, variantObserved("gate without 2(b)", vResult, vObserved)...)
	ctl := harness.Variant("no-rule-2b", "the gate without rule 2(b) (impl/gate IgnoreTerminating, run against the node): a terminating A pod is invisible once off the gauges, so the backfill runs while it still issues into the old counter and C issues those generations again", vResult)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

// judgeOlder reads every session's counter back through C and judges the
// straggler's generations carried, with T1/T2 over the run.
func judgeOlder(ctx context.Context, r *staged) (check.Result, []string) {
	backfill, ok := r.step("backfill", 1)
	Expect(ok).To(BeTrue(), "%s: the deploy ran the backfill through the gate", r.name)
	admin := directPool(ctx, r.backend)
	audit := traffic.ReadBackGenerations(ctx, fencing.New(admin, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: leaseTTL}), r.clock, r.sessions)
	ops := append(append([]history.MigrationOp(nil), r.history...), audit...)
	carried := judge.StragglerIssuesCarried.Judge(judge.StragglerIssuesCarriedInput{Ops: ops, Stragglers: r.fleet.Stragglers(), BackfillAt: backfill.At})
	var out []string
	for _, s := range r.fleet.Stragglers() {
		n := 0
		for _, op := range r.history {
			if op.Pod == s.Pod && op.Kind == history.OpAcquire && op.OK && op.Call >= s.Left {
				n++
			}
		}
		out = append(out, fmt.Sprintf("straggler %s (phase %s, listed) left the gauges @%v, exited @%v; %d acquires while terminating", s.Pod, s.Phase, s.Left.Round(time.Millisecond), s.Gone.Round(time.Millisecond), n))
	}
	out = append(out, "backfill "+backfill.String(), "carried: "+carried.Message)
	return check.All("fencing-migration-older-replicasets", carried, invariants(r)), out
}

// midRolloutPlan: the O→A rollout at one pod per 250 ms, and B asked at
// once while O pods still run, then again every poll until the gate allows
// it; then a hold on B. B is asked of the gate alone: the operator's own
// wait for a refused fleet to clear (traffic.Operator) would hold the ask
// until every pod ran A and hide a weak gate rule.
func midRolloutPlan(ctx context.Context, r *staged) error {
	r.hold(ctx, leaseTTL/2)
	r.op.Roll = 250 * time.Millisecond
	if _, err := r.op.Advance(ctx, fencing.A); err != nil {
		return err
	}
	asked := r.clock.Now()
	for {
		obs, err := r.op.Observe(ctx)
		if err != nil {
			return err
		}
		err = r.op.Gate.Advance(obs, fencing.B)
		if err == nil {
			break
		}
		if gate.ReasonOf(err) != gate.ReasonFleetNotAtTarget {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.op.Poll):
		}
	}
	at := r.clock.Now()
	r.op.Steps = append(r.op.Steps, traffic.Step{Name: "advance to B", Asked: asked, At: at, Ended: at, Allowed: true})
	wait(ctx, r.fleet.RollTo(fencing.B, r.op.Roll))
	r.hold(ctx, leaseTTL)
	return nil
}

func advanceMidRollout(ctx SpecContext) report.Check {
	sz := scale()
	By("O→A rolling one pod per 250 ms, B asked at once")
	r := stage(ctx, run{name: "fencing-migration/advance-mid-rollout", sessions: sz.mutantSessions, pods: 5, plan: midRolloutPlan})
	result, observed := judgeMidRollout(r)
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, observed...)
	ev.Metrics = metrics(r)

	By("negative control: the same deploy through a gate that advances when most pods report the target")
	vr := stage(ctx, run{name: "fencing-migration/advance-mid-rollout/majority", sessions: sz.mutantSessions, pods: 5, advanceMajority: true, plan: midRolloutPlan})
	vResult, vObserved := judgeMidRollout(vr)
	ev.Observed = append(ev.Observed, variantObserved("majority gate", vResult, vObserved)...)
	ctl := harness.Variant("majority-advance", "rule 2(a) weakened to most pods on the target (impl/gate AdvanceMajority, run against the node): B starts while O pods still run, and O acquires over B's new-key leases", vResult)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

// judgeMidRollout: phases stayed adjacent in every observation of the
// plan, and T1/T2 held.
func judgeMidRollout(r *staged) (check.Result, []string) {
	b, ok := r.step("advance to B", 1)
	Expect(ok).To(BeTrue(), "%s: the deploy reached B through the gate", r.name)
	var samples []history.KeyspaceSample
	for _, s := range r.samples {
		if s.At <= r.planEnd { // the stopped fleet's pods stay in the gauges
			samples = append(samples, s)
		}
	}
	adjacent := judge.PhasesAdjacent.Judge(judge.PhasesAdjacentInput{Samples: samples, MinSamples: 20})
	ob := r.coexistence(fencing.O, fencing.B)
	var both time.Duration
	for _, st := range ob {
		both += st[1] - st[0]
	}
	out := []string{"B " + b.String(), fmt.Sprintf("O and B pods observed live together for %v", both.Round(time.Millisecond)), "phases: " + adjacent.Message}
	return check.All("fencing-migration-advance-mid-rollout", adjacent, invariants(r)), out
}

// doorRun drives one gate through the mode doors with a C fleet on the
// single-shard cluster node, where slot rules are on: the node models the
// store after the gate opened compatible, which a revert does not undo in
// the same instant and A3 never undoes from enabled. Every phase move the
// gate allows is rolled out on that node. It returns the fleet's calls and
// the gate's decisions.
func doorRun(ctx context.Context, door gate.DoorVariant) ([]history.MigrationOp, []judge.GateStep, []string) {
	GinkgoHelper()
	Expect(single.Reset(ctx)).To(Succeed())
	rng := cfg.Rand("fencing-migration/mode-doors/" + string(door))
	clock := traffic.ClockOf(ctx)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	fleet, err := traffic.NewFleet(runCtx, traffic.FleetOptions{Cluster: single.Addrs(), Backend: cfg.Backends[0], Pods: 3,
		Reliable: harness.Sessions(rng, "tunnel", 12), Huddle: harness.Sessions(rng, "huddle", 12),
		TTL: leaseTTL, Acquires: 2, ReleaseP: 0.3, Set: cfg.ScriptSet(), Seed: rng.Uint64()}, clock, fencing.C)
	Expect(err).NotTo(HaveOccurred())
	defer fleet.Stop()
	op := &traffic.Operator{Fleet: fleet, Admin: harness.Pool(ctx, cfg.Backends[0], single), Clock: clock}
	g := gate.Restore(gate.Options{Door: door}, gate.State{Target: fencing.C, Mode: gate.Disabled, Backfilled: true})
	var notes []string
	ask := func(what string, step func(gate.Observation) error) bool {
		obs, err := op.Observe(ctx)
		Expect(err).NotTo(HaveOccurred(), "observe the fleet and the node")
		err = step(obs)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: refused (%s)", what, gate.ReasonOf(err)))
			return false
		}
		notes = append(notes, what+": allowed")
		return true
	}
	roll := func(to fencing.Phase) {
		wait(ctx, fleet.RollTo(to, 50*time.Millisecond))
		time.Sleep(leaseTTL / 2) // a duration: the rolled pods' calls on the node, which the gate observes
	}
	time.Sleep(leaseTTL / 2) // a duration: the fleet's calls the first observation reads
	Expect(ask("enter compatible", g.EnterCompatible)).To(BeTrue(), "the C fleet opens the compatible door")
	if ask("rollback to B in compatible", func(o gate.Observation) error { return g.Rollback(o, fencing.B) }) {
		roll(fencing.B)
	}
	if g.Mode() == gate.Compatible {
		ask("enable", g.Enable)
	}
	if g.Mode() == gate.Enabled || door == gate.DoorRevertEnabled {
		ask("revert mode in "+string(g.Mode()), g.RevertMode)
		if prev, ok := g.Target().Prev(); ok && ask("rollback to "+string(prev)+" in "+string(g.Mode()), func(o gate.Observation) error { return g.Rollback(o, prev) }) {
			roll(prev)
		}
	}
	fleet.Stop()
	var steps []judge.GateStep
	for _, d := range g.Log() {
		steps = append(steps, judge.GateStep{Step: d.Step, MovePhase: strings.HasPrefix(d.Step, "advance to ") || strings.HasPrefix(d.Step, "rollback to "),
			Allowed: d.Allowed, From: string(d.From), To: string(d.To), ModeFrom: string(d.Mode), ModeTo: string(d.ModeAfter)})
	}
	return fleet.History(), steps, notes
}

func modeDoors(ctx SpecContext) report.Check {
	By("the correct gate at the mode doors, a C fleet on the single-shard cluster node")
	ops, steps, notes := doorRun(ctx, "")
	result := check.All("mode-doors", judge.GateModeDoors.Judge(steps), check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: ops, MinOps: 20}))
	ev := harness.Evidence(cfg, single, nil)
	ev.Observed = append(ev.Observed, "correct gate: "+strings.Join(notes, "; "), fmt.Sprintf("correct gate: %d fleet calls on the node", len(ops)))
	why := map[gate.DoorVariant]string{
		gate.DoorRollbackCompatible: "a phase rollback allowed in compatible: B scripts roll out under live slot rules",
		gate.DoorPhaseWithMode:      "a rollback in compatible that reverts the mode in the same step: the pods downgrade while the store still enforces slot rules",
		gate.DoorRevertEnabled:      "enabled reverted to disabled against A3: the gate then allows a rollback the store (still enabled) runs under slot rules",
	}
	var controls []report.Control
	for _, v := range []gate.DoorVariant{gate.DoorRollbackCompatible, gate.DoorPhaseWithMode, gate.DoorRevertEnabled} {
		By("negative control: a gate with the door " + string(v) + " open")
		vops, vsteps, vnotes := doorRun(ctx, v)
		doors := judge.GateModeDoors.Judge(vsteps)
		errs := check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: vops, MinOps: 20})
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %s; doors: %s; node: %s", v, strings.Join(vnotes, "; "), doors.Status, firstLines(errs.Message, 1)))
		controls = append(controls, harness.Variant(string(v), why[v]+" (impl/gate Door, run against the node)", check.All("mode-doors", doors, errs)))
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev, controls...)
}
