package marconiaudit_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-stream/lost-reply", Serial, func() {
	b := harness.BackendsFromEnv()[0] // the dedupe is the script's, not the client library's
	harness.Emit(harness.Scenario{
		Name: "marconi-stream/lost-reply-once/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
		Spec: "the append script's replies are lost after the server ran it (a downstream cut on the stream's node): the writer retries the same batch, and the stream holds every signal once — the retry is skipped by the stored offset (002 §4.1 Restart, the offset \"held in Redis … for restart safety\")",
		Run:  func(ctx SpecContext) report.Check { return runLostReply(ctx, b) },
	})
})

// holdConnections runs n blocking calls (BLPOP with a 200 ms timeout) at
// once on the writers' node, so the pool keeps n connections to it open.
func holdConnections(ctx context.Context, pool client.Pool, runs []*lostReplyRun, n int) {
	GinkgoHelper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "marconi:warm:{" + runs[i%len(runs)].tenant + "}"
			_, errs[i] = pool.Do(ctx, client.NewCmd("BLPOP", []string{key}, "0.2"))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		Expect(err).NotTo(HaveOccurred())
	}
}

// lostReplyBatch is how many entries each phase offers.
const lostReplyBatch = 10

// lostReplyRun is one writer on its own tenant and the facts about it.
type lostReplyRun struct {
	tenant string
	queue  *audit.Queue
	stop   func()

	mu              sync.Mutex
	cut             bool
	failed, settled int
	h               judge.LostReplyHistory
}

func startLostReply(ctx context.Context, pool client.Pool, tenant string, m audit.Mutant) *lostReplyRun {
	GinkgoHelper()
	r := &lostReplyRun{tenant: tenant}
	q, err := audit.NewQueue(audit.QueueOptions{})
	Expect(err).NotTo(HaveOccurred())
	r.queue = q
	w, err := audit.NewWriter(audit.WriterOptions{Pool: pool, Queue: q, Mutant: m, Timeout: 300 * time.Millisecond, RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		OnError: func(e audit.PipelineError) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.cut && e.Op == "append" {
				r.failed++
			}
		},
		OnAppended: func(es []audit.Entry) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.settled += len(es)
		}})
	Expect(err).NotTo(HaveOccurred())
	run := runWriter(ctx, w)
	r.stop = func() {
		_ = run()
		q.Close() // a second Close finds nothing left
	}
	DeferCleanup(r.stop)
	return r
}

func (r *lostReplyRun) offer(phase string) {
	GinkgoHelper()
	r.h.Offered = append(r.h.Offered, offerBatch(r.queue, r.tenant, phase, "lost-reply", lostReplyBatch)...)
}

func (r *lostReplyRun) counts() (failed, settled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed, r.settled
}

// xlen reads the stream's length on node itself, not through its proxy:
// what the server ran, whatever reached the client.
func xlen(ctx context.Context, node *fixtures.Node, tenant string) int64 {
	keys, err := audit.KeysFor(tenant)
	Expect(err).NotTo(HaveOccurred())
	v, err := node.Do(ctx, "XLEN", keys.Stream)
	if err != nil {
		return -1
	}
	n, _ := client.AsInt64(v)
	return n
}

