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
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/routing/judge"
	"github.com/slotgate/slotgate/rows/routing/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowRouting

var _ = Describe("routing", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "routing/acknowledged/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "across slot migrations no acknowledged write is lost and no read after an acknowledged write returns an older value (000 §Conformance, Routing)",
				Run:  func(ctx SpecContext) report.Check { return acknowledged(ctx, b) },
			},
			harness.Scenario{
				Name: "routing/redirects/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "every MOVED/ASK/TRYAGAIN during a slot migration is absorbed before it reaches the caller (000 §Conformance, Routing: MOVED/ASK redirects under slot migration)",
				Run:  func(ctx SpecContext) report.Check { return redirects(ctx, b) },
			},
		)
	}
})

// routingScale sizes the row: Slots distinct slots, each moved Rounds times
// to the next shard (so Slots×Rounds migrations), held MIGRATING for Hold.
type routingScale struct {
	Slots, Rounds, WorkersPerSlot int
	Hold                          time.Duration
}

func (s routingScale) migrations() int { return s.Slots * s.Rounds }

func scaleOf() routingScale {
	if cfg.Profile == harness.ProfileFull {
		return routingScale{Slots: 10, Rounds: 5, WorkersPerSlot: 3, Hold: 300 * time.Millisecond}
	}
	// NOTE: 3 slots × 2 moves = 6 migrations; a 150 ms hold is long enough
	// for every worker of the slot to meet ASK on a loaded 2-core runner.
	return routingScale{Slots: 3, Rounds: 2, WorkersPerSlot: 2, Hold: 150 * time.Millisecond}
}

// run is one migrating run: the scored workload through the redirect-
// absorbing path, the raw cluster pool on keys of the same slots (observed),
// and the fault windows.
type run struct {
	clock       *traffic.Clock
	scored, raw *workload.Routing
	absorbed    int64
	faults      []report.FaultWindow
	moves       int
	timeline    *report.Timeline
}

// keysFor returns WorkersPerSlot key sets in each moving slot.
func keysFor(prefix string, slots []int, perSlot int) []traffic.RoutingKeys {
	var out []traffic.RoutingKeys
	for _, s := range slots {
		for w := range perSlot {
			out = append(out, traffic.RoutingKeysIn(fmt.Sprintf("%s-%d-%d", prefix, s, w), s))
		}
	}
	return out
}

// migrations runs b's migrating workload once; both columns judge it (the
// errors column on the same history the silently-wrong column judges).
var migrations = harness.NewOnce(func(ctx SpecContext, b client.Backend) run {
	GinkgoHelper()
	return migrate(ctx, b, "routing/migrate/"+string(b))
})

func migrate(ctx context.Context, b client.Backend, name string) run {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand(name)
	slots := harness.DistinctSlots(rng, s.Slots)
	pool := harness.Pool(ctx, b, cluster)
	rawPool := harness.Pool(ctx, b, cluster)
	var absorbed atomic.Int64
	clock := traffic.ClockOf(ctx)
	tag := fmt.Sprintf("%x", rng.Uint32())
	scored := &workload.Routing{Pool: routing.Wrap(pool, routing.Options{Absorbed: &absorbed}), Clock: clock, Keys: keysFor("w"+tag, slots, s.WorkersPerSlot), Tag: "v" + tag}
	raw := &workload.Routing{Pool: rawPool, Clock: clock, Keys: keysFor("r"+tag, slots, 1), Tag: "r" + tag}

	By(fmt.Sprintf("%d workers (+%d raw) on slots %v while each slot moves %d times, held MIGRATING %v", len(scored.Keys), len(raw.Keys), slots, s.Rounds, s.Hold))
	stop := make(chan struct{})
	done := make(chan struct{}, 2)
	go func() { scored.Run(ctx, stop); done <- struct{}{} }()
	go func() { raw.Run(ctx, stop); done <- struct{}{} }()
	r := run{clock: clock, scored: scored, raw: raw}
	var err error
	for range s.Rounds {
		for _, sl := range slots {
			_, err = fault.Apply(ctx, cluster, fault.MoveSlot{Slot: sl, To: -1, Hold: s.Hold})
			if err != nil {
				break
			}
			r.moves++
		}
		if err != nil {
			break
		}
	}
	// A last stretch of traffic after the final move: reads here start after
	// every migration, so a stale slot map shows. A duration, not a wait.
	time.Sleep(200 * time.Millisecond)
	close(stop)
	<-done
	<-done
	r.faults = harness.Faults(ctx) // both columns judge this run
	harness.MustConfirm(err, cfg.Seed)
	By("reading every key back through a fresh correct pool")
	fresh := routing.Wrap(harness.Pool(ctx, b, cluster), routing.Options{})
	scored.ReadBack(ctx, fresh)
	raw.ReadBack(ctx, fresh)
	r.absorbed = absorbed.Load()
	r.timeline = harness.Timeline(history.History{Scenario: name, Seed: cfg.Seed, Began: clock.Began(),
		Ops:    append(workload.TimelineOps(string(b)+" routing.Wrap", scored.Ops()), workload.TimelineOps(string(b)+" raw pool", raw.Ops())...),
		Faults: harness.HistoryWindows(clock.Began(), r.faults)})
	return r
}

