package failuredrills_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/rows/failuredrills/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowFailureDrills

// Tolerances of the errors column, stated here and in every message: while
// a shard fails over, the healthy shards may go at most maxGap (the
// fixture's cluster-node-timeout) without a successful write and lose at most
// maxFailPct of their writes to client-side errors (server CLUSTERDOWN
// refusals are counted apart).
const (
	maxGap     = 2 * time.Second
	maxFailPct = 1.0
	// lossWindow is how long before a kill an acknowledged write may be
	// lost and still count as the asynchronous-replication loss the spec
	// accepts (no WAIT); it is reported, never hidden.
	lossWindow = time.Second
)

var _ = Describe("failure-drills", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "failure-drills/dispatch/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "while a shard's primary fails over (graceful and killed), writes to healthy shards keep succeeding and the failed shard recovers; halt windows measured (000 §Conformance, Failure drills; §Client Architecture: dead primary halts dispatch)",
				Run:  func(ctx SpecContext) report.Check { return dispatch(ctx, b) },
			},
			harness.Scenario{
				Name: "failure-drills/acked-writes/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "every acknowledged write survives a failover except those a killed primary acknowledged just before dying, which are counted and reported (000 §Conformance, Failure drills)",
				Run:  func(ctx SpecContext) report.Check { return ackedWrites(ctx, b) },
			},
		)
	}
})

type drillScale struct {
	KeysPerShard, Failovers        int
	Pace, Before, Between, Recover time.Duration
}

func scaleOf() drillScale {
	if cfg.Profile == harness.ProfileFull {
		// NOTE: graceful and killed failovers alternate: 5 of each per
		// backend, so every client's kill halt has min/median/max over 5.
		return drillScale{KeysPerShard: 8, Failovers: 10, Pace: 2 * time.Millisecond, Before: time.Second, Between: 2 * time.Second, Recover: 30 * time.Second}
	}
	// NOTE: one graceful and two killed failovers per backend (the smoke
	// suite stays under ~90 s); a go-redis halt longer than Recover is
	// reported unrecovered, not waited for.
	return drillScale{KeysPerShard: 4, Failovers: 3, Pace: 5 * time.Millisecond, Before: 500 * time.Millisecond, Between: time.Second, Recover: 8 * time.Second}
}

// drillRun is one backend's drills: the scored workload on the raw cluster
// pool and the halt-all control workload, recorded during the same
// failovers.
type drillRun struct {
	clock        *traffic.Clock
	ops, haltAll []judge.DrillOp
	drills       []judge.Drill
	until        time.Duration
	faults       []fault.Window
	timeline     *report.Timeline
	// The halt-all control runs until the first killed shard is served
	// again: haltDrills drills, measured until haltUntil.
	haltDrills int
	haltUntil  time.Duration
	// subHalts are the subscription client's halts per drill; naivePool
	// and naiveSubHalts are the halt-budget controls' (a go-redis pool and
	// subscription client whose slot map is pinned at start), rawPool and
	// rawSubHalts the raw library's for the admission (go-redis with only
	// its own topology refresh), all run up to the first killed shard
	// until the controls' halts passed the budget: naiveDrills drills,
	// measured until naiveUntil.
	subHalts, naiveSubHalts, rawSubHalts []judge.RoleHalt
	subHistory                           history.SubscriptionHistory
	subTopics                            map[string]int
	naivePool, rawPool                   []judge.DrillOp
	naiveDrills                          int
	naiveUntil                           time.Duration
	// swallow is the acked-writes column's variant: a writer pinned to the
	// first drilled shard's primary through traffic.SwallowRedirects,
	// run during that first (graceful) failover only.
	swallow []judge.DrillOp
	// faultErr is fault.Apply's error when a failover could not be injected
	// or confirmed: the run stopped there, at faultAt. A failure in the
	// drills before it stands; otherwise the column is inconclusive (the
	// harness's failure, not the client's).
	faultErr error
	faultAt  time.Duration
}

// drills runs the drills for each backend once; both of b's scenarios
// judge the same run (a failover costs seconds, and the two columns are two
// views of it).
var drills = harness.NewOnce(runDrills)

