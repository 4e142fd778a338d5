package guards_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/guard"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/guards/judge"
	"github.com/slotgate/slotgate/rows/guards/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowGuards

var _ = Describe("guards", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "guards/admission/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "the replay guard admits each event id exactly once and the limiter at most its limit per window per subject, with callers racing while the keys' slots migrate (ASK/MOVED) (000 §System Model, Replay guard / rate limit)",
				Run:  func(ctx SpecContext) report.Check { return admission(ctx, b) },
			},
			harness.Scenario{
				Name: "guards/calls/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "every replay-guard and limiter call away from a slot move succeeds: per-key atomic, safe once routed (000 §System Model, Replay guard / rate limit)",
				Run:  func(ctx SpecContext) report.Check { return calls(ctx, b) },
			},
		)
	}
})

// guardScale sizes one run: callers racing Keys event ids and Keys
// subjects per round on two slots, while the slots move Moves times.
type guardScale struct {
	Keys, Callers               int
	Limit                       int64
	Moves                       int
	Hold, Before, After, Settle time.Duration
	MinContended, MinDuringMove int
}

func scaleOf() guardScale {
	s := guardScale{Keys: 3, Callers: 6, Limit: 2, Moves: 2, Hold: 400 * time.Millisecond,
		Before: 500 * time.Millisecond, After: 2 * time.Second, Settle: time.Second, MinContended: 20, MinDuringMove: 2}
	if cfg.Profile == harness.ProfileFull {
		s.Keys, s.Callers, s.Moves, s.Hold, s.Before, s.After, s.MinContended, s.MinDuringMove = 4, 8, 6, time.Second, 2*time.Second, 3*time.Second, 200, 20
	}
	return s
}

// window is the guards' TTL and the limiter's window: longer than a run,
// so no key expires mid-run and every subject's hits share one window.
const window = time.Minute

// guardRun is one backend's run: the correct guards, the read-then-write
// mutant and the guards over a pool pinned to one node, all racing on
// their own keys while the same slots move. Both columns judge it.
type guardRun struct {
	clock                   *history.Clock
	correct, mutant, pinned []judge.Call
	moves                   []judge.Move
	faults                  []report.FaultWindow
	slots                   []int
	pinnedTo                string
}

var runs = harness.NewOnce(run)

func run(ctx SpecContext, b client.Backend) *guardRun {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand("guards/run/" + string(b))
	slots := harness.DistinctSlots(rng, 2)
	clock := traffic.ClockOf(ctx)
	pool := harness.Pool(ctx, b, cluster)
	owner, err := cluster.SlotOwner(ctx, slots[0])
	Expect(err).NotTo(HaveOccurred())
	// A client that follows no redirect: the guards are safe once routed,
	// and this one stops being routed when its slot moves away.
	pinned, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner.Addr()}, ClientName: "slotgate-guards-pinned"}))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pinned.Close)

	tag := fmt.Sprintf("%s-%x", b, rng.Uint32())
	contention := func(name string, p client.Pool, m guard.Mutant, slots []int) *workload.Contention {
		return &workload.Contention{Replay: guard.NewReplay(p, window, m), Limiter: guard.NewLimiter(p, s.Limit, window, m),
			Name: name + "-" + tag, Slots: slots, Keys: s.Keys, Callers: s.Callers, Timeout: 2 * time.Second}
	}
	good := contention("ok", pool, guard.MutantNone, slots)
	bad := contention(string(guard.MutantReadThenWrite), pool, guard.MutantReadThenWrite, slots)
	pin := contention("pinned", pinned, guard.MutantNone, slots[:1])

	By(fmt.Sprintf("%d callers race %d event ids and %d subjects per round on slots %v (%s): correct, read-then-write, and pinned to %s on slot %d", s.Callers, s.Keys, s.Keys, slots, b, owner.Name(), slots[0]))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range []*workload.Contention{good, bad, pin} {
		wg.Go(func() { w.Run(ctx, clock, stop) })
	}
	halt := func() { close(stop); wg.Wait() }
	pause(ctx, s.Before)
	var moves []judge.Move
	for i := range s.Moves {
		sl := slots[i%len(slots)]
		By(fmt.Sprintf("fault: slot %d migrates, held MIGRATING %v", sl, s.Hold))
		w, err := fault.Apply(ctx, cluster, fault.MoveSlot{Slot: sl, To: -1, Hold: s.Hold})
		if err != nil {
			halt()
			harness.MustConfirm(err, cfg.Seed)
		}
		hw := w.On(clock)
		moves = append(moves, judge.Move{Slot: sl, Start: hw.Start, End: hw.End})
	}
	pause(ctx, s.After)
	halt()
	r := &guardRun{clock: clock, correct: good.Calls(), mutant: bad.Calls(), pinned: pin.Calls(), moves: moves,
		faults: harness.Faults(ctx), slots: slots, pinnedTo: owner.Name()}
	harness.RecordOps(ctx, clock, ops(string(b), r.correct))
	return r
}