// kinds counts error kinds among non-final operations.
func kinds(ops []judge.Op) map[string]int {
	m := map[string]int{}
	for _, o := range ops {
		if !o.Final && o.ErrKind != "" {
			m[o.ErrKind]++
		}
	}
	return m
}

func redirectsIn(m map[string]int) int {
	return m[string(client.KindMoved)] + m[string(client.KindAsk)] + m[string(client.KindTryAgain)]
}

// pinnedRun drives the workload through a single-node pool pinned to the
// first primary — a client that ignores MOVED — on keys owned elsewhere,
// optionally through the call path that swallows redirects, and reads back
// with a correct pool.
func pinnedRun(ctx context.Context, b client.Backend, name string, swallow bool) []judge.Op {
	GinkgoHelper()
	rng := cfg.Rand(name)
	owner := cluster.Primaries()[0]
	var slots []int
	for len(slots) < 2 {
		sl := rng.IntN(slot.Count)
		n, err := cluster.NodeForSlot(ctx, sl)
		Expect(err).NotTo(HaveOccurred())
		if n != owner {
			slots = append(slots, sl)
		}
	}
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner.Addr()}, ClientName: "slotgate-pinned"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	var pool client.Pool = p
	if swallow {
		pool = traffic.SwallowRedirects(p)
	}
	tag := fmt.Sprintf("%x", rng.Uint32())
	w := &workload.Routing{Pool: pool, Clock: traffic.ClockOf(ctx), Keys: keysFor("p"+tag, slots, 1), Tag: "p" + tag}
	stop := make(chan struct{})
	time.AfterFunc(150*time.Millisecond, func() { close(stop) })
	w.Run(ctx, stop)
	w.ReadBack(ctx, routing.Wrap(harness.Pool(ctx, b, cluster), routing.Options{}))
	return w.Ops()
}

