package fencingfailover_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingfailover/judge"
	"github.com/slotgate/slotgate/rows/fencingfailover/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The staged deploy's time scale: production renews every 10 s against a
// 30 s TTL; the deploy keeps the 1:3 ratio at 600 ms, as fencing-migration
// does. A Sentinel failover (down-after 1 s) outlasts it: every lease of
// the fleet lapses in each outage, and the pods take them again after it.
const (
	deployTTL   = 600 * time.Millisecond
	deploySlack = 20 * time.Millisecond
)

var _ = Describe("fencing-failover migration", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "fencing-failover/migration/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "the staged O→A→B→backfill→drain→C deploy keeps T1 and T2 across Sentinel failovers inside each phase, the backfill and the drain, durability mode on (000 §The Fencing Migration; §Safety theorems; §Problem Statement)",
			Run:  harness.Requires(replicatedAvailable, func(ctx SpecContext) report.Check { return deployVerdict(ctx, deployRuns.Get(ctx, b)) }),
		})
	}
})

var deployRuns = harness.NewOnce(func(ctx SpecContext, b client.Backend) deployRun {
	return deployAcrossFailovers(ctx, replicated, b)
})

// aimedFault is one failover of a deploy plan and the step it is injected
// inside.
type aimedFault struct {
	step string
	mode fault.SentinelMode
}

// deployFaults is the plan's failover per step. Smoke fails the primary
// over inside the A rollout (paused past down-after: it answers its queued
// calls when resumed), inside the backfill (cut from its replica and the
// Sentinels while the operator still reaches it: the split brain) and
// inside the C gate's drain (killed); full adds one inside O, a lagged
// kill inside B, a SENTINEL FAILOVER inside C, and a cut inside the C→B
// rollback and its second backfill.
//
// The variant's smoke deploy keeps only the cut inside the backfill, where
// the scripts as written lose what the split-brain primary acknowledged;
// full runs it under the whole plan.
func deployFaults(variant bool) map[string]fault.SentinelMode {
	if variant && cfg.Profile != harness.ProfileFull {
		return map[string]fault.SentinelMode{"backfill": fault.SentinelCut}
	}
	plan := map[string]fault.SentinelMode{
		"A rollout": fault.SentinelPause,
		"backfill":  fault.SentinelCut,
		"drain":     fault.SentinelKill,
	}
	if cfg.Profile == harness.ProfileFull {
		plan["O"] = fault.SentinelKill
		plan["B"] = fault.SentinelLagKill
		plan["C"] = fault.SentinelManual
		plan["rollback to B"] = fault.SentinelPause
		plan["backfill again"] = fault.SentinelCut
	}
	return plan
}

// deployRun is the deploy run twice on one replicated topology: with the
// durability mode on (the check) and with the spec's scripts as written
// (the variant), each under the same plan of failovers.
type deployRun struct {
	backend client.Backend
	ev      report.Evidence
	clock   *history.Clock
	faults  []report.FaultWindow
	durable deployed
	plain   deployed
}

// deployed is one staged deploy's record.
type deployed struct {
	ops     []history.MigrationOp
	samples []history.KeyspaceSample
	windows []history.FaultWindow
	aims    []judge.Aim
	steps   []traffic.Step
	// notReplicated counts the pods' calls the durability mode reported
	// unknown (their WAIT came back short).
	notReplicated int64
	kills         int
	// err is the plan's error: a step the gate never allowed, or a fault
	// the harness could not inject.
	err error
}

func deployAcrossFailovers(ctx SpecContext, t *fixtures.Topology, b client.Backend) deployRun {
	r := deployRun{backend: b, clock: traffic.ClockOf(ctx)}
	r.ev = harness.Evidence(cfg, t, failoverPool(ctx, b, t, "slotgate-evidence"))
	if t.Spec.Replicas == 0 {
		return r // the premise check names it
	}
	name := "fencing-failover/migration/" + string(b)
	durability := fencing.Durability{Replicas: t.Spec.Replicas, Timeout: waitTimeout}
	By("the staged deploy with the durability mode on, failing the primary over inside its steps")
	r.durable = deploy(ctx, t, b, name+"/durable", durability)
	Expect(t.Reset(ctx)).To(Succeed())
	By("the same deploy with the spec's scripts as written (durability off)")
	r.plain = deploy(ctx, t, b, name+"/plain", fencing.Durability{})
	r.faults = harness.Faults(ctx)
	return r
}