func runDrills(ctx SpecContext, b client.Backend) *drillRun {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand("failure-drills/" + string(b))
	keysFor := func(prefix string) []workload.Key {
		per := map[int]int{}
		var out []workload.Key
		for i := 0; len(out) < s.KeysPerShard*len(cluster.Primaries()); i++ {
			k := fmt.Sprintf("dr:%s:%x:%d", prefix, rng.Uint32(), i)
			n, err := cluster.NodeForSlot(ctx, slot.Of(k))
			Expect(err).NotTo(HaveOccurred())
			if per[n.Shard()] < s.KeysPerShard {
				per[n.Shard()]++
				out = append(out, workload.Key{Key: k, Shard: n.Shard()})
			}
		}
		return out
	}
	clock := traffic.ClockOf(ctx)
	scored := &workload.Writers{Pool: harness.Pool(ctx, b, cluster), Clock: clock, Keys: keysFor("s"), Timeout: time.Second, Pace: s.Pace}
	// The control's halt outlasts maxGap twice over, so a halt of the
	// healthy shards is unmistakable; it need not last longer (a halted
	// writer holds every other one for up to Budget).
	haltAll := &routing.HaltAll{Pool: harness.Pool(ctx, b, cluster), Budget: 2 * maxGap}
	halting := &workload.Writers{Pool: haltAll, Clock: clock, Keys: keysFor("h"), Timeout: time.Second, Pace: s.Pace}
	// The halt-budget controls: a go-redis pool and a go-redis
	// subscription client (publishing through impl's go-redis pool, so
	// only the subscriber is naive) whose slot maps stay the one they read
	// at start (client.Options.StaticSlotMap), so they keep dialing a
	// killed primary on every go-redis release: with the library's own
	// refresh alone the halt would end at its periodic reload, 10 s before
	// v9.21, and such a control recovered inside the budget. The timeouts
	// are set rather than inherited (go-redis's defaults changed between
	// releases); they bound each try, not the halt.
	cred := cluster.Credentials()
	topo := client.Options{Backend: client.BackendGoRedis, Username: cred.Username, Password: cred.Password, TLS: cred.TLS}
	ctlOpts := topo
	ctlOpts.NaiveTopology, ctlOpts.StaticSlotMap, ctlOpts.DialTimeout, ctlOpts.ReadTimeout = true, true, controlTimeout, controlTimeout
	// The raw library for the admission: go-redis with only its own
	// topology handling (NaiveTopology), whatever its release does.
	rawOpts := topo
	rawOpts.NaiveTopology = true
	topoPool := func(o client.Options, name string) client.Pool {
		o.Mode, o.Addrs, o.ClientName = client.ModeCluster, cluster.Addrs(), name
		p, err := client.NewPool(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Close)
		return p
	}
	naive := &workload.Writers{Pool: topoPool(ctlOpts, "slotgate-naive-topology"), Clock: clock, Keys: keysFor("n"), Timeout: time.Second, Pace: s.Pace}
	raw := &workload.Writers{Pool: topoPool(rawOpts, "slotgate-raw-topology"), Clock: clock, Keys: keysFor("r"), Timeout: time.Second, Pace: s.Pace}
	subs := startSubRole(ctx, client.Options{Backend: b}, harness.Pool(ctx, b, cluster), clock, rng, "slotgate-drill-sub-"+string(b))
	goRedisPool := harness.Pool(ctx, client.BackendGoRedis, cluster)
	naiveSubs := startSubRole(ctx, ctlOpts, goRedisPool, clock, rng, "slotgate-drill-naive-sub")
	rawSubs := startSubRole(ctx, rawOpts, goRedisPool, clock, rng, "slotgate-drill-raw-sub")
	budget := cfg.HaltBudget
	stop, stopHalting, stopNaive := make(chan struct{}), make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 5)
	go func() { scored.Run(ctx, stop); done <- struct{}{} }()
	go func() { halting.Run(ctx, stopHalting); done <- struct{}{} }()
	go func() { naive.Run(ctx, stopNaive); done <- struct{}{} }()
	go func() { raw.Run(ctx, stopNaive); done <- struct{}{} }()
	r := &drillRun{clock: clock}
	var err error
	stopControls := func() {
		close(stopNaive)
		naiveSubs.stop()
		rawSubs.stop()
		r.naiveDrills, r.naiveUntil = len(r.drills), clock.Now()
	}
	time.Sleep(s.Before) // a duration: traffic before the first fault
	shards := rng.Perm(len(cluster.Primaries()))
	swallow, stopSwallow := swallowWriter(ctx, b, shards[0], clock, s)
	go func() { swallow.Run(ctx, stopSwallow.C); done <- struct{}{} }()
	for i := range s.Failovers {
		// Every other failover is graceful, the last one always a kill; a
		// killed shard is not drilled again (its old primary stays down).
		mode := fault.FailoverGraceful
		if i%2 == 1 || i == s.Failovers-1 {
			mode = fault.FailoverKill
		}
		shard := shards[i%len(shards)]
		By(fmt.Sprintf("fault: %s failover of shard %d under load", mode, shard))
		d := judge.Drill{Shard: shard, Mode: string(mode), Start: clock.Now()}
		var w fault.Window
		w, err = fault.Apply(ctx, cluster, fault.Failover{Shard: shard, Mode: mode})
		d.End = clock.Now()
		if err != nil {
			r.faultErr, r.faultAt = err, d.Start
			break
		}
		// The drill starts when the fault did: Apply may first wait out
		// the shard's vote quarantine, while the shard is still served.
		d.Start = d.End - time.Since(w.Start)
		r.drills = append(r.drills, d)
		r.faults = append(r.faults, w)
		// Each role's halt is measured to its end, or until it is over
		// its budget (then it fails however long it would have lasted).
		limit := max(s.Recover, min(max(budget.Pool, budget.Subscription), maxControlWait)+250*time.Millisecond)
		waitUntil(ctx, d.Start+limit, clock, func() bool {
			return served(scored, shard, d.Start) && subs.delivered(shard, d.Start)
		})
		stopSwallow.Stop() // the variant judges the first drill only
		if mode == fault.FailoverKill {
			if r.haltDrills == 0 {
				// One killed failover is enough to show the control halts.
				// It runs on until its healthy shards have been silent
				// for longer than maxGap since their last success (see
				// maxKillLag), or for as long as it can halt them.
				last := d.Start
				waitUntil(ctx, d.Start+maxKillLag+haltAll.Budget+250*time.Millisecond, clock, func() bool {
					if servedElsewhere(halting, shard, last) {
						last = clock.Now()
					}
					return clock.Now()-last > maxGap+250*time.Millisecond
				})
				close(stopHalting)
				r.haltDrills, r.haltUntil = len(r.drills), clock.Now()
			}
			if r.naiveDrills == 0 {
				// The naive controls and the raw library are judged by the
				// same budgets, as their longest silence on the shard:
				// they run on until each has been silent for longer than
				// its budget, or came back after a silence.
				wait := min(max(budget.Pool, budget.Subscription), maxControlWait) + 250*time.Millisecond
				waitSilent(ctx, clock, d.Start, wait, d.Start+wait+maxKillLag,
					func(t time.Duration) bool { return served(naive, shard, t) },
					func(t time.Duration) bool { return naiveSubs.delivered(shard, t) },
					func(t time.Duration) bool { return served(raw, shard, t) },
					func(t time.Duration) bool { return rawSubs.delivered(shard, t) })
				stopControls()
			}
		}
		time.Sleep(s.Between) // a duration: traffic between drills
		// The drill is judged up to here: the Reset below kills every
		// connection and fails the shard back — the harness's outage, not
		// the drill's.
		r.drills[len(r.drills)-1].Until = clock.Now()
		// Every kill drill starts from the built topology: Reset brings the
		// killed primary back (as the primary, its replica demoted).
		// NOTE: without it a second kill meets a cluster that still lists
		// the dead node; go-redis then sent healthy-shard writes to the
		// dead node (EOF) for ~5 s in one run — a different drill.
		if mode == fault.FailoverKill && i < s.Failovers-1 {
			Expect(cluster.Reset(ctx)).To(Succeed())
		}
	}
	close(stop)
	stopSwallow.Stop()
	if r.haltDrills == 0 {
		close(stopHalting)
		r.haltDrills, r.haltUntil = len(r.drills), clock.Now()
	}
	if r.naiveDrills == 0 {
		stopControls()
	}
	// The run ends here: a halted call path may hold its last command for
	// a while yet, and that tail is not part of any drill.
	r.until = clock.Now()
	if r.faultErr != nil {
		// The judged history ends where the unconfirmed fault began: what
		// followed is not a drill this run can vouch for.
		r.until = r.faultAt
	}
	r.subHalts, r.subHistory = subs.halts(r.drills, r.until)
	r.subTopics = subs.topicShard
	r.naiveSubHalts, _ = naiveSubs.halts(r.drills[:r.naiveDrills], r.naiveUntil)
	r.rawSubHalts, _ = rawSubs.halts(r.drills[:r.naiveDrills], r.naiveUntil)
	<-done
	<-done
	<-done
	<-done
	<-done
	if _, ok := fault.NotConfirmed(err); err != nil && !ok {
		Expect(err).NotTo(HaveOccurred())
	}
	By("reading every key back through a fresh pool seeded with the running nodes")
	var seeds []string
	for _, n := range cluster.Nodes() {
		if n.State() == fixtures.NodeRunning {
			seeds = append(seeds, n.Addr())
		}
	}
	fresh, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: seeds, ClientName: "slotgate-readback"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(fresh.Close)
	scored.ReadBack(ctx, fresh)
	swallow.ReadBack(ctx, fresh)
	r.ops, r.haltAll, r.naivePool, r.rawPool, r.swallow = scored.Ops(), halting.Ops(), naive.Ops(), raw.Ops(), swallow.Ops()
	r.timeline = drillTimeline(b, r, clock)
	return r
}

