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
	"github.com/slotgate/slotgate/suites/harness"
)

// slotRules is T3 (spec 000 §Safety theorems): a deploy asks for the
// compatible door at every stage; the gate must refuse it until the fleet is
// fully C, backfilled and drained, and the scripts that run after the door
// (here: on a single-shard cluster-enabled node, where slot rules are on)
// must run clean. M9 — the door opened without the fleet fully on C — is
// loud, not silent: the A/B scripts meet slot rules as CROSSSLOT, so it is a
// negative control of this errors-column check.
func slotRules(ctx SpecContext) report.Check {
	m9 := gate.New(gate.Options{Mutant: fencing.M9})
	var doors []string
	premature := 0
	var m9Phases map[string]fencing.Phase
	tryDoor := func(ctx context.Context, r *staged, stage string) {
		obs, err := r.op.Observe(ctx)
		if err != nil {
			doors = append(doors, stage+": observe failed: "+err.Error())
			premature++
			return
		}
		if err := r.op.Gate.EnterCompatible(obs); err != nil {
			doors = append(doors, fmt.Sprintf("%s: refused (%s)", stage, gate.ReasonOf(err)))
		} else {
			premature++
			doors = append(doors, stage+": door OPENED")
		}
		if m9Phases == nil && m9.Mode() == gate.Disabled && m9.EnterCompatible(obs) == nil && obs.Pods != nil {
			for _, p := range obs.Pods {
				if p != fencing.C {
					m9Phases = obs.Pods // the M9 gate opened the door with a non-C pod live
					break
				}
			}
		}
	}
	follow := func(ctx context.Context, r *staged, to fencing.Phase) { // the M9 gate walks the same deploy
		obs, _ := r.op.Observe(ctx)
		_ = m9.Advance(obs, to)
	}
	plan := func(ctx context.Context, r *staged) error {
		r.hold(ctx, 300*time.Millisecond)
		tryDoor(ctx, r, "O")
		for _, p := range []fencing.Phase{fencing.A, fencing.B} {
			follow(ctx, r, p)
			if err := r.advance(ctx, p); err != nil {
				return err
			}
			r.hold(ctx, 200*time.Millisecond)
			tryDoor(ctx, r, "full-"+string(p))
		}
		if _, err := r.op.Backfill(ctx); err != nil {
			return err
		}
		tryDoor(ctx, r, "full-B+backfill")
		if err := r.advance(ctx, fencing.C); err != nil {
			return err
		}
		return r.op.EnterCompatible(ctx)
	}
	sz := scale()
	By("deploy O→A→B→backfill→C, asking for the compatible door at every stage")
	r := stage(ctx, run{name: "fencing-migration/slot-rules", sessions: sz.mutantSessions / 2, pods: 3, plan: plan})
	ev := harness.Evidence(cfg, single, nil)
	ev.Observed = append(ev.Observed, "door requests: "+strings.Join(doors, "; "), fmt.Sprintf("door opened at %v with the fleet %v", r.op.Marks["enter compatible"].Round(time.Millisecond), r.fleet.PhaseCounts()))

	Expect(single.Reset(ctx)).To(Succeed())
	By("after the door: the fleet's C scripts on the single-shard node (slot rules on)")
	after := crossSlotHistory(ctx, []fencing.Phase{fencing.C}, 16)
	result := check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: after, MinOps: 16})
	if premature > 0 {
		result = check.All("slot-rules", result, check.Result{Status: check.Fail, Message: fmt.Sprintf("the gate opened the compatible door %d times before the fleet was fully C, backfilled and drained", premature)})
	}

	By("negative control M9: the door opened with the fleet not on C, then its scripts under slot rules")
	var m9Run []history.MigrationOp
	if m9Phases != nil {
		seen := map[fencing.Phase]bool{}
		var phases []fencing.Phase
		for _, p := range m9Phases {
			if !seen[p] {
				seen[p] = true
				phases = append(phases, p)
			}
		}
		m9Run = crossSlotHistory(ctx, phases, 8)
		ev.Observed = append(ev.Observed, fmt.Sprintf("M9 opened the door with pods %v", m9Phases))
	}
	m9Ctl := harness.Variant("M9", "compatible entered without the fleet fully on C: A/B cross-slot scripts meet live slot rules (spec: trips Inv_SlotRulesSafe)", check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: m9Run, MinOps: 1}))
	m9Ctl = harness.Premise(m9Ctl, allCrossSlot(m9Run), "the scripts did not all fail with CROSSSLOT")
	ab := crossSlotHistory(ctx, []fencing.Phase{fencing.A, fencing.B}, 4)
	abCtl := harness.Variant("a-b-scripts", "the A and B scripts on a cluster-enabled node: cross-slot, refused with CROSSSLOT", check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: ab, MinOps: 1}))
	abCtl = harness.Premise(abCtl, allCrossSlot(ab), "the scripts did not all fail with CROSSSLOT")
	return harness.Check(row, report.ColumnErrors, "", result, ev, m9Ctl, abCtl)
}