// deploy runs the staged deploy once on t: a pod fleet behind the
// Sentinels, the atomic observer, seeded pod kills, and the O→A→B→
// backfill→drain→C plan through the Deployment Gate with a failover
// injected inside each step deployFaults names.
func deploy(ctx context.Context, t *fixtures.Topology, b client.Backend, name string, durability fencing.Durability) deployed {
	GinkgoHelper()
	rng := cfg.Rand(name)
	sessions, pods, hold := 120, 4, 400*time.Millisecond
	if cfg.Profile == harness.ProfileFull {
		sessions, pods, hold = 240, 6, 800*time.Millisecond
	}
	reliable := harness.Sessions(rng, "tunnel", sessions/2)
	huddle := harness.Sessions(rng, "huddle", sessions-sessions/2)
	// Cold sessions ended before the deploy: only the backfill carries
	// their counters into the new keyspace (no pod acquires them in B,
	// where an acquire merges both counters itself).
	cold := harness.Sessions(rng, "cold", sessions/3)
	clock := traffic.ClockOf(ctx)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	podOpts := poolOptions(b, t, "")
	fleet, err := traffic.NewFleet(runCtx, traffic.FleetOptions{
		Pool: &podOpts, Backend: b, Pods: pods, Reliable: reliable, Huddle: huddle, TTL: deployTTL,
		Acquires: 6, ReleaseP: 0.3, Set: cfg.ScriptSet(), Seed: rng.Uint64(), Durability: durability,
	}, clock, fencing.O)
	Expect(err).NotTo(HaveOccurred(), "%s: start the fleet", name)
	obs := traffic.StartObserver(runCtx, failoverPool(ctx, b, t, "slotgate-observer"), fleet, clock, append(reliable, huddle...), 10*time.Millisecond)
	op := &traffic.Operator{Fleet: fleet, Gate: gate.New(gate.Options{}), Admin: failoverPool(ctx, b, t, "slotgate-operator"), Clock: clock,
		Durability: durability, Retry: true, Roll: 50 * time.Millisecond, Poll: 20 * time.Millisecond, Timeout: 45 * time.Second,
		Log: func(f string, a ...any) { fmt.Fprintf(GinkgoWriter, name+": "+f+"\n", a...) }}
	killsDone := make(chan struct{})
	go func() { // seeded pod kills, as the fencing-migration row's
		defer close(killsDone)
		krng := cfg.Rand(name + "/kills")
		for {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(175*time.Millisecond + time.Duration(krng.Int64N(int64(350*time.Millisecond)))):
			}
			_ = fleet.Kill(krng.IntN(fleet.Size()))
		}
	}()
	d := deployed{}
	admin := op.Admin
	seeded := workload.SeedSessions(ctx, fencing.New(admin, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.O), LeaseTTL: deployTTL, Durability: durability}), clock, cold)
	faults := deployFaults(!durability.On())
	began := clock.Now()
	// during runs act with the step's failover (if the plan has one): the
	// quarantine is waited out first and act starts as the fault is
	// injected (fault.Injecting), so the failover begins as the step does.
	during := func(step string, act func() error) error {
		mode, ok := faults[step]
		if !ok {
			return act()
		}
		f := fault.SentinelFailover{Mode: mode}
		if err := f.Available(t); err != nil {
			// A mode the provider cannot inject (lag-kill in containers):
			// the step runs without a fault rather than voiding the deploy.
			GinkgoWriter.Printf("fault %s left out of %s on %s: %v\n", f.Name(), step, t.Spec, err)
			return act()
		}
		if err := fault.WaitVoteQuarantine(ctx, t, 0); err != nil {
			return err
		}
		injecting, injected := make(chan struct{}), make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			w, err := fault.Apply(ctx, t, f, fault.Injecting(func() { close(injecting) }))
			if err == nil {
				err = f.Heal(ctx, t, w)
			}
			injected <- err
		}()
		select {
		case <-injecting:
		case err := <-injected: // the fault could not start: the step is not tried under it
			return err
		}
		aim := judge.Aim{Step: step, Start: clock.Now()}
		err := act()
		aim.End = clock.Now()
		d.aims = append(d.aims, aim)
		return errors.Join(err, <-injected)
	}
	holdFor := func(dur time.Duration) func() error {
		return func() error { sleepCtx(ctx, dur); return nil }
	}
	rolled := func(done <-chan struct{}, err error) error {
		if err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		case <-runCtx.Done():
			return runCtx.Err()
		}
	}
	advance := func(to fencing.Phase) func() error {
		return func() error { return rolled(op.Advance(runCtx, to)) }
	}
	rollback := func(to fencing.Phase) func() error {
		return func() error { return rolled(op.Rollback(runCtx, to)) }
	}
	backfill := func() error { _, err := op.Backfill(runCtx); return err }
	type planStep struct {
		step string
		act  func() error
	}
	plan := []planStep{
		{"O", holdFor(hold)},
		{"A rollout", advance(fencing.A)},
		{"A", holdFor(deployTTL + hold)},
		{"B rollout", advance(fencing.B)},
		{"B", holdFor(hold)},
		{"backfill", backfill},
		{"drain", advance(fencing.C)}, // the C gate waits for the old keyspace to drain
		{"C", holdFor(hold)},
	}
	if cfg.Profile == harness.ProfileFull {
		plan = append(plan,
			planStep{"rollback to B", rollback(fencing.B)},
			planStep{"backfill again", backfill},
			planStep{"drain again", advance(fencing.C)},
			planStep{"C again", holdFor(hold)},
		)
	}
	for _, s := range plan {
		By(fmt.Sprintf("%s: %s", name, s.step))
		if d.err = during(s.step, s.act); d.err != nil {
			d.err = fmt.Errorf("%s: %w", s.step, d.err)
			break
		}
	}
	cancel()
	<-killsDone
	fleet.Stop()
	d.samples, _ = obs.Stop()
	// The audit: every session's counter read back on the healed topology
	// through C's scripts, where every plan ends.
	audit := traffic.ReadBackGenerations(ctx, fencing.New(admin, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: deployTTL}), clock, append(append(append([]fencing.Session(nil), reliable...), huddle...), cold...))
	d.ops = append(append(append(seeded, fleet.History()...), op.Merges...), audit...)
	d.steps, d.kills = op.Steps, fleet.Kills()
	d.windows = faultsSince(ctx, began)
	for _, o := range d.ops {
		if o.Unknown && strings.Contains(o.Err, client.ErrNotReplicated.Error()) {
			d.notReplicated++
		}
	}
	fmt.Fprintf(GinkgoWriter, "%s: %d calls, %d kills, %d faults, steps %v\n", name, len(d.ops), d.kills, len(d.windows), d.steps)
	harness.MustConfirm(d.err, cfg.Seed)
	Expect(d.err).NotTo(HaveOccurred(), "%s: the deploy could not complete through the gate", name)
	return d
}