// stopper closes C once, whoever asks first.
type stopper struct {
	C    chan struct{}
	once sync.Once
}

func (s *stopper) Stop() { s.once.Do(func() { close(s.C) }) }

// drillTimeline draws the run for the report: the scored pool beside the
// halt-all and naive-topology controls, the failovers shaded, and each
// drill's measured halts (the drilled shard's writes, the subscription
// client) as spans.
func drillTimeline(b client.Backend, r *drillRun, clock *traffic.Clock) *report.Timeline {
	h := history.History{Scenario: "failure-drills/" + string(b), Seed: cfg.Seed, Began: clock.Began(), Faults: harness.HistoryWindows(clock.Began(), harness.Windows(r.faults...))}
	h.Ops = append(workload.TimelineOps(string(b), r.ops), workload.TimelineOps("halt-all (control)", r.haltAll)...)
	h.Ops = append(h.Ops, workload.TimelineOps("naive go-redis (control)", r.naivePool)...)
	h.Ops = append(h.Ops, workload.TimelineOps("raw go-redis (admission)", r.rawPool)...)
	for _, dh := range judge.DrillHalts(r.ops, r.drills, r.until) {
		h.Spans = append(h.Spans, history.Span{Name: "pool halt", Client: fmt.Sprintf("shard %d", dh.Drill.Shard), Start: dh.Drill.Start, End: dh.Drill.Start + dh.Dead})
	}
	for i, sh := range r.subHalts {
		if i < len(r.drills) {
			d := r.drills[i]
			h.Spans = append(h.Spans, history.Span{Name: "subscription halt", Client: fmt.Sprintf("shard %d", d.Shard), Start: d.Start, End: d.Start + sh.Halt})
		}
	}
	return harness.Timeline(h)
}

