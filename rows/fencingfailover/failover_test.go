package fencingfailover_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
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
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingfailover/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowFencingFailover

// leaseTTL is the directory's lease TTL in this row: far longer than a run,
// because the linearizability model does not expire leases (a premise
// judge.FencingAcrossFailover checks). The contention workload releases
// what it acquires; time-scaled lease protocols are the migration row's.
const leaseTTL = 10 * time.Minute

// readTimeout is the pools' read deadline: longer than a paused primary's
// failover, so a client still waits when the old primary answers what it
// queued (the split-brain window), as a client with a generous timeout does.
const readTimeout = 15 * time.Second

// waitTimeout bounds the durability mode's WAIT: a replica acknowledges in
// about a millisecond here, so a WAIT that runs out means the replica is
// gone (cut, paused, promoted) and the outcome is unknown.
const waitTimeout = 250 * time.Millisecond

var _ = Describe("fencing-failover", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "fencing-failover/replicated/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "T1 single authority and T2 generations across Sentinel failovers of one primary + replica, durability mode on (000 §Safety theorems; §Problem Statement)",
				Run:  harness.Requires(replicatedAvailable, func(ctx SpecContext) report.Check { return silentlyWrong(ctx, replicatedRuns.Get(ctx, b)) }),
			},
			harness.Scenario{
				Name: "fencing-failover/replicated-resumes/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "the directory answers again within the halt budget after each Sentinel failover (000 §Client Architecture; §The Fencing Migration, renew cadence)",
				Run:  harness.Requires(replicatedAvailable, func(ctx SpecContext) report.Check { return resumes(ctx, replicatedRuns.Get(ctx, b)) }),
			},
			harness.Scenario{
				Name: "fencing-failover/cluster/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "T1 single authority and T2 generations across primary failovers of a cluster with replicas, durability mode on (000 §Safety theorems; G4)",
				Run: harness.Requires(func() error { return fault.Partition{}.Available(cluster) },
					func(ctx SpecContext) report.Check { return silentlyWrong(ctx, clusterRuns.Get(ctx, b)) }),
			},
		)
	}
})

// One workload run per topology and backend, judged by both columns: a run
// is a series of failovers and costs seconds each. A run that fails leaves
// every later Get failing with it (harness.Once).
var (
	replicatedRuns = harness.NewOnce(func(ctx SpecContext, b client.Backend) run {
		return acrossFailovers(ctx, replicated, b, replicatedPlan(replicated))
	})
	clusterRuns = harness.NewOnce(func(ctx SpecContext, b client.Backend) run {
		return acrossFailovers(ctx, cluster, b, clusterPlan(cluster))
	})
)

// step is one fault of a plan and what brings the topology back to full
// strength afterwards without flushing it (the run goes on across steps).
type step struct {
	fault fault.Fault
	heal  func(ctx context.Context, w fault.Window) error
}

// clusterPlan fails over a different shard at each smoke step, so no step
// waits out a shard's vote quarantine (2 × cluster-node-timeout; full's
// later steps reuse shards and wait it out): smoke cuts one
// primary off the cluster bus while its clients still reach it (the split
// brain: it acknowledges writes until the node timeout, the majority
// promotes its replica), kills another and pauses a third past the node
// timeout; full adds a graceful failover and a second kill. The cut needs
// a provider that can partition one node (fault.Partition.Available), so
// the scenario is skipped where it cannot, never passed: kills and pauses
// alone open no split-brain window clients reach on local processes (the
// killed primary's socket buffers still reach its replica, the resumed one
// hears of its demotion before it answers), so they could not show a fork.
func clusterPlan(t *fixtures.Topology) []step {
	n := t.Spec.Primaries
	restartOld := func(ctx context.Context, w fault.Window) error { return restartNode(ctx, t, oldPrimary(w)) }
	plan := []step{
		{fault: fault.Partition{Shard: 0}},
		{fault: fault.Failover{Shard: 1 % n, Mode: fault.FailoverKill}, heal: restartOld},
		{fault: fault.Failover{Shard: 2 % n, Mode: fault.FailoverPause}},
	}
	if cfg.Profile == harness.ProfileFull {
		plan = append(plan,
			step{fault: fault.Failover{Shard: 3 % n, Mode: fault.FailoverGraceful}},
			step{fault: fault.Failover{Shard: 4 % n, Mode: fault.FailoverKill}, heal: restartOld},
		)
	}
	return plan
}