func deployVerdict(ctx SpecContext, r deployRun) report.Check {
	harness.UseClock(ctx, r.clock)
	verdict := func(d deployed) check.Result {
		return judge.MigrationAcrossFailover.Judge(judge.DeployRun{Ops: d.ops, Samples: d.samples, Windows: d.windows, Premise: judge.MigrationFailoverPremise{
			TTL: deployTTL, Slack: deploySlack, MinCalledInside: 1, MinSamples: 20, Aims: d.aims}})
	}
	result, plain := verdict(r.durable), verdict(r.plain)
	ev := r.ev
	ev.Faults = r.faults
	ev.Metrics = map[string]float64{
		"durable_calls": float64(len(r.durable.ops)), "plain_calls": float64(len(r.plain.ops)),
		"durable_faults": float64(len(r.durable.windows)), "durable_not_replicated": float64(r.durable.notReplicated),
		"pod_kills": float64(r.durable.kills + r.plain.kills),
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("durability mode: WAIT %d replica(s), %v; %d calls reported unknown because the WAIT came back short", replicated.Spec.Replicas, waitTimeout, r.durable.notReplicated))
	for _, s := range r.durable.steps {
		ev.Observed = append(ev.Observed, "gate step: "+s.String())
	}
	for _, line := range plain.Observed {
		ev.Observed = append(ev.Observed, "scripts as written (durability off): "+line)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("durability-off", "the staged deploy on the spec's scripts as written: a write the primary acknowledged is lost when the Sentinels promote a replica that never had it — a generation issued twice, a lease gone, a backfill undone", plain),
	)
}

// faultsSince is the scenario's fault windows that began at or after from
// (a run's own, when scenarios share the history's clock).
func faultsSince(ctx context.Context, from time.Duration) []history.FaultWindow {
	var out []history.FaultWindow
	for _, w := range history.From(ctx).Faults() {
		if w.Start >= from {
			out = append(out, w)
		}
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
