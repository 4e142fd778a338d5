package fencingfailover_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingfailover/judge"
	"github.com/slotgate/slotgate/runenv"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Production's lease protocol, unscaled (spec 000 §The Fencing Migration:
// reliable.rs, audio/join.rs renew every 10 s against a 30 s TTL): whether
// a failover costs live leases depends on the store's real failure
// detection, which does not scale with the lease (an election takes its
// own second or two), so it is asked at production timing only.
const (
	prodLeaseTTL = 30 * time.Second
	// shortLeaseTTL is the variant's: a lease whose TTL − renew (6 s) is
	// shorter than any failover at production timing.
	shortLeaseTTL = 9 * time.Second
)

var _ = Describe("fencing-failover lease survival", func() {
	if harness.TimingFromEnv() != runenv.TimingProduction {
		return // a question for the servers' own timing (run --timing production)
	}
	for _, b := range harness.BackendsFromEnv() {
		for _, kind := range []string{"replicated", "cluster"} {
			harness.Emit(harness.Scenario{
				Name: "fencing-failover/lease-survival/" + kind + "/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "a kill failover at the servers' production timing costs no live lease renewed every 10 s against a 30 s TTL (000 §The Fencing Migration, renew cadence; §Problem Statement)",
				Run: harness.Requires(func() error {
					if kind == "cluster" {
						return nil
					}
					return replicatedAvailable()
				}, func(ctx SpecContext) report.Check {
					t := replicated
					if kind == "cluster" {
						t = cluster
					}
					return leaseSurvival(ctx, t, b)
				}),
			})
		}
	}
})

// leaseSurvival (errors column: a lost lease is loud, its pod is told)
// holds leases through one kill failover with two fleets at
// once: production's TTL (the check) and a TTL shorter than the failover
// (the variant), both in the durability mode, so only expiry loses a lease.
func leaseSurvival(ctx SpecContext, t *fixtures.Topology, b client.Backend) report.Check {
	name := "fencing-failover/lease-survival/" + kindOf(t) + "/" + string(b)
	rng := cfg.Rand(name)
	clock := traffic.ClockOf(ctx)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	fleetOf := func(label string, ttl time.Duration) *traffic.Fleet {
		// A pod retries a renew that went unanswered every second while its
		// lease has TTL left, as a relay that tolerates a failed renew does.
		o := traffic.FleetOptions{Backend: b, Pods: 3, Reliable: harness.Sessions(rng, label, 24), TTL: ttl, Acquires: 6, RenewRetry: time.Second,
			Set: cfg.ScriptSet(), Seed: rng.Uint64(), Durability: fencing.Durability{Replicas: max(1, t.Spec.Replicas), Timeout: waitTimeout}}
		if t.Spec.IsCluster() {
			o.Cluster = t.Addrs()
		} else {
			po := poolOptions(b, t, "")
			o.Pool = &po
		}
		f, err := traffic.NewFleet(runCtx, o, clock, fencing.C)
		Expect(err).NotTo(HaveOccurred(), "%s: start the %s fleet", name, label)
		return f
	}
	prod, short := fleetOf("prod", prodLeaseTTL), fleetOf("short", shortLeaseTTL)
	began := clock.Now()
	By(fmt.Sprintf("%s: leases held for one renew round", name))
	sleepCtx(ctx, prodLeaseTTL/3+2*time.Second)
	var f fault.Fault = fault.SentinelFailover{Mode: fault.SentinelKill}
	if t.Spec.IsCluster() {
		f = fault.Failover{Shard: 0, Mode: fault.FailoverKill}
	}
	By(fmt.Sprintf("%s: %s at %s", name, f.Name(), cfg.Timing))
	w, err := fault.Apply(ctx, t, f)
	harness.MustConfirm(err, cfg.Seed)
	if sf, ok := f.(fault.SentinelFailover); ok {
		Expect(sf.Heal(ctx, t, w)).To(Succeed())
	} else {
		Expect(restartNode(ctx, t, oldPrimary(w))).To(Succeed())
	}
	By(fmt.Sprintf("%s: one lease TTL after the failover, for every lease's fate", name))
	sleepCtx(ctx, prodLeaseTTL+2*time.Second)
	cancel()
	prod.Stop()
	short.Stop()
	windows := faultsSince(ctx, began)
	prodOps, shortOps := prod.History(), short.History()
	result := judge.LeasesKeptAcrossFailover.Judge(judge.LeaseRun{Ops: prodOps, Windows: windows, TTL: prodLeaseTTL, Slack: deploySlack})
	variant := judge.LeasesKeptAcrossFailover.Judge(judge.LeaseRun{Ops: shortOps, Windows: windows, TTL: shortLeaseTTL, Slack: deploySlack})
	ev := harness.Evidence(cfg, t, nil)
	ev.Faults = harness.Faults(ctx)
	downAfter, _ := t.SentinelTiming()
	ev.Observed = append(ev.Observed, fmt.Sprintf("lease TTL %v, renew every %v; the servers at %s timing (cluster-node-timeout %v, Sentinel down-after %v)",
		prodLeaseTTL, prodLeaseTTL/3, cfg.Timing, t.NodeTimeout(), downAfter))
	for _, w := range windows {
		session, halt := slowestResume(prodOps, w)
		ev.Observed = append(ev.Observed, fmt.Sprintf("halt: %s %s: of the sessions it stalled, the slowest (%s) was answered again %v after the fault began (halt budget %v)",
			w.Fault, w.Target, session, halt.Round(time.Millisecond), cfg.HaltBudget.Pool))
		ev.Metrics = map[string]float64{"halt_seconds": halt.Seconds(), "fault_seconds": (w.End - w.Start).Seconds()}
	}
	for _, line := range variant.Observed {
		ev.Observed = append(ev.Observed, fmt.Sprintf("TTL %v (variant): %s", shortLeaseTTL, line))
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("lease-shorter-than-failover", fmt.Sprintf("a %v lease renewed every %v: what a renewed lease has left (%v) is shorter than the failover, so it lapses while the directory cannot answer", shortLeaseTTL, shortLeaseTTL/3, shortLeaseTTL-shortLeaseTTL/3), variant),
	)
}

// slowestResume is, over the held sessions the outage reached (a renew
// called inside w went unanswered), the longest time from w's start to the
// session's first answered renew after that: the halt of the failed shard
// as its lease holders saw it (a directory-wide gap hides it, the other
// shards answering throughout; a session nobody holds is touched only by
// the next random acquire).
func slowestResume(ops []history.MigrationOp, w history.FaultWindow) (session string, halt time.Duration) {
	stalled := map[string]time.Duration{} // session → its first unanswered call inside w
	for _, op := range ops {
		if op.Kind == history.OpRenew && op.Unknown && op.Call >= w.Start && op.Call <= w.End {
			if at, ok := stalled[op.Session]; !ok || op.Call < at {
				stalled[op.Session] = op.Call
			}
		}
	}
	resumed := map[string]time.Duration{}
	for _, op := range ops {
		from, ok := stalled[op.Session]
		if !ok || op.Kind != history.OpRenew || op.Unknown || op.Call < from {
			continue
		}
		if at, seen := resumed[op.Session]; !seen || op.Return < at {
			resumed[op.Session] = op.Return
		}
	}
	for s := range stalled {
		at, ok := resumed[s]
		if !ok {
			at = w.End // never answered again: at least the window
		}
		if d := at - w.Start; d > halt || session == "" || (d == halt && s < session) {
			session, halt = s, d
		}
	}
	return session, halt
}
