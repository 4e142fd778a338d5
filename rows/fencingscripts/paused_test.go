package fencingscripts_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The paused pod on the C scripts (spec 000 §Safety theorems; §Per-phase
// operation table, C): a relay pod frozen past its lease TTL resumes with
// what it believed and keeps presenting frames and renewing.
var _ = Describe("fencing-scripts paused pod", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "fencing-scripts/paused-pod/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "a pod paused past its lease TTL and resumed on stale beliefs: every stale frame refused by the fence; no delayed renew or release of an old generation takes effect — on another owner's lease nor on the pod's own newer lease (000 §Safety theorems, §Per-phase operation table)",
			Run:  func(ctx SpecContext) report.Check { return pausedPod(ctx, b) },
		})
	}
})

// Time scale of the paused-pod runs: renew = TTL/3 as in production
// (10 s / 30 s), the pause 1.4 TTL.
const (
	pauseTTL   = 300 * time.Millisecond
	pauseSlack = 20 * time.Millisecond
)

// pausedRun is one fleet of C pods on the cluster with one pod paused.
type pausedRun struct {
	history []history.MigrationOp
	pauses  []history.PodPause
	errs    int
}

func runPaused(ctx context.Context, b client.Backend, name string, scripts func(fencing.Phase) fencing.Scripts) pausedRun {
	GinkgoHelper()
	rng := cfg.Rand(name)
	pods, n := 5, 24
	if cfg.Profile == harness.ProfileFull {
		pods, n = 6, 60
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	clock := traffic.ClockOf(ctx)
	fleet, err := traffic.NewFleet(runCtx, traffic.FleetOptions{
		Cluster: cluster.Addrs(), Backend: b, Pods: pods,
		Reliable: harness.Sessions(rng, "paused-reliable", n), Huddle: harness.Sessions(rng, "paused-huddle", n),
		TTL: pauseTTL, Acquires: 2, ReleaseP: 0.2, Scripts: scripts, Set: cfg.ScriptSet(), Seed: rng.Uint64(),
	}, clock, fencing.C)
	Expect(err).NotTo(HaveOccurred())
	sleep := func(d time.Duration) {
		select {
		case <-runCtx.Done():
		case <-time.After(d):
		}
	}
	pauses := 1
	if cfg.Profile == harness.ProfileFull {
		pauses = 3
	}
	sleep(4 * pauseTTL / 3)
	for i := range pauses { // two pods frozen together each time
		var frozen []string
		for _, slot := range []int{(2 * i) % pods, (2*i + 1) % pods} {
			pod, err := fleet.Freeze(slot)
			Expect(err).NotTo(HaveOccurred())
			frozen = append(frozen, pod)
		}
		sleep(pauseTTL * 7 / 5)
		for j, pod := range frozen {
			Expect(fleet.Thaw(pod, fmt.Sprintf("C#%d", 2*i+j+1), traffic.ResumeOptions{Reacquire: 0.75, Release: 0.5, Ticks: 2, Seed: rng.Uint64()})).To(Succeed())
		}
		sleep(pauseTTL)
	}
	fleet.Stop()
	out := pausedRun{history: fleet.History(), pauses: fleet.Pauses()}
	for _, op := range out.history {
		if op.ErrKind != "" {
			out.errs++
		}
	}
	return out
}

func pausedPod(ctx SpecContext, b client.Backend) report.Check {
	name := "fencing-scripts/paused-pod/" + string(b)
	By(fmt.Sprintf("C pods on %s, TTL %v renew %v; two pods frozen %v, then resumed on their stale beliefs", cluster.Spec, pauseTTL, pauseTTL/3, pauseTTL*7/5))
	r := runPaused(ctx, b, name, nil)
	ev := harness.Evidence(cfg, cluster, nil)
	result := check.All("paused-pod",
		check.PausedPodsFencedCheck.Judge(check.PausedPodsFencedInput{Ops: r.history, Pauses: r.pauses, TTL: pauseTTL, Slack: pauseSlack}),
		check.MigrationSingleAuthorityCheck.Judge(check.MigrationSingleAuthorityInput{Ops: r.history, TTL: pauseTTL, Slack: pauseSlack}),
	)
	ev.Metrics = pauseMetrics(r.history, r.pauses)
	ev.Metrics["errors"] = float64(r.errs)
	ev.Observed = append(ev.Observed, "errors (not scored here): "+check.MigrationErrorsCheck.Judge(check.MigrationErrorsInput{Ops: r.history, MinOps: 1}).Message)
	var controls []report.Control
	for _, m := range fencing.PauseMutants {
		By("negative control: mutant " + string(m))
		scripts, err := fencing.WithPauseMutant(m)
		Expect(err).NotTo(HaveOccurred())
		mr := runPaused(ctx, b, name+"/"+string(m), func(fencing.Phase) fencing.Scripts { return scripts })
		res := check.PausedPodsFencedCheck.Judge(check.PausedPodsFencedInput{Ops: mr.history, Pauses: mr.pauses, TTL: pauseTTL, Slack: pauseSlack})
		controls = append(controls, harness.Variant(string(m), pauseMutantWhy[m], res))
		fmt.Fprintf(GinkgoWriter, "%s: control %s: %s %s\n", name, m, res.Status, res.Message)
		if res.Counterexample != "" {
			ev.Observed = append(ev.Observed, fmt.Sprintf("%s counterexample:\n%s", m, res.Counterexample))
		}
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

var pauseMutantWhy = map[fencing.Mutant]string{
	fencing.MutantRenewIgnoresGeneration:   "renew guarded by owner only: the paused pod's delayed renew of its old generation extends the lease it re-acquired since",
	fencing.MutantReleaseIgnoresGeneration: "release guarded by owner only: the paused pod's delayed release of its old generation frees the lease it re-acquired since",
	fencing.MutantFenceOffByOne:            "the fence as a bare generation comparison off by one (stale only below counter − 1): the paused pod's superseded frames pass",
}

// pauseMetrics sums the paused pods' figures for the report.
func pauseMetrics(ops []history.MigrationOp, pauses []history.PodPause) map[string]float64 {
	m := map[string]float64{"operations": float64(len(ops)), "pauses": float64(len(pauses))}
	for _, t := range check.TallyPauses(ops, pauses, pauseTTL, pauseSlack) {
		m["stale_frames_presented"] += float64(t.Frames)
		m["stale_frames_refused"] += float64(t.FramesRefused)
		m["stale_renews"] += float64(t.Renews)
		m["stale_renews_refused"] += float64(t.RenewsRefused)
		m["stale_releases"] += float64(t.Releases)
		m["stale_releases_refused"] += float64(t.ReleasesRefused)
		m["own_newer_lease_renews"] += float64(t.SelfRenews)
		m["own_newer_lease_releases"] += float64(t.SelfReleases)
	}
	return m
}
