package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// surfaceScale sizes the pipeline and transaction run: keys per pipeline
// path (Pinned of them in the moving slot), pairs per transaction path,
// and the batches/transactions each path must reach before, during and
// after the faults.
type surfaceScale struct {
	Keys, Pinned, Pairs int
	Before, After       int
	Hold, HoldMax       time.Duration
}

func surfaceScaleOf() surfaceScale {
	if cfg.Profile == harness.ProfileFull {
		return surfaceScale{Keys: 64, Pinned: 8, Pairs: 4, Before: 200, After: 300, Hold: time.Second, HoldMax: 5 * time.Second}
	}
	// About a second of traffic before the faults and a second after, at
	// the workers' pace.
	return surfaceScale{Keys: 24, Pinned: 4, Pairs: 2, Before: 60, After: 60, Hold: 300 * time.Millisecond, HoldMax: 3 * time.Second}
}

// Pacing of the workers: a pipeline or a transaction per tick, so eight
// paths share a 2-core runner with the six servers.
const (
	pipePace = 15 * time.Millisecond
	txPace   = 10 * time.Millisecond
)

// txBound is how long one transaction through impl may take, re-sends
// included: impl's own re-send budget (10 s) and a round trip.
const txBound = 12 * time.Second

// surfaceRun is one backend's run: every pipeline and transaction path on
// its own keys, through one slot move and one graceful failover.
type surfaceRun struct {
	clock    *traffic.Clock
	pipes    map[string]judge.PipelineRun
	txs      map[string]judge.TxRun
	faults   []report.FaultWindow
	timeline *report.Timeline
	version  string
	moved    int
	failed   int // the shard failed over
}

// surfaceRuns runs b's workload once; the pipeline and transaction
// scenarios of both columns judge it.
var surfaceRuns = harness.NewOnce(func(ctx SpecContext, b client.Backend) surfaceRun {
	GinkgoHelper()
	return runSurface(ctx, b)
})

// rawClients are the libraries' own clients for the raw paths, with the
// libraries' defaults (no impl option applied).
type rawClients struct {
	goredis *redis.ClusterClient
	valkey  valkey.Client
}

func openRaw(b client.Backend) rawClients {
	GinkgoHelper()
	cred := cluster.Credentials()
	switch b {
	case client.BackendGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ClientName: "slotgate-raw",
			Username: cred.Username, Password: cred.Password, TLSConfig: cred.TLS})
		DeferCleanup(c.Close)
		return rawClients{goredis: c}
	default:
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: cluster.Addrs(), ClientName: "slotgate-raw", DisableCache: true,
			Username: cred.Username, Password: cred.Password, TLSConfig: cred.TLS})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		return rawClients{valkey: c}
	}
}

// rawErr reads a library's error the way impl's seam classifies it (a
// server error reply keeps its code), for traffic.ErrKind.
func rawErr(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		return client.ParseServerError(re.Error())
	}
	if ve, ok := valkey.IsValkeyErr(err); ok {
		return client.ParseServerError(ve.Error())
	}
	return err
}

// progress is a worker's count of finished pipelines or transactions.
type progress interface{ done() int64 }

// pathWorker is what every pipeline and transaction path shares: its name,
// the clock its calls are timed on, how many calls it finished, and its
// calls as timeline ops.
type pathWorker struct {
	path  string
	clock *traffic.Clock
	n     atomic.Int64
	mu    sync.Mutex
	hist  []history.Op // under mu
}

func (w *pathWorker) done() int64 { return w.n.Load() }

func (w *pathWorker) ops() []history.Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]history.Op(nil), w.hist...)
}

// every calls send once per tick of pace, with the call's index, until
// stop closes or ctx ends, and counts each call that finished.
func (w *pathWorker) every(ctx context.Context, stop <-chan struct{}, pace time.Duration, send func(i int)) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		send(i)
		w.n.Add(1)
	}
}

// reached waits, at most limit, until every worker finished n more than
// it had at from; false when one did not.
func reached(ctx context.Context, ws []progress, from []int64, n int64, limit time.Duration) bool {
	return harness.WaitAtMost(ctx, limit, 10*time.Millisecond, func() bool {
		for i, w := range ws {
			if w.done() < from[i]+n {
				return false
			}
		}
		return true
	})
}

func snapshot(ws []progress) []int64 {
	out := make([]int64, len(ws))
	for i, w := range ws {
		out[i] = w.done()
	}
	return out
}

// tagIn returns a hash tag, named after prefix, whose keys hash to s.
func tagIn(prefix string, s int) string {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%s-%d", prefix, i)
		if slot.Of("{"+tag+"}") == s {
			return tag
		}
	}
}

