package routing_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/routing/judge"
	"github.com/slotgate/slotgate/rows/routing/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// counterResult is one latency-and-migration run, judged in both columns.
type counterResult struct{ silent, errs report.Check }

var _ = Describe("routing non-idempotent", func() {
	for _, b := range harness.BackendsFromEnv() {
		Context(string(b), Ordered, ContinueOnFailure, func() {
			var res counterResult
			BeforeAll(func(ctx SpecContext) { res = runCounters(ctx, b) })
			harness.Emit(
				harness.Scenario{
					Name: "routing/non-idempotent/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
					Spec: "INCR and a counting script on keys whose slots migrate, under latency above the client's read timeout: every counter ends between its acknowledged and its acknowledged + unknown-outcome increments — no write applied twice (000 §Conformance, Routing)",
					Run:  func(SpecContext) report.Check { return res.silent },
				},
				harness.Scenario{
					Name: "routing/redirects-under-latency/" + string(b), Row: row, Column: report.ColumnErrors,
					Spec: "on the same run, the only errors reaching the caller are timeouts (unknown outcomes): no MOVED/ASK/TRYAGAIN (000 §Conformance, Routing: MOVED/ASK redirects under slot migration)",
					Run:  func(SpecContext) report.Check { return res.errs },
				},
			)
		})
	}
})

// counterScale sizes the non-idempotent run.
type counterScale struct {
	Slots, Rounds, WorkersPerSlot int
	Hold                          time.Duration
	// Latency ± Jitter is added to each direction of every client link;
	// ReadTimeout (go-redis) or the call deadline (valkey-go) is below the
	// slow end of it, so a share of calls time out after they were sent.
	Latency, Jitter, ReadTimeout time.Duration
	MinAcked, MinUnknown         int64
	// MinResentAcked is how many of the retry-unknown variant's re-sends
	// must come back acknowledged before the run may end early.
	MinResentAcked int64
	// Tail bounds how long the workload runs on after the last move.
	Tail time.Duration
}

func counterScaleOf() counterScale {
	if cfg.Profile == harness.ProfileFull {
		return counterScale{Slots: 4, Rounds: 3, WorkersPerSlot: 3, Hold: 300 * time.Millisecond,
			Latency: 25 * time.Millisecond, Jitter: 25 * time.Millisecond, ReadTimeout: 75 * time.Millisecond, MinAcked: 200, MinUnknown: 30, MinResentAcked: 10, Tail: 5 * time.Second}
	}
	// NOTE: 2 slots × 2 moves under 25±25 ms each way with a 75 ms read
	// timeout: a third of the calls time out (measured 30–40 %), most after the
	// command reached the server (the reply was the slow part). The run
	// goes on after the last move, latency still on, until the minimums
	// are met or Tail has passed.
	return counterScale{Slots: 2, Rounds: 2, WorkersPerSlot: 3, Hold: 150 * time.Millisecond,
		Latency: 25 * time.Millisecond, Jitter: 25 * time.Millisecond, ReadTimeout: 75 * time.Millisecond, MinAcked: 40, MinUnknown: 8, MinResentAcked: 5, Tail: 3 * time.Second}
}

// variantConnTimeout is the retry variant's connection timeout: far above
// the latency added to its links, so no connection is closed under it.
const variantConnTimeout = 2 * time.Second

// timedPool opens a cluster pool of b whose read timeout is d (valkey-go
// has none; its calls get d as their deadline instead).
func timedPool(ctx context.Context, b client.Backend, d time.Duration, name string) client.Pool {
	GinkgoHelper()
	// NOTE: valkey-go applies the read deadline (ConnWriteTimeout) to its
	// connect handshake and first CLUSTER SHARDS too, so with d at 75 ms a
	// connect on a CPU-starved machine can time out before any latency is
	// added. The connect is setup, not the behaviour judged: it may take a
	// few tries.
	var p client.Pool
	Eventually(ctx, func() (err error) {
		p, err = client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name, ReadTimeout: d})
		return err
	}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	DeferCleanup(p.Close)
	return p
}