// swallowWriter is the acked-writes column's real bad variant: a writer on
// its own keys of shard, through a connection pinned to the shard's
// primary and traffic.SwallowRedirects (the `let _ = conn.set(..)`
// bug: a MOVED answered as success). When the drill hands the shard to its
// replica, the old primary answers MOVED and the variant acknowledges
// writes that never landed — acknowledged writes lost outside any kill
// window, which judge.DrillAccounted must catch.
func swallowWriter(ctx context.Context, b client.Backend, shard int, clock *traffic.Clock, s drillScale) (*workload.Writers, *stopper) {
	GinkgoHelper()
	rng := cfg.Rand("failure-drills/swallow/" + string(b))
	var keys []workload.Key
	var owner string
	for i := 0; len(keys) < s.KeysPerShard; i++ {
		k := fmt.Sprintf("dr:w:%x:%d", rng.Uint32(), i)
		n, err := cluster.NodeForSlot(ctx, slot.Of(k))
		Expect(err).NotTo(HaveOccurred())
		if n.Shard() == shard {
			keys, owner = append(keys, workload.Key{Key: k, Shard: shard}), n.Addr()
		}
	}
	cred := cluster.Credentials()
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner}, ClientName: "slotgate-drill-swallow",
		Username: cred.Username, Password: cred.Password, TLS: cred.TLS})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Close)
	pool := routing.Wrap(traffic.SwallowRedirects(p), routing.Options{})
	return &workload.Writers{Pool: pool, Clock: clock, Keys: keys, Timeout: time.Second, Pace: s.Pace}, &stopper{C: make(chan struct{})}
}

// controlTimeout is the naive-topology controls' dial and read timeout,
// set rather than inherited: go-redis's defaults differ between releases
// (the cluster read timeout was 3 s, then 5 s), and a control's hazard must
// not move with them. It bounds one try, as the workloads' 1 s deadline per
// command does; with the slot map pinned it cannot end the halt.
const controlTimeout = time.Second

// maxControlWait caps how long a drill waits for a halt to pass its budget:
// with a budget above it a halt still going is undecided (and the naive
// controls cannot be shown failing, so the cell is blind), and the suite
// does not wait minutes.
const maxControlWait = 30 * time.Second

// maxKillLag bounds how long after a drill began its primary may still
// serve: fault.Failover's window opens before the kill, and a container's
// kill takes a moment. A role's last success in that moment starts the
// silence the halt checkers measure (the longest gap between successes),
// so the controls are waited on from it, not from the drill's start, or a
// control that never recovers can show a silence shorter than its budget.
const maxKillLag = 3 * time.Second