func runSurface(ctx SpecContext, b client.Backend) surfaceRun {
	GinkgoHelper()
	s := surfaceScaleOf()
	name := "client-surface/pipeline-tx/" + string(b)
	rng := cfg.Rand(name)
	clock := traffic.ClockOf(ctx)
	pool := harness.Pool(ctx, b, cluster)
	raw := openRaw(b)
	moving := rng.IntN(slot.Count)
	tag := fmt.Sprintf("%x", rng.Uint32())

	pipes := newPipeWorkers(ctx, b, pool, raw, rng, moving, tag, s)
	txs := newTxWorkers(ctx, b, pool, raw, moving, tag, s)
	var ws []progress
	for _, w := range pipes {
		ws = append(ws, w)
	}
	for _, w := range txs {
		ws = append(ws, w)
	}
	By(fmt.Sprintf("%d pipeline paths (%d keys each, %d in slot %d) and %d transaction paths (%d pairs in slot %d)", len(pipes), s.Keys, s.Pinned, moving, len(txs), s.Pairs, moving))
	stop := make(chan struct{})
	done := make(chan struct{}, len(ws))
	for _, w := range pipes {
		go func() { defer GinkgoRecover(); w.run(ctx, stop); done <- struct{}{} }()
	}
	for _, w := range txs {
		go func() { defer GinkgoRecover(); w.run(ctx, stop); done <- struct{}{} }()
	}
	halt := func() {
		close(stop)
		for range ws {
			<-done
		}
	}
	reached(ctx, ws, make([]int64, len(ws)), int64(s.Before), 30*time.Second)

	By(fmt.Sprintf("fault: slot %d moves to the next shard, held MIGRATING %v and until every path sent twice more (at most %v more)", moving, s.Hold, s.HoldMax))
	at := snapshot(ws)
	mw, err := fault.Apply(ctx, cluster, fault.MoveSlot{Slot: moving, To: -1, Hold: s.Hold,
		Until: func() bool { return reached(ctx, ws, at, 2, 0) }, UntilMax: s.HoldMax})
	if err != nil {
		halt()
		harness.MustConfirm(err, cfg.Seed)
	}
	owner, err := cluster.NodeForSlot(ctx, moving)
	Expect(err).NotTo(HaveOccurred())
	shard := owner.Shard()
	// The failed-over shard's slots among the run's keys, read before the
	// failover: what the checkers' premise looks for in flight.
	var failSlots []int
	seen := map[int]bool{}
	for _, w := range pipes {
		for _, k := range w.keys {
			if seen[k.slot] {
				continue
			}
			seen[k.slot] = true
			n, err := cluster.NodeForSlot(ctx, k.slot)
			Expect(err).NotTo(HaveOccurred())
			if n.Shard() == shard {
				failSlots = append(failSlots, k.slot)
			}
		}
	}
	By(fmt.Sprintf("fault: graceful failover of shard %d, the slot's new owner", shard))
	fw, err := fault.Apply(ctx, cluster, fault.Failover{Shard: shard, Mode: fault.FailoverGraceful})
	if err != nil {
		halt()
		harness.MustConfirm(err, cfg.Seed)
	}
	reached(ctx, ws, snapshot(ws), int64(s.After), 30*time.Second)
	halt()

	spans := []judge.FaultSpan{
		{Fault: mw.Fault, Slots: []int{moving}, Start: clock.Offset(mw.Start), End: clock.Offset(mw.End)},
		{Fault: fw.Fault, Slots: append(failSlots, moving), Start: clock.Offset(fw.Start), End: clock.Offset(fw.End)},
	}
	By("reading every key back through a fresh impl pool")
	fresh := harness.Pool(ctx, b, cluster)
	r := surfaceRun{clock: clock, pipes: map[string]judge.PipelineRun{}, txs: map[string]judge.TxRun{}, faults: harness.Faults(ctx),
		version: pool.Version(), moved: moving, failed: shard}
	var ops []history.Op
	for _, w := range pipes {
		r.pipes[w.path] = w.result(ctx, fresh, spans, s.Before+s.After)
		ops = append(ops, w.ops()...)
	}
	for _, w := range txs {
		r.txs[w.path] = w.result(ctx, fresh, spans, s.Before+s.After)
		ops = append(ops, w.ops()...)
	}
	r.timeline = harness.Timeline(history.History{Scenario: name, Seed: cfg.Seed, Began: clock.Began(), Ops: ops,
		Faults: harness.HistoryWindows(clock.Began(), r.faults)})
	return r
}

// opOutcome is a timeline outcome for an error kind.
func opOutcome(kind string) history.Outcome {
	switch kind {
	case "":
		return history.OK
	case "network":
		return history.Unknown
	}
	return history.Failed
}

// evidence starts a scenario's evidence on the shared run.
func surfaceEvidence(ctx SpecContext, r surfaceRun) report.Evidence {
	harness.UseClock(ctx, r.clock)
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Client = r.version
	ev.Faults, ev.Timeline = r.faults, r.timeline
	return ev
}

// seededDeltas returns n distinct primes from 101 up, shuffled by rng:
// every key's increment differs, and no product of one is a small
// multiple of another's.
func seededDeltas(rng *rand.Rand, n int) []int64 {
	var out []int64
	for c := int64(101); len(out) < n; c++ {
		prime := true
		for d := int64(2); d*d <= c; d++ {
			if c%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			out = append(out, c)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