// replicatedPlan fails the primary over by Sentinel: smoke cuts it off its
// replica and the Sentinels while clients still write to it (the split
// brain) and pauses it past down-after; full adds a kill, a kill behind
// replication lag and a SENTINEL FAILOVER.
func replicatedPlan(t *fixtures.Topology) []step {
	sentinel := func(mode fault.SentinelMode) step {
		f := fault.SentinelFailover{Mode: mode}
		return step{fault: f, heal: func(ctx context.Context, w fault.Window) error { return f.Heal(ctx, t, w) }}
	}
	plan := []step{sentinel(fault.SentinelCut), sentinel(fault.SentinelPause)}
	if cfg.Profile == harness.ProfileFull {
		plan = append(plan, sentinel(fault.SentinelKill), sentinel(fault.SentinelLagKill), sentinel(fault.SentinelManual))
	}
	return available(t, plan)
}

// available leaves out the steps whose fault the topology's provider
// cannot inject (lag-kill needs the local provider's peer proxies), saying
// so in the spec's output, so one mode the provider lacks does not void
// the run the others make.
func available(t *fixtures.Topology, plan []step) []step {
	out := plan[:0:0]
	for _, s := range plan {
		if err := s.fault.Available(t); err != nil {
			GinkgoWriter.Printf("fault %s left out on %s: %v\n", s.fault.Name(), t.Spec, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// oldPrimary is the node a failover window took the primary role from
// ("p0→p0r0").
func oldPrimary(w fault.Window) string { name, _, _ := strings.Cut(w.Target, "→"); return name }

// restartNode restarts a killed node and waits until it replicates again
// (link up), so the next failover of its shard has a replica to promote.
func restartNode(ctx context.Context, t *fixtures.Topology, name string) error {
	for _, n := range t.Nodes() {
		if n.Name() == name {
			return fault.RestartReplica(ctx, n)
		}
	}
	return fmt.Errorf("no node %q in %s", name, t.Spec)
}

// run is one workload across one plan: the histories of the three
// directories that ran through it, and the fault windows on the scenario
// clock.
type run struct {
	backend client.Backend
	ev      report.Evidence
	// clock and faults are the run's, for the column that judges it second
	// (harness.Once): its scenario's history takes them over.
	clock  *history.Clock
	faults []report.FaultWindow
	// durable: the durability mode on; plain: the spec's scripts as
	// written; static: the durability mode on, through a single-node
	// client pinned to the primary the topology was built with (no
	// Sentinel: it never follows a failover).
	durable, plain, static []history.FencingOp
	windows                []history.FaultWindow
	notReplicated          int64
	replicas               int
}

// acrossFailovers runs the C-phase contention workload through the
// directories at once while plan fails primaries over.
func acrossFailovers(ctx SpecContext, t *fixtures.Topology, b client.Backend, plan []step) run {
	name := "fencing-failover/" + kindOf(t) + "/" + string(b)
	rng := cfg.Rand(name)
	// One pool per directory: durability is the only difference between
	// the check and its variant (a WAIT holding a shared connection would
	// starve the other directory's calls).
	pool := failoverPool(ctx, b, t, "slotgate-durable")
	r := run{backend: b, ev: harness.Evidence(cfg, t, pool), replicas: t.Spec.Replicas, clock: traffic.ClockOf(ctx)}
	if r.replicas == 0 {
		return r // the premise check names it
	}
	opts := func(durable bool) fencing.Options {
		o := fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: leaseTTL}
		if durable {
			o.Durability = fencing.Durability{Replicas: r.replicas, Timeout: waitTimeout}
		}
		return o
	}
	dirs := map[string]*fencing.Directory{
		"durable": fencing.New(pool, opts(true)),
		"plain":   fencing.New(failoverPool(ctx, b, t, "slotgate-plain"), opts(false)),
	}
	if t.Spec.IsReplicated() {
		static := staticPool(ctx, b, t)
		dirs["static"] = fencing.New(static, opts(true))
	}
	By(fmt.Sprintf("contention through %d directories on %s while %d faults fail primaries over", len(dirs), t.Spec, len(plan)))
	hs, windows := runPlan(ctx, t, plan, t.Spec.IsReplicated(), rng, dirs)
	r.durable, r.plain, r.static, r.windows = hs["durable"], hs["plain"], hs["static"], windows
	r.notReplicated = dirs["durable"].Stats().NotReplicated.Load()
	r.faults = harness.Faults(ctx)
	return r
}

func silentlyWrong(ctx SpecContext, r run) report.Check {
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	premise := judge.FailoverPremise{LeaseTTL: leaseTTL, MinCalledInside: 1}
	result := judge.FencingAcrossFailover.Judge(judge.FailoverRun{Ops: r.durable, Windows: r.windows, Premise: premise})
	plainResult := judge.FencingAcrossFailover.Judge(judge.FailoverRun{Ops: r.plain, Windows: r.windows, Premise: premise})
	ev := r.ev
	ev.Faults = r.faults
	ev.Metrics = map[string]float64{
		"durable_operations": float64(len(r.durable)), "plain_operations": float64(len(r.plain)),
		"faults": float64(len(r.windows)), "durable_not_replicated": float64(r.notReplicated),
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("durability mode: WAIT %d replica(s), %v; %d calls reported unknown because the WAIT came back short", r.replicas, waitTimeout, r.notReplicated))
	for _, line := range plainResult.Observed {
		ev.Observed = append(ev.Observed, "scripts as written (durability off): "+line)
	}
	if ce := check.FencingCounterexample(r.durable, 10*time.Second); ce != nil {
		ev.Timeline = harness.FencingTimeline(fmt.Sprintf("The durable directory's first session that is not linearizable: %s.", ce[0].Session), ce)
	} else if ce := check.FencingCounterexample(r.plain, 10*time.Second); ce != nil {
		ev.Timeline = harness.FencingTimeline(fmt.Sprintf("Not the durable directory: the spec's scripts as written forked across a failover, session %s.", ce[0].Session), ce)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("durability-off", "the spec's scripts as written: a reply means the primary applied the write, not that the replica has it; a failover loses it, a generation is issued twice and two pods own one session", plainResult),
	)
}

func resumes(ctx SpecContext, r run) report.Check {
	harness.UseClock(ctx, r.clock)
	budget := cfg.HaltBudget.Pool
	result := judge.DirectoryResumes.Judge(judge.ResumeRun{Ops: r.durable, Windows: r.windows, Budget: budget})
	static := judge.DirectoryResumes.Judge(judge.ResumeRun{Ops: r.static, Windows: r.windows, Budget: budget})
	ev := r.ev
	ev.Faults = r.faults
	ev.Observed = append(ev.Observed, result.Observed...)
	for _, line := range static.Observed {
		ev.Observed = append(ev.Observed, "client pinned to the built primary: "+line)
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("static-primary-address", "a single-node client configured with the primary's address and no Sentinel: after a failover every write meets a demoted replica (READONLY) or a dead node", static),
	)
}

func kindOf(t *fixtures.Topology) string { return string(t.Spec.Kind) }

// failoverPool opens a command pool that waits out a paused primary (see
// readTimeout) and closes it when the scenario ends.
func failoverPool(ctx context.Context, b client.Backend, t *fixtures.Topology, name string) client.Pool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, poolOptions(b, t, name))
	Expect(err).NotTo(HaveOccurred(), "open %s pool on %s", b, t.Spec)
	DeferCleanup(p.Close)
	return p
}

// poolOptions are failoverPool's options: cluster-aware on a cluster, and
// following the Sentinels on a replicated topology, as production reaches
// its primary.
func poolOptions(b client.Backend, t *fixtures.Topology, name string) client.Options {
	o := client.Options{Backend: b, Mode: client.ModeSingle, Addrs: t.Addrs(), ClientName: name, ReadTimeout: readTimeout}
	switch {
	case t.Spec.IsCluster():
		o.Mode = client.ModeCluster
	case t.Spec.IsReplicated():
		o.Mode, o.Addrs, o.MasterName, o.AddrMap = client.ModeSentinel, t.SentinelAddrs(), t.MasterName(), t.ClientAddr
	}
	return o
}

// staticPool is a single-node pool on the primary as the run starts: the
// naive client of the errors column's variant, configured with the
// primary's address instead of the Sentinels.
func staticPool(ctx context.Context, b client.Backend, t *fixtures.Topology) client.Pool {
	GinkgoHelper()
	primary, err := t.CurrentPrimary(ctx)
	Expect(err).NotTo(HaveOccurred(), "the primary the static client is pinned to")
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{primary.Addr()},
		ClientName: "slotgate-static", ReadTimeout: readTimeout, DialTimeout: time.Second})
	Expect(err).NotTo(HaveOccurred(), "open a static %s pool on %s", b, t.Spec)
	DeferCleanup(p.Close)
	return p
}