// waitSilent polls every 50 ms until each role has either made no progress
// for longer than quiet, or made progress again after a silence (it came
// back: its halt is decided), or clock passes limit. progress(t) says the
// role succeeded with an operation begun at or after t.
func waitSilent(ctx context.Context, clock *traffic.Clock, from, quiet, limit time.Duration, progress ...func(t time.Duration) bool) {
	last := make([]time.Duration, len(progress))
	back := make([]bool, len(progress))
	for i := range last {
		last[i] = from
	}
	// The limit passing is not a failure: the checker judges the silence.
	_ = wait.Within(ctx, limit-clock.Now(), 50*time.Millisecond, func(context.Context) error {
		now, done := clock.Now(), true
		for i, p := range progress {
			if p(last[i]) {
				back[i] = back[i] || now-last[i] > silence
				last[i] = now
			}
			done = done && (back[i] || now-last[i] > quiet)
		}
		if !done {
			return fmt.Errorf("a role neither silent for %v nor back", quiet)
		}
		return nil
	})
}

// silence is a pause in a role's progress long enough that progress after
// it is a recovery, not the pace of its workload (publishers every 10 ms,
// writers every few ms).
const silence = 500 * time.Millisecond

// waitUntil polls done every 50 ms until it holds or clock passes until;
// until passing is not a failure (the checker judges what was recorded).
func waitUntil(ctx context.Context, until time.Duration, clock *traffic.Clock, done func() bool) {
	_ = wait.Within(ctx, until-clock.Now(), 50*time.Millisecond, func(context.Context) error {
		if !done() {
			return fmt.Errorf("not yet")
		}
		return nil
	})
}

// served says w recorded a successful write on shard that started at or
// after since.
func served(w *workload.Writers, shard int, since time.Duration) bool {
	for _, o := range w.Ops() {
		if o.Shard == shard && o.Call >= since && o.Acked() {
			return true
		}
	}
	return false
}

// servedElsewhere says w recorded a successful write on a shard other than
// shard that started at or after since.
func servedElsewhere(w *workload.Writers, shard int, since time.Duration) bool {
	for _, o := range w.Ops() {
		if o.Shard != shard && o.Call >= since && o.Acked() {
			return true
		}
	}
	return false
}

// spread is min/median/max of ds.
func spread(ds []time.Duration) (lo, med, hi time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[0], s[len(s)/2], s[len(s)-1]
}

// haltMetrics puts the client's dispatch-halt windows into the evidence:
// per failover mode, the drilled shard's halt (start → first success)
// min/median/max over the drills, how many drills that is and how many did
// not recover within the run (their halt is a lower bound); and the healthy
// shards' longest gaps likewise.
func haltMetrics(ev *report.Evidence, version string, halts []judge.DrillHalt) {
	byMode := map[string][]time.Duration{}
	var healthy []time.Duration
	for _, h := range halts {
		byMode[h.Drill.Mode] = append(byMode[h.Drill.Mode], h.Dead)
		healthy = append(healthy, h.Healthy)
		if !h.Recovered {
			ev.Metrics["halt_"+h.Drill.Mode+"_unrecovered"]++
		}
	}
	modes := make([]string, 0, len(byMode))
	for mode := range byMode {
		modes = append(modes, mode)
	}
	sort.Strings(modes)
	for _, mode := range modes {
		ds := byMode[mode]
		lo, med, hi := spread(ds)
		ev.Metrics["halt_"+mode+"_drills"] = float64(len(ds))
		ev.Metrics["halt_"+mode+"_min_ms"] = float64(lo.Milliseconds())
		ev.Metrics["halt_"+mode+"_median_ms"] = float64(med.Milliseconds())
		ev.Metrics["halt_"+mode+"_max_ms"] = float64(hi.Milliseconds())
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s dispatch halt of the drilled shard over %d %s failovers: min %v, median %v, max %v (%.0f did not recover within the run: a lower bound)",
			version, len(ds), mode, lo.Round(time.Millisecond), med.Round(time.Millisecond), hi.Round(time.Millisecond), ev.Metrics["halt_"+mode+"_unrecovered"]))
	}
	lo, med, hi := spread(healthy)
	ev.Metrics["healthy_gap_min_ms"] = float64(lo.Milliseconds())
	ev.Metrics["healthy_gap_median_ms"] = float64(med.Milliseconds())
	ev.Metrics["healthy_longest_gap_ms"] = float64(hi.Milliseconds())
}

