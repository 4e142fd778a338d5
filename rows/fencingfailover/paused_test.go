package fencingfailover_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The paused pod across a failover (spec 000 §Safety theorems; §Per-phase
// operation table, C; G4): relay pods on the C scripts frozen past their
// lease TTL while a primary of the cluster is cut off the bus and its
// replica promoted, then resumed on their stale beliefs — every stale frame
// must still be refused, no delayed renew or release of an old generation
// take effect, and the promotion must not have undone what the fence
// relies on.
var _ = Describe("fencing-failover paused pod", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "fencing-failover/paused-pod/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "pods paused past their lease TTL across a primary's failover (cut off the bus) and resumed on stale beliefs: every stale frame refused, no delayed renew or release takes effect, single authority and generations hold, durability mode on (000 §Safety theorems; §Per-phase operation table, C)",
			Run: harness.Requires(func() error { return fault.Partition{}.Available(cluster) },
				func(ctx SpecContext) report.Check { return pausedAcrossFailover(ctx, b) }),
		})
	}
})

// Time scale of the paused-pod runs: renew = TTL/3 as in production
// (10 s / 30 s); the pods stay frozen for the whole failover, well past
// the TTL.
const (
	pausedTTL   = 300 * time.Millisecond
	pausedSlack = 20 * time.Millisecond
)

// pausedFleet is one C-pod fleet with two pods frozen across the failover.
type pausedFleet struct {
	fleet  *traffic.Fleet
	frozen []string
}

func pausedAcrossFailover(ctx SpecContext, b client.Backend) report.Check {
	name := "fencing-failover/paused-pod/" + string(b)
	rng := cfg.Rand(name)
	clock := traffic.ClockOf(ctx)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The durable fleet (the check) and the spec's scripts as written (the
	// variant) run side by side on their own sessions through one failover.
	start := func(label string, durable bool) *pausedFleet {
		o := traffic.FleetOptions{Cluster: cluster.Addrs(), Backend: b, Pods: 3,
			Reliable: harness.Sessions(rng, label+"-reliable", 24), Huddle: harness.Sessions(rng, label+"-huddle", 24),
			TTL: pausedTTL, Acquires: 2, ReleaseP: 0.2, Set: cfg.ScriptSet(), Seed: rng.Uint64()}
		if durable {
			// Cap leaves sessions free across the failover, so a resumed
			// pod can re-acquire some of what it believed (the same-owner
			// case PausedPodsFenced needs) though the others ran on.
			o.Cap = 3
			o.Durability = fencing.Durability{Replicas: cluster.Spec.Replicas, Timeout: waitTimeout}
		} else {
			// The variant churns: what the cut-off primary acknowledged is
			// lost only where a session is taken again after the promotion.
			o.Acquires, o.ReleaseP = 6, 0.5
		}
		f, err := traffic.NewFleet(runCtx, o, clock, fencing.C)
		Expect(err).NotTo(HaveOccurred(), "%s: start the %s fleet", name, label)
		return &pausedFleet{fleet: f}
	}
	durable, plain := start("durable", true), start("plain", false)
	sleepCtx(ctx, 4*pausedTTL/3)
	for _, pf := range []*pausedFleet{durable, plain} {
		for _, slot := range []int{0, 1} {
			pod, err := pf.fleet.Freeze(slot)
			Expect(err).NotTo(HaveOccurred())
			pf.frozen = append(pf.frozen, pod)
		}
	}
	By(fmt.Sprintf("%s: two pods of each fleet frozen; shard 0's primary cut off the bus until its replica is promoted", name))
	began := clock.Now()
	_, err := fault.Apply(ctx, cluster, fault.Partition{Shard: 0})
	harness.MustConfirm(err, cfg.Seed)
	// The pods stay frozen a moment past the heal: they resume on the
	// healed cluster, when every client's slot map has the promotion.
	sleepCtx(ctx, 5*pausedTTL)
	for _, pf := range []*pausedFleet{durable, plain} {
		for j, pod := range pf.frozen {
			Expect(pf.fleet.Thaw(pod, fmt.Sprintf("C#%d", j+1), traffic.ResumeOptions{Reacquire: 0.75, Release: 0.5, Ticks: 2, Seed: rng.Uint64()})).To(Succeed())
		}
	}
	sleepCtx(ctx, 3*pausedTTL)
	cancel()
	durable.fleet.Stop()
	plain.fleet.Stop()
	windows := faultsSince(ctx, began)
	judge := func(pf *pausedFleet) check.Result {
		ops, pauses := pf.fleet.History(), pf.fleet.Pauses()
		return check.All("paused-pod-across-failover",
			check.PausedPodsFencedCheck.Judge(check.PausedPodsFencedInput{Ops: ops, Pauses: pauses, TTL: pausedTTL, Slack: pausedSlack}),
			check.MigrationSingleAuthorityCheck.Judge(check.MigrationSingleAuthorityInput{Ops: ops, TTL: pausedTTL, Slack: pausedSlack}),
			check.MigrationGenerationsCheck.Judge(ops),
		)
	}
	result, variant := judge(durable), judge(plain)
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Faults = harness.Faults(ctx)
	ev.Metrics = map[string]float64{"durable_operations": float64(len(durable.fleet.History())), "faults": float64(len(windows))}
	for _, w := range windows {
		ev.Observed = append(ev.Observed, fmt.Sprintf("fault %s %s for %v, the pods frozen throughout", w.Fault, w.Target, (w.End-w.Start).Round(time.Millisecond)))
	}
	for _, line := range variant.Observed {
		ev.Observed = append(ev.Observed, "scripts as written (durability off): "+line)
	}
	ev.Observed = append(ev.Observed, "scripts as written (durability off): "+string(variant.Status)+" — "+variant.Message)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("durability-off", "the spec's C scripts as written on a primary cut off the bus: what it acknowledged before the promotion is gone, so a resumed pod's stale generation can be issued again and pass the fence, or two pods hold one session", variant),
	)
}