func acknowledged(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	name := "routing/acknowledged/" + string(b)
	r := migrations.Get(ctx, b)
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults, ev.Timeline = r.faults, r.timeline
	ops := r.scored.Ops()
	result := judge.Acknowledged.Judge(judge.AcknowledgedInput{Ops: ops, MinOps: 20 * s.migrations()})
	if r.moves < s.migrations() {
		result = check.All("routing-acknowledged", result, check.Result{Status: check.Unknown, Message: fmt.Sprintf("only %d of %d migrations ran", r.moves, s.migrations())})
	}
	rawOps := r.raw.Ops()
	ev.Metrics = map[string]float64{"operations": float64(len(ops)), "migrations": float64(r.moves), "redirects_absorbed": float64(r.absorbed), "raw_operations": float64(len(rawOps)), "raw_redirects_handed_back": float64(redirectsIn(kinds(rawOps)))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s pool on the same slots (not scored here): %s", pool.Version(), judge.Acknowledged.Judge(judge.AcknowledgedInput{Ops: rawOps, MinOps: 1}).Message))

	By("negative controls: a pool pinned to one primary that swallows MOVED; a stale read")
	swallowed := pinnedRun(ctx, b, name+"/swallow", true)
	staleOps, ok := judge.StaleRead(ops)
	stale := harness.SelfTest("stale-read", "a read answered from a cache that missed the newer acknowledged write (the recorded history with one read replaced by the previous value)", judge.Acknowledged.Judge(judge.AcknowledgedInput{Ops: staleOps, MinOps: 1}))
	if !ok {
		stale = harness.NotExercised(stale, "the history has no read to replace")
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("swallow-redirects", "a client pinned to the old owner that treats MOVED as success: writes acknowledged that never landed", judge.Acknowledged.Judge(judge.AcknowledgedInput{Ops: swallowed, MinOps: 1})),
		stale,
	)
}

func redirects(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	name := "routing/redirects/" + string(b)
	r := migrations.Get(ctx, b)
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults, ev.Timeline = r.faults, r.timeline
	ops := r.scored.Ops()
	result := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: judge.Outcomes(ops), MinOps: 20 * s.migrations()})
	if r.moves < s.migrations() {
		result = check.All("no-errors", result, check.Result{Status: check.Unknown, Message: fmt.Sprintf("only %d of %d migrations ran", r.moves, s.migrations())})
	}
	rawOps := r.raw.Ops()
	rawKinds := kinds(rawOps)
	ev.Metrics = map[string]float64{"operations": float64(len(ops)), "migrations": float64(r.moves), "redirects_absorbed": float64(r.absorbed), "raw_operations": float64(len(rawOps)), "raw_redirects_handed_back": float64(redirectsIn(rawKinds))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("the redirect-absorbing path re-sent %d MOVED/ASK/TRYAGAIN replies the client library handed back", r.absorbed),
		fmt.Sprintf("raw %s pool on the same slots: error kinds %v over %d operations", pool.Version(), rawKinds, len(rawOps)))

	By("negative control: a pool pinned to one primary, which ignores MOVED")
	pinned := pinnedRun(ctx, b, name+"/pinned", false)
	ctl := harness.Variant("pinned-to-old-owner", "a client that ignores MOVED and keeps sending to one primary after the slot left it", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: judge.Outcomes(pinned), MinOps: 1}))
	pk := kinds(pinned)
	ctl = harness.Premise(ctl, pk[string(client.KindMoved)] > 0, "no MOVED seen: the pinned pool never met a slot that left its primary")
	ctl.Observed += fmt.Sprintf(" (error kinds %v)", pk)
	// Client admission: the raw pool ran on keys of the same migrating
	// slots. It met the requirement only if no redirect reached it and the
	// library handed none back to the wrapper on the scored keys either.
	rawRedirects := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: judge.Outcomes(rawOps), MinOps: 1})
	if rawRedirects.Status == check.Pass && r.absorbed > 0 {
		rawRedirects = check.Result{Status: check.Fail, Message: fmt.Sprintf("no error on its own %d operations this run, but the same library handed %d MOVED/ASK/TRYAGAIN back to the wrapper on the scored keys", len(rawOps), r.absorbed)}
	}
	if r.moves < s.migrations() { // as the scored result: the run is incomplete
		rawRedirects = check.Result{Status: check.Unknown, Message: fmt.Sprintf("only %d of %d migrations ran (raw pool: %s)", r.moves, s.migrations(), rawRedirects.Message)}
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementRedirects, Client: pool.Version(), Path: harness.LibraryPath(b, "ClusterClient.Do (its own MOVED/ASK following, MaxRedirects)", "Client.Do (its own MOVED/ASK following)"), Raw: rawRedirects, Wrapped: result,
		Wrapper:  "impl/routing.Wrap (re-sends a MOVED/ASK/TRYAGAIN the library hands back)",
		Evidence: fmt.Sprintf("The raw %s cluster pool on keys of the migrating slots during %d migrations (error kinds %v over %d operations; %d redirects absorbed by the wrapper on the scored keys).", pool.Version(), r.moves, rawKinds, len(rawOps), r.absorbed)})
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}
