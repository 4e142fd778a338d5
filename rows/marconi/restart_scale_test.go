package marconi_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

// marconi-restart at scale (spec 002 §6 step 2: "Rehydrate routing +
// registration from SessionStore (Redis) — sub-second"): the rehydration
// time and the moment the new instance's tables agree with the
// SessionStore, as figures in the evidence — measured, not asserted.
var _ = Describe("marconi-restart", func() {
	b := harness.BackendsFromEnv()[0]
	harness.Emit(harness.Scenario{
		Name: "marconi-restart/rehydrate-at-scale/" + string(b), Row: report.RowMarconiRestart, Column: report.ColumnSilentlyWrong,
		Spec: "a new instance's tables agree with the SessionStore (read by the harness) as soon as it serves, with hundreds of sessions; the rehydration time and the store-to-table convergence are reported (002 §6 step 2)",
		Run:  func(ctx SpecContext) report.Check { return rehydrateAtScale(ctx, b) },
	})
})

// seedSessions writes n sessions straight into the SessionStore (what the
// previous instance's registers left behind).
func seedSessions(ctx context.Context, store *marconi.SessionStore, project string, n int) {
	GinkgoHelper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer GinkgoRecover()
			defer func() { <-sem }()
			now := time.Now()
			Expect(store.Register(ctx, marconi.Session{SessionID: fmt.Sprintf("%s-%05d", project, i), Tenant: tenant, Project: project,
				Identity: fmt.Sprintf("id%05d", i), Surface: "receiver", RegisteredAt: now, LastHeartbeat: now})).To(Succeed())
		})
	}
	wg.Wait()
}

// rehydrateOnce starts an instance on prefix and reads, on the harness's
// clock, how long until it served and whether its routes agree with the
// SessionStore snapshot the harness read itself.
func rehydrateOnce(ctx context.Context, pool client.Pool, prefix string, mutant marconi.Mutant) (check.Result, marconi.Warmup, time.Duration, int) {
	GinkgoHelper()
	snap, err := marconi.NewSessionStore(pool, marconi.StoreOptions{Prefix: prefix}).Load(ctx)
	Expect(err).NotTo(HaveOccurred(), "the harness's own SessionStore read")
	active := map[string]string{}
	for _, s := range snap.Sessions {
		active[s.SessionID] = s.Route().String()
	}
	began := time.Now()
	env := startMesh(ctx, marconi.Options{Pool: pool, Sink: marconi.NewMemorySink(), Store: marconi.StoreOptions{Prefix: prefix}, Mutant: mutant})
	serving := time.Since(began)
	routes := map[string]string{}
	for k, v := range env.mesh.Tables().Routes {
		routes[k.String()] = v
	}
	return judge.Rehydrated.Judge(judge.RehydratedInput{Active: active, Routes: routes}), env.warm, serving, len(snap.Sessions)
}

func rehydrateAtScale(ctx SpecContext, b client.Backend) report.Check {
	n := 200
	if cfg.Profile == "full" {
		n = 5000
	}
	ev := harness.Evidence(cfg, cluster, nil)
	pool := storePool(ctx, b, "marconi-rehydrate")
	ev.Client = pool.Version()
	By(fmt.Sprintf("%d sessions in the SessionStore; a new instance starts on it", n))
	seedSessions(ctx, marconi.NewSessionStore(pool, marconi.StoreOptions{Prefix: "scale"}), "scale", n)
	result, warm, serving, read := rehydrateOnce(ctx, pool, "scale", marconi.MutantNone)
	ev.Metrics = map[string]float64{
		"sessions": float64(read), "rehydrate_ms": ms(warm.Took), "start_to_serving_ms": ms(serving),
		"rehydrate_ms_per_1000_sessions": ms(warm.Took) * 1000 / float64(max(read, 1)),
		// The tables are compared with the store once Start returned: the
		// convergence is the start-to-serving time when they agree.
		"store_to_table_convergence_ms": ms(serving),
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("%d sessions rehydrated in %v (instance's own measure); serving %v after New, tables equal to the harness's SessionStore read at that moment (§6: sub-second)",
		warm.Sessions, warm.Took.Round(time.Microsecond), serving.Round(time.Microsecond)))
	By("negative control: an instance that skips the warm-up")
	bad, _, _, _ := rehydrateOnce(ctx, pool, "scale", marconi.MutantSkipWarmup)
	return harness.Check(report.RowMarconiRestart, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(marconi.MutantSkipWarmup), "Start skips §6 step 2: the tables are empty until shims re-register", bad))
}