func dispatch(ctx SpecContext, b client.Backend) report.Check {
	pool := harness.Pool(ctx, b, cluster)
	r := drills.Get(ctx, b)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults, ev.Timeline = harness.Windows(r.faults...), r.timeline
	halts := judge.DrillHalts(r.ops, r.drills, r.until)
	harness.UseClock(ctx, r.clock)
	for _, h := range halts {
		// The halt as the pool saw it, from the drill's start.
		harness.Spans(ctx, history.Span{Name: fmt.Sprintf("dispatch halt (%s failover of shard %d)", h.Drill.Mode, h.Drill.Shard), Client: pool.Version(), Start: h.Drill.Start, End: h.Drill.Start + h.Dead})
	}
	budget := cfg.HaltBudget
	result := check.All("drill-dispatch", judge.DrillDispatch.Judge(judge.DispatchInput{Halts: halts, MaxGap: maxGap, MaxFailPct: maxFailPct}),
		judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: judge.PoolHalts(halts), Budget: budget.Pool}), judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: r.subHalts, Budget: budget.Subscription}))
	if inc, ok := harness.FaultResult("drill-dispatch", r.faultErr); ok {
		result = check.BeforeUnconfirmed(result, inc)
		if result.Status == check.Fail {
			ev.Observed = append(ev.Observed, check.UnconfirmedAfter(result, inc))
		}
	}
	ev.Metrics = map[string]float64{"writes": float64(len(r.ops)), "failovers": float64(len(r.drills))}
	haltMetrics(&ev, pool.Version(), halts)
	for i, h := range halts {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s failover of shard %d: drilled shard halted %v (start → first success), healthy shards' longest gap %v, %d/%d healthy writes failed client-side, %d refused CLUSTERDOWN by the server",
			h.Drill.Mode, h.Drill.Shard, h.Dead.Round(time.Millisecond), h.Healthy.Round(time.Millisecond), h.HealthyFails, h.HealthyOps, h.HealthyClusterDown))
		if h.HealthyFails > 0 {
			end := r.until
			if i+1 < len(r.drills) {
				end = r.drills[i+1].Start
			}
			ev.Observed = append(ev.Observed, healthyFailures(r.ops, h.Drill, end))
		}
		ev.Metrics["healthy_clusterdown"] += float64(h.HealthyClusterDown)
		if !h.Recovered {
			ev.Metrics["unrecovered_drills"]++
			ev.Observed = append(ev.Observed, fmt.Sprintf("FINDING: %s did not serve shard %d again within the run (%v after the %s failover began; the cluster had promoted the replica): a dead primary halts dispatch to its slots pending a topology refresh", pool.Version(), h.Drill.Shard, h.Dead.Round(time.Millisecond), h.Drill.Mode))
		}
	}
	roleMetrics(&ev, "sub", r.subHalts)
	for i, h := range r.subHalts {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: subscription client (%s) heard the shard again after %v%s", h.What, pool.Version(), h.Halt.Round(time.Millisecond), lowerBound(h)))
		if h.Halt > budget.Subscription && i < len(r.drills) {
			ev.Observed = append(ev.Observed, subHaltDetail(r.subHistory, r.subTopics, r.drills[i]))
		}
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("halt budgets (--halt-budget): command pool %v, subscription client %v", budget.Pool, budget.Subscription))
	ctl := judge.DrillDispatch.Judge(judge.DispatchInput{Halts: judge.DrillHalts(r.haltAll, r.drills[:r.haltDrills], r.haltUntil), MaxGap: maxGap, MaxFailPct: maxFailPct})
	naivePool := judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: judge.PoolHalts(judge.DrillHalts(r.naivePool, r.drills[:r.naiveDrills], r.naiveUntil)), Budget: budget.Pool})
	naiveSub := judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: r.naiveSubHalts, Budget: budget.Subscription})
	rawPool := judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: judge.PoolHalts(judge.DrillHalts(r.rawPool, r.drills[:r.naiveDrills], r.naiveUntil)), Budget: budget.Pool})
	rawSub := judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: r.rawSubHalts, Budget: budget.Subscription})
	admitDispatch(b, pool.Version(), r.judgedRaw("dispatch-halt", judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: judge.PoolHalts(halts), Budget: budget.Pool}), len(r.drills)), r.judgedRaw("resubscribe-failover", judge.HaltsWithin.Judge(judge.HaltBudgetInput{Halts: r.subHalts, Budget: budget.Subscription}), len(r.drills)), r.judgedRaw("dispatch-halt", rawPool, r.naiveDrills), r.judgedRaw("resubscribe-failover", rawSub, r.naiveDrills), r.cutShort())
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("halt-all", "a call path that stops every command while one primary is dead (spec 000's residual redis-rs behaviour), run on its own keys during the same failovers up to the first killed shard's recovery", ctl),
		harness.Variant("naive-topology-pool", "a go-redis ClusterClient whose slot map is the one it read at start (ClusterOptions.ClusterSlots serving that snapshot to every reload; impl's reload on a failed node off; 1 s dial and read timeouts): it follows MOVED per command but keeps dialing the killed primary, on every go-redis release — run on its own keys during the same failovers up to the first kill, until its halt passed the pool budget", naivePool),
		harness.Variant("naive-topology-subscriber", "a go-redis subscription client whose slot map is pinned the same way (no reload on a broken connection or a MOVED), publishing through impl's go-redis pool: it re-dials the killed primary to resubscribe — its own topics during the same failovers up to the first kill, until its halt passed the subscription budget", naiveSub))
}

