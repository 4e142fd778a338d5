package marconi_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The routing cache's hit-rate floor (spec 002 §8 Stage 2 exit criteria:
// "cache hit-rate ≥ 99%; SessionStore reads converge to startup-rehydrate
// + write-through misses only"), judged where a miss costs: the
// SessionStore reads each send issues on its hot path, counted at the
// mesh's Redis client seam. Sessions registered, attached and a master
// claimed, then only sends — to identities and to the master alias — so no
// read is a write-through miss. A cache that never caches the master alias
// delivers every signal right and only reads the store for the alias.

// Workload: hitRateSends sequential sends (a per-send seam reading needs
// one send at a time), one in hitRateMasterEvery to the master alias — a
// share over the 1 % the floor allows, so a cache missing that one kind
// drops under it.
const (
	hitRateReceivers   = 10
	hitRateSends       = 300
	hitRateMasterEvery = 10
	hitRateFloor       = 0.99
)

var _ = Describe("marconi-cache-lifecycle", func() {
	b := harness.BackendsFromEnv()[0] // the cache is the mesh's own: the client library does not change it
	harness.Emit(harness.Scenario{
		Name: "marconi-cache-lifecycle/hit-rate-floor/" + string(b), Row: report.RowMarconiCacheLifecycle, Column: report.ColumnErrors,
		Spec: "with sessions registered, attached and a master claimed, every send to an identity or the master alias resolves from the routing table: hit rate ≥ 99% counted as sends without a SessionStore read on their hot path, at the mesh's client seam (002 §8 Stage 2 exit criteria)",
		Run:  func(ctx SpecContext) report.Check { return runHitRateFloor(ctx, b) },
	})
})

func runHitRateFloor(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	By(fmt.Sprintf("%d attached receivers and a master on the reference mesh and on one that never caches the master alias; %d sends each, one in %d to the alias",
		hitRateReceivers, hitRateSends, hitRateMasterEvery))
	ref, refSeam := hitRateRun(ctx, b, marconi.MutantNone, "hitrate")
	bad, badSeam := hitRateRun(ctx, b, marconi.MutantMasterUncached, "uncached")
	res := judge.CacheHitFloor.Judge(judge.HitFloorInput{Reads: ref, Floor: hitRateFloor, MinReads: hitRateSends / 2, SeamCounted: refSeam})
	ctl := harness.Variant(string(marconi.MutantMasterUncached),
		"the routing cache never caches the master alias: every alias send resolves through the SessionStore (GET, MGET); every delivery still right",
		judge.CacheHitFloor.Judge(judge.HitFloorInput{Reads: bad, Floor: hitRateFloor, MinReads: hitRateSends / 2, SeamCounted: badSeam}))
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("floor %.0f%%: spec 002 §8 Stage 2 exit criterion \"cache hit-rate ≥ 99%%\"; a send is a miss when it read the SessionStore on its hot path", 100*hitRateFloor))
	return harness.Check(report.RowMarconiCacheLifecycle, report.ColumnErrors, "", res, ev, ctl)
}

// hitRateRun runs one mesh (mutant) through the workload and returns each
// send's reading, and whether the seam counted the setup's store writes.
func hitRateRun(ctx context.Context, b client.Backend, mutant marconi.Mutant, project string) ([]judge.CacheRead, bool) {
	GinkgoHelper()
	pool := newPool(ctx, b, "marconi-"+project)
	m := startMesh(ctx, marconi.Options{Pool: pool, Store: marconi.StoreOptions{TTL: 30 * time.Second, Prefix: project},
		Sink: marconi.NewMemorySink(), Mutant: mutant})
	rec := workload.NewMeshRecorder(traffic.NewClock(), m.api)
	recv := workload.NewMeshReceivers(rec, m.url)
	DeferCleanup(recv.Close)
	_, sessions := registerReceivers(ctx, rec, recv, project, hitRateReceivers, true)
	master := sessions[0]
	Expect(rec.Master(ctx, tenant, project, "", master.SessionID)).To(Succeed())
	seamCounted := pool.Counts().Total > 0
	var reads []judge.CacheRead
	for i := range hitRateSends {
		s := sessions[i%len(sessions)]
		recipient, want := s.Identity, s.SessionID
		if i%hitRateMasterEvery == 0 {
			recipient, want = marconi.MasterIdentity, master.SessionID
		}
		before := pool.Counts().HotPath
		res, err := rec.Send(ctx, marconi.SendRequest{Tenant: tenant, Project: project, Recipient: recipient, Kind: "hit-rate"})
		Expect(err).NotTo(HaveOccurred())
		reads = append(reads, judge.CacheRead{Recipient: recipient, Want: want, Got: res.SessionID, StoreReads: pool.Counts().HotPath - before})
	}
	recv.Close()
	m.stop()
	return reads, seamCounted
}