func runCounters(ctx context.Context, b client.Backend) counterResult {
	GinkgoHelper()
	Expect(cluster.Reset(ctx)).To(Succeed())
	s := counterScaleOf()
	name := "routing/non-idempotent/" + string(b)
	rng := cfg.Rand(name)
	slots := harness.DistinctSlots(rng, s.Slots)
	tag := fmt.Sprintf("%x", rng.Uint32())
	var scoredKeys, mutantKeys []string
	for _, k := range keysFor("c"+tag, slots, s.WorkersPerSlot) {
		scoredKeys = append(scoredKeys, k.Ctr)
	}
	for _, k := range keysFor("m"+tag, slots, s.WorkersPerSlot) {
		mutantKeys = append(mutantKeys, k.Ctr)
	}
	opTimeout := time.Duration(0)
	if b == client.BackendValkeyGo {
		// NOTE: valkey-go pipelines every caller's command on one
		// connection per node, so a slow reply delays the replies behind it
		// (toxiproxy delays a link's chunks in order): the whole call gets
		// the deadline, and one and a half read timeouts keeps most calls
		// answered.
		opTimeout = 3 * s.ReadTimeout / 2
	}
	var absorbed atomic.Int64
	clock := traffic.ClockOf(ctx)
	scored := &workload.Counters{Pool: routing.Wrap(timedPool(ctx, b, s.ReadTimeout, "slotgate-counters"), routing.Options{Absorbed: &absorbed}),
		Clock: clock, Keys: scoredKeys, OpTimeout: opTimeout}
	var resentAcked atomic.Int64
	// NOTE: the variant runs over valkey-go in both cells. Its hazard needs
	// a first send that was written and applied before its reply timed
	// out. A call must therefore time out on its own deadline while its
	// connection lives on: a connection closed on a slow reply (valkey-go's
	// ConnWriteTimeout, go-redis's read timeout) has to be dialled again,
	// and a first send that dies in that handshake was never written, so
	// its re-send is applied once (FINDINGS, "A control whose hazard died
	// in a handshake"). Here the connection's timeout is far above any
	// delay on the link, each call's deadline is the read timeout (a share
	// of replies take longer: the command ran), and a re-send gets one and
	// a half (most come back). The control proves the counters checker
	// catches an at-least-once call path; the library beneath the wrapper
	// is not what it judges.
	variantPool := timedPool(ctx, client.BackendValkeyGo, variantConnTimeout, "slotgate-counters-retry")
	mutant := &workload.Counters{Pool: routing.Wrap(traffic.RetryUnknownOutcome(variantPool, 3*s.ReadTimeout/2, &resentAcked), routing.Options{}),
		Clock: clock, Keys: mutantKeys, OpTimeout: s.ReadTimeout}

	By(fmt.Sprintf("latency %v±%v each way on every client link, read timeout %v; %d counters (+%d through the retry-unknown-outcome variant) on slots %v, each slot moved %d times",
		s.Latency, s.Jitter, s.ReadTimeout, len(scoredKeys), len(mutantKeys), slots, s.Rounds))
	lw, err := fault.Apply(ctx, cluster, fault.Latency{Latency: s.Latency, Jitter: s.Jitter})
	if err != nil {
		removeToxics(ctx)
	}
	harness.MustConfirm(err, cfg.Seed)
	stop := make(chan struct{})
	done := make(chan struct{}, 2)
	go func() { scored.Run(ctx, stop); done <- struct{}{} }()
	go func() { mutant.Run(ctx, stop); done <- struct{}{} }()
	moves := 0
	for range s.Rounds {
		for _, sl := range slots {
			if _, err = fault.Apply(ctx, cluster, fault.MoveSlot{Slot: sl, To: -1, Hold: s.Hold}); err != nil {
				break
			}
			moves++
		}
		if err != nil {
			break
		}
	}
	tailEnd := time.Now().Add(s.Tail)
	time.Sleep(200 * time.Millisecond) // a duration: a stretch of traffic after the last move
	// NOTE: the variant also runs until some of its re-sends came back
	// acknowledged and its own replies show a write applied twice: under
	// heavy CPU contention its re-sends can time out as well, and a re-send
	// whose first send never reached the server is applied once. A run
	// without either has nothing to catch. The tail passing is not a
	// failure: the checkers judge what the run recorded.
	_ = wait.Within(ctx, time.Until(tailEnd), 200*time.Millisecond, func(context.Context) error {
		if !enough(scored.Ops(), s) || !enough(mutant.Ops(), counterScale{MinAcked: 1}) || resentAcked.Load() < s.MinResentAcked || !workload.RepliesShowDouble(mutant.Ops()) {
			return fmt.Errorf("not enough acknowledged traffic yet")
		}
		return nil
	})
	close(stop)
	<-done
	<-done
	if err != nil {
		removeToxics(ctx)
	}
	harness.MustConfirm(err, cfg.Seed)
	By("removing the latency and reading every counter back through a fresh correct pool")
	for _, n := range cluster.Nodes() {
		Expect(n.RemoveToxics(ctx)).To(Succeed())
	}
	fault.Healed(ctx, lw) // the latency stayed on until here
	fresh := routing.Wrap(harness.Pool(ctx, b, cluster), routing.Options{})
	scored.ReadBack(ctx, fresh)
	mutant.ReadBack(ctx, fresh)

	ops, mops := scored.Ops(), mutant.Ops()
	ev := harness.Evidence(cfg, cluster, fresh)
	ev.Metrics = map[string]float64{"operations": float64(len(ops)), "migrations": float64(moves), "redirects_absorbed": float64(absorbed.Load())}
	var acked, unk, notExec int64
	for _, t := range judge.CounterTallies(ops) {
		acked, unk, notExec = acked+t.Acked, unk+t.Unknown, notExec+t.NotExecuted
	}
	ev.Metrics["acknowledged_increments"], ev.Metrics["unknown_outcome_increments"], ev.Metrics["not_executed_increments"] = float64(acked), float64(unk), float64(notExec)
	ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %d increments acknowledged, %d timed out (outcome unknown), %d redirected back; %d redirects absorbed", fresh.Version(), acked, unk, notExec, absorbed.Load()))

	ev.Observed = append(ev.Observed, fmt.Sprintf("error kinds reaching the caller: %v; through the retry-unknown-outcome variant: %v", kinds(ops), kinds(mops)))
	silent := judge.Counters.Judge(judge.CountersInput{Ops: ops, MinAcked: s.MinAcked, MinUnknown: s.MinUnknown})
	errs := judge.OnlyUnknown.Judge(judge.OnlyUnknownInput{Ops: ops, MinOps: int(s.MinAcked)})
	if moves < s.Slots*s.Rounds {
		incomplete := check.Result{Status: check.Unknown, Message: fmt.Sprintf("only %d of %d migrations ran", moves, s.Slots*s.Rounds)}
		silent = check.All("routing-counters", silent, incomplete)
		errs = check.All("routing-only-unknown", errs, incomplete)
	}

	By("negative control for the errors column: a pool pinned to one primary, which ignores MOVED")
	pinned := pinnedRun(ctx, b, name+"/pinned", false)
	pinCtl := harness.Variant("pinned-to-old-owner", "a client that ignores MOVED and keeps sending to one primary after the slot left it", judge.OnlyUnknown.Judge(judge.OnlyUnknownInput{Ops: pinned, MinOps: 1}))
	pinCtl = harness.Premise(pinCtl, kinds(pinned)[string(client.KindMoved)] > 0, "no MOVED seen: the pinned pool never met a slot that left its primary")

	mutCtl := harness.Variant("retry-unknown-outcome", "the same workload, concurrently, through a call path that re-sends a command whose reply timed out (at-least-once): writes applied twice", judge.Counters.Judge(judge.CountersInput{Ops: mops, MinAcked: 1, MinUnknown: 0}))
	// A catch stands on its own (re-sends that all timed out can still
	// apply an increment twice); an uncaught variant proves the checker
	// blind only if the hazard was shown to happen.
	mutCtl = harness.Premise(mutCtl, mutCtl.Caught || resentAcked.Load() > 0, "no re-send of a timed-out increment came back acknowledged: no double application shown")
	ev.Metrics["variant_resends_acknowledged"] = float64(resentAcked.Load())
	return counterResult{
		silent: harness.Check(row, report.ColumnSilentlyWrong, "", silent, ev, mutCtl),
		errs:   harness.Check(row, report.ColumnErrors, "", errs, ev, pinCtl),
	}
}

// enough says a history already has the acknowledged and unknown-outcome
// increments s asks for.
func enough(ops []judge.Op, s counterScale) bool {
	var acked, unk int64
	for _, t := range judge.CounterTallies(ops) {
		acked, unk = acked+t.Acked, unk+t.Unknown
	}
	return acked >= s.MinAcked && unk >= s.MinUnknown
}

// removeToxics takes the latency off every node, best effort, before a
// scenario ends on an unconfirmed fault.
func removeToxics(ctx context.Context) {
	for _, n := range cluster.Nodes() {
		_ = n.RemoveToxics(ctx)
	}
}
