package marconi_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The pending-signal TTL (spec 002 §3.5: "per-recipient queue of
// undelivered signals + TTL"): signals queued for offline recipients are
// drained within their TTL and never after it, and each one that outlives
// it is counted in marconi_pending_expired_total — an accepted signal
// that vanishes uncounted is lost without the operator being told. One
// backend: the pending index lives above the client seam.
var _ = Describe("marconi-metrics pending TTL", func() {
	b := harness.BackendsFromEnv()[0]
	harness.Emit(harness.Scenario{
		Name: "marconi-metrics/pending-ttl/" + string(b), Row: report.RowMarconiMetrics, Column: report.ColumnSilentlyWrong,
		Spec: "a signal queued offline is returned by prism_signals_pending within its TTL and never after; every one that outlived it is counted in marconi_pending_expired_total{tenant}, exactly (002 §3.5 pending-signal index + TTL)",
		Run:  func(ctx SpecContext) report.Check { return runPendingTTL(ctx, b) },
	})
})

// Workload: TTL 1 s swept every 100 ms; per recipient pendingPerKey
// signals. The stale recipients are drained TTL + 5 sweeps after their
// sends, the fresh ones right after theirs; the scrape comes TTL + 5
// sweeps after the last send.
const (
	pendingTTL    = time.Second
	pendingSweep  = 100 * time.Millisecond
	pendingPerKey = 10
)

func runPendingTTL(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	variants := []marconi.Mutant{marconi.MutantNone, marconi.MutantPendingNeverExpires, marconi.MutantPendingExpiryUncounted}
	hs := make([]judge.PendingTTLHistory, len(variants))
	var wg sync.WaitGroup
	for i, m := range variants {
		wg.Go(func() {
			defer GinkgoRecover()
			hs[i] = pendingRun(ctx, b, fmt.Sprintf("pt%d", i), m)
		})
	}
	wg.Wait()
	result := judge.PendingTTL.Judge(hs[0])
	never := harness.Variant(string(marconi.MutantPendingNeverExpires), "the pending TTL never fires: a signal is drained however old",
		judge.PendingTTL.Judge(hs[1]))
	uncounted := harness.Variant(string(marconi.MutantPendingExpiryUncounted), "signals dropped at their TTL without counting them in marconi_pending_expired_total",
		judge.PendingTTL.Judge(hs[2]))
	return harness.Check(report.RowMarconiMetrics, report.ColumnSilentlyWrong, "", result, harness.Evidence(cfg, cluster, nil), never, uncounted)
}

// pendingRun is one mesh (mutant selects a bad pending index) through the
// workload; it returns the recorded history.
func pendingRun(ctx context.Context, b client.Backend, tag string, mutant marconi.Mutant) judge.PendingTTLHistory {
	GinkgoHelper()
	tenant := "pending-" + tag
	env := startMeshAs(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-pending-"+tag), Flags: marconi.ShippedFlags(), Mutant: mutant,
		Store: marconi.StoreOptions{Prefix: "mp-" + tag, TTL: 10 * time.Minute}, PendingTTL: pendingTTL, SweepEvery: pendingSweep})
	clock := traffic.NewClock()
	h := judge.PendingTTLHistory{Tenant: tenant, TTL: pendingTTL}
	key := func(id string) marconi.RouteKey { return marconi.RouteKey{Tenant: tenant, Project: "p", Identity: id} }
	stale, fresh := []marconi.RouteKey{key("stale-0"), key("stale-1")}, []marconi.RouteKey{key("fresh-0"), key("fresh-1")}
	send := func(keys []marconi.RouteKey) {
		for _, k := range keys {
			for n := range pendingPerKey {
				start := clock.Now()
				res, err := env.api.Send(ctx, marconi.SendRequest{Tenant: k.Tenant, Project: k.Project, Recipient: k.Identity, Sender: "s", Kind: "pending", Payload: []byte(fmt.Sprint(n))})
				Expect(err).NotTo(HaveOccurred())
				h.Sends = append(h.Sends, judge.PendingSend{SignalID: res.SignalID, Recipient: k.String(), Outcome: string(res.Outcome), Start: start, Done: clock.Now()})
			}
		}
	}
	drain := func(keys []marconi.RouteKey) {
		for _, k := range keys {
			d := judge.PendingDrain{Recipient: k.String(), Start: clock.Now()}
			envs, err := env.api.Pending(ctx, k)
			d.Done = clock.Now()
			if err != nil {
				d.Err = err.Error()
			}
			for _, e := range envs {
				d.SignalIDs = append(d.SignalIDs, e.SignalID)
			}
			h.Drains = append(h.Drains, d)
		}
	}
	wait := func() {
		select {
		case <-ctx.Done():
		case <-time.After(pendingTTL + 5*pendingSweep):
		}
	}
	By(tag + ": signals to offline recipients left past their TTL, then signals drained at once")
	send(stale)
	wait()
	send(fresh)
	drain(append(append([]marconi.RouteKey(nil), stale...), fresh...))
	wait()
	drain(append(append([]marconi.RouteKey(nil), stale...), fresh...))
	h.ScrapedAt = clock.Now()
	h.Expired = env.mesh.MetricSum("marconi_pending_expired_total", map[string]string{"tenant": tenant})
	env.stop()
	return h
}
