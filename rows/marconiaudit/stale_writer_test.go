package marconiaudit_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-stream/stale-writer", func() {
	b := harness.BackendsFromEnv()[0] // the fencing is the script's, not the client library's
	harness.Emit(harness.Scenario{
		Name: "marconi-stream/stale-writer-fenced/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
		Spec: "a previous process's Redis Stream writer (older audit-queue generation), still running after a new process's writer took over the tenant's stream, has every append refused and lands nothing; both writers' entries from while they were current are in the stream once each (002 §4.1 Restart, §6)",
		Run:  func(ctx SpecContext) report.Check { return runStaleWriter(ctx, b) },
	})
})

// staleBatch is how many entries each phase offers.
const staleBatch = 20

// runStaleWriter runs two writer processes' worth of queue and writer on
// one tenant's stream — the reference, and beside it, on its own tenant,
// the writer that keeps its offset per generation — and judges each stream.
func runStaleWriter(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	pool := harness.Pool(ctx, b, cluster)
	tag := streamTag(b)
	node := cluster.Primaries()[0]
	By(fmt.Sprintf("old writer appends %d, a new process's writer takes over and appends %d, the old one is handed %d more; beside it the offset-per-generation control", staleBatch, staleBatch, staleBatch))
	var ref, ctl judge.StaleWriterHistory
	var wg sync.WaitGroup
	wg.Go(func() {
		defer GinkgoRecover()
		ref = staleWriterRun(ctx, pool, tenantOn(ctx, "ms-"+tag+"-stale", node), audit.MutantNone)
	})
	wg.Go(func() {
		defer GinkgoRecover()
		ctl = staleWriterRun(ctx, pool, tenantOn(ctx, "ms-"+tag+"-stalegen", node), audit.MutantOffsetPerGeneration)
	})
	wg.Wait()
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Metrics = map[string]float64{"stale_refusals": float64(ref.Refusals), "stream_entries": float64(len(ref.Stream))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("generations: old %s, new %s; the old writer's appends refused %d times after the takeover", ref.OldGen, ref.NewGen, ref.Refusals))
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", judge.StaleWriterFenced.Judge(ref), ev,
		harness.Variant(string(audit.MutantOffsetPerGeneration), "each process's writer keeps its resume offset under a key of its own generation: the previous process's writer never sees its successor's offset and appends beside it",
			judge.StaleWriterFenced.Judge(ctl)))
}

// staleWriterRun is one two-process run on tenant: facts only.
func staleWriterRun(ctx context.Context, pool client.Pool, tenant string, m audit.Mutant) judge.StaleWriterHistory {
	GinkgoHelper()
	var mu sync.Mutex
	refusals, takenOver := 0, false
	start := func(q *audit.Queue, old bool) func() {
		w, err := audit.NewWriter(audit.WriterOptions{Pool: pool, Queue: q, Mutant: m, RetryMax: 50 * time.Millisecond,
			OnError: func(e audit.PipelineError) {
				mu.Lock()
				defer mu.Unlock()
				if old && takenOver && e.Op == "append" {
					refusals++
				}
			}})
		Expect(err).NotTo(HaveOccurred())
		run := runWriter(ctx, w)
		stop := func() { Expect(run()).To(Or(Succeed(), MatchError(context.Canceled))) }
		DeferCleanup(stop)
		return stop
	}
	offer := func(q *audit.Queue, phase string) []string {
		return offerBatch(q, tenant, phase, "stale-writer", staleBatch)
	}
	streamHolds := func(n int) func() bool {
		return func() bool {
			es, err := traffic.ReadStreamEntries(ctx, pool, tenant)
			return err == nil && len(es) >= n
		}
	}
	oldQ, err := audit.NewQueue(audit.QueueOptions{})
	Expect(err).NotTo(HaveOccurred())
	stopOld := start(oldQ, true)
	h := judge.StaleWriterHistory{OldGen: oldQ.Generation()}
	h.Current = append(h.Current, offer(oldQ, "old")...)
	waitUntil(ctx, tenant+": the old writer's entries in the stream", 30*time.Second, streamHolds(staleBatch))

	// A new process: its queue's generation is its start time, later. A
	// duration: the clock must move on.
	time.Sleep(time.Millisecond)
	newQ, err := audit.NewQueue(audit.QueueOptions{})
	Expect(err).NotTo(HaveOccurred())
	h.NewGen = newQ.Generation()
	stopNew := start(newQ, false)
	h.Current = append(h.Current, offer(newQ, "new")...)
	waitUntil(ctx, tenant+": the new writer's entries in the stream", 30*time.Second, streamHolds(2*staleBatch))

	mu.Lock()
	takenOver = true
	mu.Unlock()
	h.Stale = offer(oldQ, "stale")
	// Refused (the reference): the old writer retries with backoff until
	// stopped; landed (a control): its entries reach the stream at once.
	waitUntil(ctx, tenant+": the old writer refused three times or its entries landed", 30*time.Second, func() bool {
		mu.Lock()
		n := refusals
		mu.Unlock()
		return n >= 3 || streamHolds(3*staleBatch)()
	})
	stopOld()
	stopNew()
	mu.Lock()
	h.Refusals = refusals
	mu.Unlock()
	h.Stream, err = traffic.ReadStreamEntries(ctx, pool, tenant)
	Expect(err).NotTo(HaveOccurred())
	oldQ.Close()
	newQ.Close()
	return h
}
