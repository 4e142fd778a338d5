package fencingmigration_test

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The classic fencing fault across the migration (spec 000 §Safety
// theorems; §Per-phase operation table): a relay pod frozen past its lease
// TTL in every phase O, A, B, C — and one frozen at full-A and resumed only
// after C, across the B→C drain — resumes on its stale beliefs and keeps
// presenting frames and renewing.
var _ = Describe("fencing-migration paused pod", func() {
	harness.Emit(harness.Scenario{
		Name: "fencing-migration/paused-pod", Row: row, Column: report.ColumnSilentlyWrong,
		Spec: "a pod paused past its lease TTL in each phase O/A/B/C and across the B→C drain, resumed on stale beliefs: every stale frame refused by the fence, no delayed renew/release of an old generation takes effect (another owner's lease or the pod's own newer one); T1/T2 hold (000 §Safety theorems, §Per-phase operation table)",
		Run:  pausedDeploy,
	})
})

// pauseFor is how long a paused pod stays frozen: past its lease TTL.
const pauseFor = leaseTTL * 3 / 2

func resumeOpts(r *staged) traffic.ResumeOptions {
	return traffic.ResumeOptions{Reacquire: 0.5, Release: 0.5, Ticks: 2, Seed: r.rng.Uint64()}
}

// pauseIn freezes the pods of slots together for pauseFor, resumes them,
// and lets them act.
func pauseIn(ctx context.Context, r *staged, label string, opts traffic.ResumeOptions, slots ...int) error {
	var pods []string
	for _, slot := range slots {
		pod, err := r.fleet.Freeze(slot)
		if err != nil {
			return err
		}
		pods = append(pods, pod)
	}
	r.hold(ctx, pauseFor)
	for _, pod := range pods {
		if err := r.fleet.Thaw(pod, label, opts); err != nil {
			return err
		}
	}
	r.hold(ctx, leaseTTL/2)
	return nil
}

// pausedPlan walks O→A→B→backfill→C through the gate with a pause in every
// phase, and two across the B→C drain: the pod of slot 2 frozen at full-A
// (holding A-era leases on the old keyspace: they drain by expiry while it
// is frozen) and the pod of slot 0 frozen at full-B (its leases on the new
// keyspace), both resumed only at full-C — the rollouts upgrade them in
// place while frozen, and they resume with renews, releases and frames
// composed by the A or B scripts at the generations of then. A held
// acquire is composed again with C's scripts (traffic.Fleet.call: the
// modelling choice under E1, where the process that composed it was
// replaced); an old-image acquire that does land after C is
// late-segment's.
func pausedPlan(ctx context.Context, r *staged) error {
	r.hold(ctx, leaseTTL)
	if err := pauseIn(ctx, r, "O", resumeOpts(r), 0); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.A); err != nil {
		return err
	}
	r.hold(ctx, leaseTTL/2)
	if err := pauseIn(ctx, r, "A", resumeOpts(r), 1); err != nil {
		return err
	}
	drainPod, err := r.fleet.Freeze(2)
	if err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.B); err != nil {
		return err
	}
	r.hold(ctx, leaseTTL/3)
	if err := pauseIn(ctx, r, "B", resumeOpts(r), 3); err != nil {
		return err
	}
	// A B pod frozen at full-B (its leases on the new keyspace), resumed
	// after the backfill, the drain and the rollout to C.
	bPod, err := r.fleet.Freeze(0)
	if err != nil {
		return err
	}
	frozeB := r.clock.Now()
	if _, err := r.op.Backfill(ctx); err != nil {
		return err
	}
	if err := r.advance(ctx, fencing.C); err != nil {
		return err
	}
	r.hold(ctx, pauseFor-(r.clock.Now()-frozeB))
	if err := r.fleet.Thaw(drainPod, "A→C (froze at full-A, across B and the B→C drain)", resumeOpts(r)); err != nil {
		return err
	}
	if err := r.fleet.Thaw(bPod, "B→C (froze at full-B, across the B→C drain)", resumeOpts(r)); err != nil {
		return err
	}
	r.hold(ctx, leaseTTL/2)
	return pauseIn(ctx, r, "C", resumeOpts(r), 4)
}