// roleMetrics puts one role's halts into the evidence metrics, per mode:
// min/median/max and how many did not recover within the run.
func roleMetrics(ev *report.Evidence, prefix string, halts []judge.RoleHalt) {
	byMode := map[string][]time.Duration{}
	for _, h := range halts {
		mode, _, _ := strings.Cut(h.What, " ")
		byMode[mode] = append(byMode[mode], h.Halt)
		if !h.Recovered {
			ev.Metrics[prefix+"_halt_"+mode+"_unrecovered"]++
		}
	}
	for mode, ds := range byMode {
		lo, med, hi := spread(ds)
		ev.Metrics[prefix+"_halt_"+mode+"_min_ms"] = float64(lo.Milliseconds())
		ev.Metrics[prefix+"_halt_"+mode+"_median_ms"] = float64(med.Milliseconds())
		ev.Metrics[prefix+"_halt_"+mode+"_max_ms"] = float64(hi.Milliseconds())
	}
}

// subHaltDetail says what the publishers and the subscription client did on
// the drilled shard's topic after a drill whose subscription halt was over
// budget: whether the publishes were acknowledged, with how many receivers,
// and the client's subscription events — so the evidence tells a halted
// publish path from a subscription that never came back.
func subHaltDetail(h history.SubscriptionHistory, topics map[string]int, d judge.Drill) string {
	var acked, zero, failed int
	var firstAck time.Duration = -1
	for _, p := range h.Publishes {
		if topics[p.Sub] != d.Shard || p.Sent < d.Start {
			continue
		}
		switch {
		case p.ErrKind != "":
			failed++
		case p.Receivers == 0:
			zero++
			acked++
		default:
			acked++
		}
		if p.ErrKind == "" && firstAck < 0 {
			firstAck = p.Done - d.Start
		}
	}
	var events []string
	for _, e := range h.Events {
		if t, ok := topics[e.Sub]; ok && t == d.Shard && e.At >= d.Start {
			events = append(events, fmt.Sprintf("+%v %s %s", (e.At-d.Start).Round(time.Millisecond), e.Kind, e.Err))
		}
	}
	return fmt.Sprintf("%s failover of shard %d, subscription detail: %d publishes acknowledged (first at +%v; %d with 0 receivers), %d failed; subscription events %v",
		d.Mode, d.Shard, acked, firstAck.Round(time.Millisecond), zero, failed, first(events, 12))
}

func lowerBound(h judge.RoleHalt) string {
	if h.Recovered {
		return ""
	}
	return " (not within the run: a lower bound)"
}

func ackedWrites(ctx SpecContext, b client.Backend) report.Check {
	pool := harness.Pool(ctx, b, cluster)
	r := drills.Get(ctx, b)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Faults, ev.Timeline = harness.Windows(r.faults...), r.timeline
	result := judge.DrillAccounted.Judge(judge.AccountedInput{Ops: r.ops, Drills: r.drills, Window: lossWindow, MinOps: 100})
	if inc, ok := harness.FaultResult("drill-accounted", r.faultErr); ok {
		result = check.All(result.Checker, result, inc)
	}
	lost, keys, _ := judge.DrillLosses(r.ops)
	acked := 0
	for _, o := range r.ops {
		if !o.Final && o.Acked() {
			acked++
		}
	}
	ev.Metrics = map[string]float64{"writes": float64(len(r.ops)), "acked_writes": float64(acked), "keys": float64(keys), "lost_acked_writes": float64(len(lost)), "failovers": float64(len(r.drills))}
	for _, l := range first(lost, 5) {
		ev.Observed = append(ev.Observed, fmt.Sprintf("lost: %s (shard %d) seq %d acknowledged @%v, read back %d", l.Op.Key, l.Op.Shard, l.Op.Seq, l.Op.Return.Round(time.Millisecond), l.Final))
	}
	planted, ok := plantLoss(r.ops, r.drills)
	ctl := harness.SelfTest("hidden-loss", "the recorded history with one key read back one write short, its last acknowledged write outside every kill window: an acknowledged write dropped silently", judge.DrillAccounted.Judge(judge.AccountedInput{Ops: planted, Drills: r.drills, Window: lossWindow, MinOps: 1}))
	if !ok {
		ctl = harness.NotExercised(ctl, "no key outside a killed shard to plant a loss on")
	}
	var swallowDrills []judge.Drill
	if len(r.drills) > 0 {
		swallowDrills = r.drills[:1]
	}
	swallowed := harness.Variant("swallow-redirects", "a writer pinned to the first drilled shard's primary whose call path answers MOVED with success, on its own keys during that graceful failover: after the takeover its writes are acknowledged and never land",
		judge.DrillAccounted.Judge(judge.AccountedInput{Ops: r.swallow, Drills: swallowDrills, Window: lossWindow, MinOps: 1}))
	if len(swallowDrills) == 0 || swallowDrills[0].Mode != string(fault.FailoverGraceful) {
		swallowed = harness.NotExercised(swallowed, "the first drill was not a graceful failover, so the old primary never answered MOVED")
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, swallowed, ctl)
}