// ops are the correct guards' calls as the timeline draws them.
func ops(series string, calls []judge.Call) []history.Op {
	out := make([]history.Op, 0, len(calls))
	for _, c := range calls {
		o := history.Op{Start: c.Call, End: c.Return, Backend: series, Kind: string(c.Guard), Outcome: history.OK, ErrKind: c.ErrKind, Err: c.Err}
		if c.ErrKind != "" {
			o.Outcome = history.Unknown
		}
		out = append(out, o)
	}
	return out
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// admissions is the input both admission checkers take for calls.
func admissions(s guardScale, r *guardRun, calls []judge.Call) judge.Admissions {
	return judge.Admissions{Calls: calls, Moves: r.moves, Limit: s.Limit, Window: window, MinContended: s.MinContended, MinDuringMove: s.MinDuringMove}
}

func admission(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	r := runs.Get(ctx, b)
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Faults = r.faults
	good, bad := admissions(s, r, r.correct), admissions(s, r, r.mutant)
	result := check.All("guards-admission", judge.ReplayOnce.Judge(good), judge.LimitHeld.Judge(good))
	ev.Metrics = map[string]float64{"calls": float64(len(r.correct)), "mutant_calls": float64(len(r.mutant)), "moves": float64(len(r.moves)), "limit": float64(s.Limit), "callers_per_key": float64(s.Callers)}
	ev.Observed = append(ev.Observed, fmt.Sprintf("slots %v moved %d times; error kinds (scored in guards/calls): %v", r.slots, len(r.moves), judge.ErrKinds(r.correct)))
	why := "checks with GET and writes with SET in a second round trip: callers racing one key all pass the check"
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("replay/"+string(guard.MutantReadThenWrite), "replay guard "+why+" — a replayed event admitted twice", judge.ReplayOnce.Judge(bad)),
		harness.Variant("limit/"+string(guard.MutantReadThenWrite), "rate limiter "+why+" — a subject admitted over its limit", judge.LimitHeld.Judge(bad)),
	)
}

func calls(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	r := runs.Get(ctx, b) // the run guards/admission judges
	harness.UseClock(ctx, r.clock)
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Faults = r.faults
	result := judge.ErrorsOutside.Judge(judge.Outside{Calls: r.correct, Moves: r.moves, Settle: s.Settle, MinOps: 100})
	ev.Metrics = map[string]float64{"calls": float64(len(r.correct)), "pinned_calls": float64(len(r.pinned)), "moves": float64(len(r.moves))}
	ev.Observed = append(ev.Observed, fmt.Sprintf("error kinds over the whole run: %v", judge.ErrKinds(r.correct)))

	kinds := judge.ErrKinds(r.pinned)
	ctl := harness.Variant("pinned-no-redirects", fmt.Sprintf("guards over a client pinned to %s, slot %d's first owner, that follows no redirect: once the slot moves away every call is refused with MOVED", r.pinnedTo, r.slots[0]),
		judge.ErrorsOutside.Judge(judge.Outside{Calls: r.pinned, Moves: r.moves, Settle: s.Settle, MinOps: 1}))
	ctl = harness.Premise(ctl, kinds[string(client.KindMoved)] > 0 && kinds[string(client.KindMoved)]+kinds[string(client.KindAsk)] == sum(kinds), "the pinned calls failed for another reason than MOVED/ASK")
	ctl.Observed += fmt.Sprintf(" (error kinds %v)", kinds)
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
