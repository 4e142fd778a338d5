package marconi_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Invalidator errors through a Redis outage (spec 002 §9
// marconi_invalidator_errors_total{hook,reason}): sessions past their TTL
// leave the expiry sweeper — the on_session_expired source — SessionStore
// confirmations to make while the tenant's node is cut off. Each failure
// must be counted; a sweeper that swallows them leaves the metric at 0
// while the hook is blind. The reference and that variant run side by side
// through the same cut.

const (
	invErrSessions = 4
	invErrTTL      = time.Second
	invErrSweep    = 100 * time.Millisecond
)

var _ = Describe("marconi-cache-lifecycle", Serial, func() {
	// Per backend: how an outage surfaces (a refused dial at once, or a
	// command held until its deadline) is the client library's.
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "marconi-cache-lifecycle/invalidator-errors-counted/" + string(b), Row: report.RowMarconiCacheLifecycle, Column: report.ColumnSilentlyWrong,
			Spec: "through a Redis outage of the tenant's node, every SessionStore failure of the on_session_expired source (the expiry sweeper) is counted in marconi_invalidator_errors_total{hook=on_session_expired} — at least one, no more than the failed commands seen at the client seam (002 §9, §5 KeyspaceReaper)",
			Run:  func(ctx SpecContext) report.Check { return runInvalidatorErrors(ctx, b) },
		})
	}
})

// failSeam counts the commands that failed off the hot path (the sweeper's)
// at a mesh's Redis client seam once armed. Before the outage the seam is
// not armed: registration's EVALSHA answered NOSCRIPT on a node whose
// script cache a reset emptied is a failed command too, and counting it
// let the outage end before the sweeper had met it.
type failSeam struct {
	client.Pool
	armed  atomic.Bool
	failed atomic.Int64
}

func (p *failSeam) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	reply, err := p.Pool.Do(ctx, cmd)
	if err != nil && p.armed.Load() && !marconi.IsHotPath(ctx) && !client.IsNoScript(err) {
		p.failed.Add(1)
	}
	return reply, err
}

func runInvalidatorErrors(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	type run struct {
		seam *failSeam
		env  *meshEnv
	}
	start := func(mutant marconi.Mutant, prefix string) run {
		seam := &failSeam{Pool: newPool(ctx, b, "marconi-"+prefix)}
		env := startMesh(ctx, marconi.Options{Pool: seam, Store: marconi.StoreOptions{TTL: invErrTTL, Prefix: prefix},
			Sink: marconi.NewMemorySink(), Mutant: mutant, SweepEvery: invErrSweep})
		Expect(env.mesh.Expiry()).To(Equal(marconi.ExpirySweeper))
		rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
		for i := range invErrSessions {
			_, err := rec.Register(ctx, marconi.Session{SessionID: fmt.Sprintf("%s-%d", prefix, i), Tenant: tenant, Project: prefix,
				Identity: fmt.Sprintf("i%d", i), Surface: "control"})
			Expect(err).NotTo(HaveOccurred())
		}
		return run{seam: seam, env: env}
	}
	errs := func(r run) float64 {
		return r.env.mesh.MetricSum("marconi_invalidator_errors_total", map[string]string{"hook": string(marconi.HookSessionExpired)})
	}
	By(fmt.Sprintf("%d sessions (TTL %v, no heartbeats) on the reference mesh and on one whose sweeper swallows its errors", invErrSessions, invErrTTL))
	ref, bad := start(marconi.MutantNone, "inverr"), start(marconi.MutantExpiryErrorsUncounted, "inverr-uncounted")
	// The sweepers meet the outage only once the sessions are past their
	// TTL: a command of another background task may fail first, and a heal
	// then would leave the sweepers untested (the reference's counter at 0,
	// judged a swallowed outage). Held past the TTL and three sweeps.
	sweepersDue := time.Now().Add(invErrTTL + 3*invErrSweep)
	refBase, badBase := errs(ref), errs(bad)
	ref.seam.armed.Store(true)
	bad.seam.armed.Store(true)

	owner, err := cluster.NodeForSlot(ctx, slot.Of("{"+tenant+"}"))
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("%s's link down until both sweepers met the outage (their sessions past TTL)", owner.Name()))
	wall := time.Now()
	owner.DisableProxy()
	DeferCleanup(owner.EnableProxy)
	Eventually(ctx, func() bool {
		return time.Now().After(sweepersDue) && ref.seam.failed.Load() > 0 && bad.seam.failed.Load() > 0
	}).
		WithTimeout(15*time.Second).WithPolling(20*time.Millisecond).Should(BeTrue(), "both sweepers' SessionStore reads failed")
	Expect(owner.EnableProxy()).To(Succeed())
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Faults = harness.Windows(fault.HoldSince(ctx, "link/down", owner.Name(), wall).End())
	By("healed: both sweepers confirm the expiries")
	expired := func(r run) bool {
		return r.env.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(marconi.HookSessionExpired)}) >= invErrSessions
	}
	Eventually(ctx, func() bool { return expired(ref) && expired(bad) }).
		WithTimeout(15*time.Second).WithPolling(20*time.Millisecond).Should(BeTrue(), "every session's expiry confirmed after the heal")
	// Stopped first: a sweeper between a failed command and its count
	// would read as a swallowed failure.
	ref.env.stop()
	bad.env.stop()
	refOut := judge.InvalidatorOutage{SeamFailures: ref.seam.failed.Load(), Counted: errs(ref) - refBase}
	badOut := judge.InvalidatorOutage{SeamFailures: bad.seam.failed.Load(), Counted: errs(bad) - badBase}

	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	res := judge.InvalidatorErrorsCounted.Judge(refOut)
	ctl := harness.Variant(string(marconi.MutantExpiryErrorsUncounted),
		"the expiry sweeper swallows its SessionStore errors: nothing logged, nothing counted, marconi_invalidator_errors_total stays 0 through the outage",
		judge.InvalidatorErrorsCounted.Judge(badOut))
	return harness.Check(report.RowMarconiCacheLifecycle, report.ColumnSilentlyWrong, "", res, ev, ctl)
}