// runLostReply cuts the replies of the node holding two tenants' streams
// (a toxiproxy timeout toxic on the downstream: requests pass, replies are
// dropped) while their writers append — the reference, and the writer that
// ignores its offset (MutantIgnoreOffset: the append does not skip covered
// offsets) — then heals the link and judges each stream.
func runLostReply(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	pool := harness.Pool(ctx, b, cluster)
	tag := streamTag(b)
	node := cluster.Primaries()[0]
	ref := startLostReply(ctx, pool, tenantOn(ctx, "ms-"+tag+"-lostreply", node), audit.MutantNone)
	ctl := startLostReply(ctx, pool, tenantOn(ctx, "ms-"+tag+"-lostreply-nodedupe", node), audit.MutantIgnoreOffset)
	runs := []*lostReplyRun{ref, ctl}
	By(fmt.Sprintf("%d entries appended per writer with the link healthy", lostReplyBatch))
	for _, r := range runs {
		r.offer("before")
	}
	waitUntil(ctx, "both writers' first entries settled", 30*time.Second, func() bool {
		for _, r := range runs {
			if _, s := r.counts(); s < lostReplyBatch {
				return false
			}
		}
		return true
	})

	// The two writers share the pool, and at the cut each must find a
	// connection to the node already open: the toxic drops a new
	// connection's handshake reply too, so an append that has to dial
	// never reaches the server and is never applied-but-unacknowledged
	// (the wait below then times out). Several short blocking calls at
	// once leave that many connections idle in the pool.
	holdConnections(ctx, pool, runs, 4)

	By(fmt.Sprintf("replies of %s dropped (timeout toxic, downstream); %d more entries per writer", node.Name(), lostReplyBatch))
	Expect(node.AddToxic(ctx, "lost-reply", "timeout", "downstream", 1, map[string]any{"timeout": 0})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { _ = node.RemoveToxics(ctx) })
	held := fault.Hold(ctx, "link/replies-dropped", node.Name())
	for _, r := range runs {
		r.mu.Lock()
		r.cut = true
		r.mu.Unlock()
		r.offer("cut")
	}
	// Evidence of a lost reply of an applied append: the server's stream
	// (read on the node) holds entries of the cut batch while the writer
	// has seen only failures since the cut — then at least one retry more.
	// Any of them, not all ten: the writer takes what is queued when it
	// wakes, so its first append may carry only the first few offers, and
	// its retries of that same batch may never reach the server while the
	// cut lasts (a new connection's handshake reply is dropped too).
	// Bounded by what a retry costs on the shared pool, not by a guess of
	// the scenario's pace: go-redis bounds a blocked read by its 3 s
	// ReadTimeout (not the append's context) and re-dials under it, the
	// cut dropping the handshake's reply too, so one failed append can
	// take ~10 s and a loaded CI run missed a 20 s bound for two of them.
	waitUntil(ctx, "each writer's cut batch applied on the server with its replies lost, and retried", 90*time.Second, func() bool {
		for _, r := range runs {
			failed, settled := r.counts()
			if settled == lostReplyBatch && failed >= 1 && xlen(ctx, node, r.tenant) > lostReplyBatch {
				r.h.AppliedUnacked = true
			}
			if !r.h.AppliedUnacked || failed < 2 {
				return false
			}
		}
		return true
	})
	Expect(node.RemoveToxics(ctx)).To(Succeed())
	// Every client connection that lived through the cut is closed at the
	// heal: the toxic dropped replies on connections it kept open, and a
	// pipelining client (valkey-go) that abandoned a timed-out call keeps
	// its slot in the reply queue, so later calls on that connection would
	// be handed replies that were not theirs. (A toxic that closes the
	// connection itself also drops the next connection's handshake reply:
	// no retry reached the server.)
	_, err := node.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	Expect(err).NotTo(HaveOccurred())
	w := held.End()
	waitUntil(ctx, "each writer's cut batch settled once the link healed", 30*time.Second, func() bool {
		for _, r := range runs {
			if _, s := r.counts(); s < 2*lostReplyBatch {
				return false
			}
		}
		return true
	})
	for _, r := range runs {
		r.stop()
		r.h.FailedAppends, _ = r.counts()
		var err error
		r.h.Stream, err = traffic.ReadStreamEntries(ctx, pool, r.tenant)
		Expect(err).NotTo(HaveOccurred())
	}
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults = harness.Windows(w)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Metrics = map[string]float64{"failed_appends": float64(ref.h.FailedAppends), "stream_entries": float64(len(ref.h.Stream))}
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", judge.LostReplyOnce.Judge(ref.h), ev,
		harness.Variant(string(audit.MutantIgnoreOffset), "the append does not skip the offsets the stored offset covers: every retry of a batch whose reply was lost appends it again",
			judge.LostReplyOnce.Judge(ctl.h)))
}