func pausedDeploy(ctx SpecContext) report.Check {
	sz := scale()
	By(fmt.Sprintf("staged deploy O→A→B→backfill→C, %d pods, a pod paused %v (TTL %v) in every phase and one across the B→C drain", 5, pauseFor, leaseTTL))
	r := stage(ctx, run{name: "fencing-migration/paused-pod", sessions: sz.mutantSessions, pods: 5, plan: pausedPlan})
	pauses := r.fleet.Pauses()
	fenced := check.PausedPodsFencedCheck.Judge(check.PausedPodsFencedInput{Ops: r.history, Pauses: pauses, TTL: leaseTTL, Slack: slack})
	result := check.All("fencing-migration-paused", fenced, invariants(r))
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed, summary(r)...)
	ev.Observed = append(ev.Observed, "errors (not scored here): "+check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: r.history, MinOps: 1}).Message)
	ev.Metrics = map[string]float64{"operations": float64(len(r.history)), "pauses": float64(len(pauses))}
	for _, t := range check.TallyPauses(r.history, pauses, leaseTTL, slack) {
		l := t.Pause.Label
		if i := strings.Index(l, " ("); i >= 0 { // A→C, B→C: across the drain
			l = "drain_" + strings.NewReplacer("→", "").Replace(l[:i])
		}
		ev.Metrics["stale_frames_presented_"+l] = float64(t.Frames)
		ev.Metrics["stale_frames_refused_"+l] = float64(t.FramesRefused)
		ev.Metrics["stale_renews_refused_"+l] = float64(t.RenewsRefused)
		ev.Metrics["stale_releases_refused_"+l] = float64(t.ReleasesRefused)
	}

	// Controls: the same pause on a fleet running a known-bad C script.
	var controls []report.Control
	for _, m := range fencing.PauseMutants {
		By("negative control: paused pod on C scripts with mutant " + string(m))
		h, p := pausedAtC(ctx, m, sz.mutantSessions/2, 4)
		res := check.PausedPodsFencedCheck.Judge(check.PausedPodsFencedInput{Ops: h, Pauses: p, TTL: leaseTTL, Slack: slack})
		controls = append(controls, harness.Variant(string(m), pauseMutantWhy[m], res))
		fmt.Fprintf(GinkgoWriter, "fencing-migration/paused-pod: control %s: %s %s\n", m, res.Status, res.Message)
		if res.Counterexample != "" {
			ev.Observed = append(ev.Observed, fmt.Sprintf("%s counterexample:\n%s", m, firstLines(res.Counterexample, 3)))
		}
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

// pausedAtC is a control's run: a fleet of C pods on the standalone node
// whose scripts carry mutant m (the rollout is not the point here, the
// pause is), two pods paused together past their TTL and resumed.
func pausedAtC(ctx context.Context, m fencing.Mutant, sessions, pods int) ([]history.MigrationOp, []history.PodPause) {
	GinkgoHelper()
	Expect(standalone.Reset(ctx)).To(Succeed())
	scripts, err := fencing.WithPauseMutant(m)
	Expect(err).NotTo(HaveOccurred())
	r := &staged{rng: cfg.Rand("fencing-migration/paused-pod/" + string(m)), clock: traffic.ClockOf(ctx)}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.fleet, err = traffic.NewFleet(runCtx, traffic.FleetOptions{
		Addr: standalone.Addrs()[0], Backend: cfg.Backends[0], Pods: pods,
		Reliable: harness.Sessions(r.rng, "tunnel", sessions/2), Huddle: harness.Sessions(r.rng, "huddle", sessions/2),
		TTL: leaseTTL, Acquires: 6, ReleaseP: 0.3, Scripts: func(fencing.Phase) fencing.Scripts { return scripts }, Set: cfg.ScriptSet(), Seed: r.rng.Uint64(),
	}, r.clock, fencing.C)
	Expect(err).NotTo(HaveOccurred())
	defer r.fleet.Stop()         // also when an assertion below fails (Stop is idempotent)
	r.hold(runCtx, leaseTTL*2/3) // two renew ticks of acquiring
	opts := resumeOpts(r)
	opts.Reacquire = 0.75
	Expect(pauseIn(runCtx, r, "C", opts, 0, 1)).To(Succeed())
	r.fleet.Stop()
	return r.fleet.History(), r.fleet.Pauses()
}

var pauseMutantWhy = map[fencing.Mutant]string{
	fencing.MutantRenewIgnoresGeneration:   "renew guarded by owner only: the paused pod's delayed renew of its old generation extends the lease it re-acquired since",
	fencing.MutantReleaseIgnoresGeneration: "release guarded by owner only: the paused pod's delayed release of its old generation frees the lease it re-acquired since",
	fencing.MutantFenceOffByOne:            "the fence as a bare generation comparison off by one (stale only below counter − 1): the paused pod's superseded frames pass",
}