func first[T any](xs []T, n int) []T { return xs[:min(n, len(xs))] }

// plantLoss is the hidden-loss control's known-bad history: the read-back
// of one key is set one below its last acknowledged write, a write
// acknowledged outside every kill window of the key's shard (so no
// asynchronous-replication allowance covers it). judge.PlantLoss picks a
// key on a shard no drill killed, and finds none once every shard was
// killed (the full profile kills five times over three shards).
func plantLoss(ops []judge.DrillOp, drills []judge.Drill) ([]judge.DrillOp, bool) {
	last := map[string]judge.DrillOp{}
	for _, o := range ops {
		if !o.Final && o.Acked() && o.Seq > last[o.Key].Seq {
			last[o.Key] = o
		}
	}
	out := append([]judge.DrillOp(nil), ops...)
	for i, o := range out {
		l, ok := last[o.Key]
		if !o.Final || !o.Acked() || !ok || o.Seq != l.Seq {
			continue
		}
		covered := false
		for _, d := range drills {
			covered = covered || (d.Mode == string(fault.FailoverKill) && d.Shard == o.Shard && l.Return >= d.Start-lossWindow && l.Return <= d.End)
		}
		if !covered {
			o.Seq--
			out[i] = o
			return out, true
		}
	}
	return out, false
}

// healthyFailures describes the client-side failures on healthy shards
// during one drill: by kind, with the first error and when it came.
func healthyFailures(ops []judge.DrillOp, d judge.Drill, end time.Duration) string {
	kinds := map[string]int{}
	var firstErr string
	var firstAt, lastAt time.Duration
	for _, o := range ops {
		if o.Final || o.Shard == d.Shard || o.Call < d.Start || o.Return > end || o.Acked() || o.ErrKind == "CLUSTERDOWN" {
			continue
		}
		if len(kinds) == 0 && firstErr == "" {
			firstErr, firstAt = o.Err, o.Call-d.Start
		}
		kinds[fmt.Sprintf("shard %d %s", o.Shard, o.ErrKind)]++
		lastAt = o.Return - d.Start
	}
	return fmt.Sprintf("%s failover of shard %d: healthy-shard failures %v from +%v to +%v after the drill began; first: %s", d.Mode, d.Shard, kinds, firstAt.Round(time.Millisecond), lastAt.Round(time.Millisecond), firstErr)
}

// admitDispatch records the raw clients' admission for the dispatch halt
// and the subscription client's recovery after a failover, from the same
// drills. go-redis: the raw-topology pool and subscriber are the raw
// library (NaiveTopology: impl's reload on a failed node off, the
// release's own slot-map refresh kept, unlike the controls' pinned map).
// valkey-go: impl adds
// nothing to a command pool or subscriber without replica reads (impl/client
// topology.go: the library refreshes its slot map on a connection error
// itself), so the scored pool and subscriber are the raw library.
func admitDispatch(b client.Backend, version string, poolHalts, subHalts, libPool, libSub check.Result, cut string) {
	GinkgoHelper()
	rawPool, rawSub := poolHalts, subHalts
	how := "impl adds no topology code to valkey-go's command pool or subscriber, so the scored clients are the raw library"
	if b == client.BackendGoRedis {
		rawPool, rawSub = libPool, libSub
		how = "the raw library is go-redis with only its own slot-map refresh (NaiveTopology), on its own keys and topics during the same failovers, up to the first kill"
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementDispatchHalt, Client: version, Path: harness.LibraryPath(b, "ClusterClient.Do (slot map reloaded on MOVED or periodically)", "Client.Do (topology refreshed on an error)"), Raw: rawPool, Wrapped: poolHalts,
		Wrapper:  "impl/client reloadOnNodeFailure (slot-map reload when a node fails without a reply)",
		Evidence: "Graceful and killed primary failovers under load, the command pool's halt of the drilled shard against the pool budget: " + how + "." + cut})
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementResubFailover, Client: version, Path: harness.LibraryPath(b, "ClusterClient.SSubscribe, PubSub.Receive", "Client.Receive"), Raw: rawSub, Wrapped: subHalts,
		Wrapper:  "impl/client go-redis subscriber (slot-map reload on a broken subscription connection)",
		Evidence: "The same failovers, the subscription client's halt (first delivery on the drilled shard) against the subscription budget: " + how + "." + cut})
}