// runPlan drives every directory with fresh sessions, epoch after epoch,
// until every step of plan was applied and healed, and a last epoch ran on
// the healed topology. It returns each directory's history by its key.
func runPlan(ctx context.Context, t *fixtures.Topology, plan []step, spaced bool, rng *rand.Rand, dirs map[string]*fencing.Directory) (map[string][]history.FencingOp, []history.FaultWindow) {
	GinkgoHelper()
	clock := traffic.ClockOf(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var touchedMu sync.Mutex
	touched := map[string][]fencing.Session{} // label → every session its epochs drew
	drive := func(dir *fencing.Directory, rec *traffic.Recorder, key, label string) {
		defer wg.Done()
		defer GinkgoRecover()
		for epoch := 0; ; epoch++ {
			select {
			case <-stop:
				return
			default:
			}
			// Each epoch's sessions come from the seed and the epoch alone,
			// so a replay draws the same ones whatever the timing.
			sessions := harness.Sessions(rand.New(rand.NewPCG(uint64(cfg.Seed), seedOf(label, epoch))), fmt.Sprintf("%s-%d", label, epoch), 12)
			touchedMu.Lock()
			touched[key] = append(touched[key], sessions...)
			touchedMu.Unlock()
			w := traffic.Contention{Sessions: sessions, Rounds: 2, Contenders: 3, Workers: 4}
			if err := w.Run(ctx, dir, clock, rec); err != nil {
				return
			}
		}
	}
	recs := map[string]*traffic.Recorder{}
	for _, label := range slices.Sorted(maps.Keys(dirs)) {
		recs[label] = &traffic.Recorder{}
		wg.Add(1)
		go drive(dirs[label], recs[label], label, fmt.Sprintf("%s-%x", label, rng.Uint32()))
	}

	settle := func() { time.Sleep(500 * time.Millisecond) } // a duration: traffic before and between faults
	settle()
	var faultErr error
	var prev time.Time
	for _, s := range plan {
		// A fault begins at least one halt budget (and 3 s) after the
		// previous one began, so the errors column can tell a halt longer
		// than the budget from one the next fault cut short (spaced: the
		// plans that an errors column judges).
		if wait := time.Until(prev.Add(cfg.HaltBudget.Pool + 3*time.Second)); spaced && !prev.IsZero() && wait > 0 {
			time.Sleep(wait) // a duration: the faults' spacing the errors column relies on
		}
		By("fault: " + s.fault.Name())
		w, err := fault.Apply(ctx, t, s.fault)
		prev = w.Start
		if err != nil {
			faultErr = err
			break
		}
		settle()
		if s.heal != nil {
			if err := s.heal(ctx, w); err != nil {
				faultErr = fmt.Errorf("heal after %s: %w", s.fault.Name(), err)
				break
			}
		}
		settle()
	}
	close(stop)
	wg.Wait()
	harness.MustConfirm(faultErr, cfg.Seed)
	// The audit: every session's counter read back on the healed topology,
	// through the directory that wrote it. An acknowledged acquire the
	// read does not reach was lost at a failover, whether or not a later
	// call of the run happened to meet its session again.
	By("reading back every session's generation counter")
	for _, label := range slices.Sorted(maps.Keys(dirs)) {
		for i, sess := range touched[label] {
			traffic.Known(ctx, dirs[label], clock, recs[label], auditClient+i%4, sess)
		}
	}
	out := map[string][]history.FencingOp{}
	for label, rec := range recs {
		out[label] = rec.FencingHistory()
	}
	return out, history.From(ctx).Faults()
}

// auditClient numbers the read-back's clients apart from the workload's
// pods (traffic.Contention numbers its contenders from 0).
const auditClient = 1000

func seedOf(label string, epoch int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", label, epoch)
	return h.Sum64()
}
