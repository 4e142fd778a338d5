package registry_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/registry"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/registry/judge"
	"github.com/slotgate/slotgate/rows/registry/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowRegistry

var _ = Describe("registry", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "registry/completeness/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "every live runtime discoverable within one heartbeat; no dead runtime past expiry; no unattested record — against the known population, under churn, latency, a failover, a client cut of a record node and refused writes on it and on the index node (000 §Mesh Registry Discovery)",
				Run:  func(ctx SpecContext) report.Check { return completeness(ctx, b) },
			},
			harness.Scenario{
				Name: "registry/ops/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "heartbeat, deregister and discovery error-free outside fault windows; the index read and the per-slot record MGET never cross slots (000 §Mesh Registry Discovery)",
				Run:  func(ctx SpecContext) report.Check { return ops(ctx, b) },
			},
		)
	}
})

// meshScale is the row's time scale: production heartbeats every 15 s with
// a 45 s TTL; the scaled runs keep the 3× ratio. The intervals are generous
// enough for a loaded 2-core runner: the checker only requires a runtime
// whose acknowledged heartbeat outlives the discovery, so a late heartbeat
// makes a runtime exempt, never a false failure.
type meshScale struct {
	Interval                     time.Duration
	Steady, UnderLatency, After  time.Duration
	ChurnEvery, ControlFor       time.Duration
	Min, Max, Initial, Observers int
}

func scaleOf() meshScale {
	s := meshScale{
		Interval: 300 * time.Millisecond, Steady: 2500 * time.Millisecond, UnderLatency: 2500 * time.Millisecond, After: 3 * time.Second,
		ChurnEvery: 150 * time.Millisecond, ControlFor: 2500 * time.Millisecond, Min: 15, Max: 25, Initial: 20, Observers: 3,
	}
	if cfg.Profile == harness.ProfileFull {
		// NOTE: ≥ 500 churn events including a failover: ~60 s at one
		// event every 90 ms.
		s.Interval, s.Steady, s.UnderLatency, s.After = 500*time.Millisecond, 20*time.Second, 15*time.Second, 20*time.Second
		s.ChurnEvery, s.ControlFor = 90*time.Millisecond, 6*time.Second
	}
	return s
}

func (s meshScale) bounds(minDiscoveries int) judge.RegistryBounds {
	return judge.RegistryBounds{Interval: s.Interval, TTL: 3 * s.Interval, Grace: s.Interval, MinDiscoveries: minDiscoveries, MinRequired: 10 * minDiscoveries}
}

// attestKey is the mesh's shared attestation key for the run.
var attestKey = []byte("slotgate-mesh-attestation-key")

func newRegistry(pool client.Pool, s meshScale, ns string, m registry.Mutant) *registry.Registry {
	GinkgoHelper()
	opts := registry.Options{Interval: s.Interval, Key: attestKey, Mutant: m}
	if ns != "" {
		opts.Prefix, opts.Index = ns+":"+registry.DefaultPrefix, ns+":"+registry.DefaultIndex
	}
	r, err := registry.New(pool, opts)
	Expect(err).NotTo(HaveOccurred())
	return r
}

func newMesh(r *registry.Registry, s meshScale, name string, discover workload.Discoverer) *workload.Mesh {
	return &workload.Mesh{
		Registry: r, Discover: discover, Min: s.Min, Max: s.Max, Initial: s.Initial,
		ChurnEvery: s.ChurnEvery, Observers: s.Observers, DiscoverEvery: s.Interval / 2,
		Rand: cfg.Rand("registry/mesh/" + name), Name: name,
	}
}

// forgePerKind is how many records of each workload.ForgeKinds forge writes.
const forgePerKind = 3

// forge injects the forged records of every kind (workload.ForgeKinds).
func forge(ctx context.Context, pool client.Pool, r *registry.Registry, name string) int {
	GinkgoHelper()
	ids, err := workload.Forge(ctx, pool, r, cfg.Rand("registry/forge/"+name), forgePerKind, 10*time.Minute)
	Expect(err).NotTo(HaveOccurred())
	return len(ids)
}

// forgedByClass is how many forged records one discovery may skip as
// unattested and as undecodable.
func forgedByClass() (unattested, undecodable int) {
	for _, k := range workload.ForgeKinds {
		if k.Unattested() {
			unattested += forgePerKind
		} else {
			undecodable += forgePerKind
		}
	}
	return unattested, undecodable
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// inject applies f and returns its window on the scenario clock.
func inject(ctx context.Context, clock *traffic.Clock, f fault.Fault) (check.Span, fault.Window) {
	GinkgoHelper()
	start := clock.Now()
	w, err := fault.Apply(ctx, cluster, f)
	if err != nil {
		healLatency(ctx)
	}
	harness.MustConfirm(err, cfg.Seed)
	return check.Span{Start: start, End: clock.Now()}, w
}

// indexShard is the shard owning the index slot: the failover that matters
// most (every discovery and heartbeat touches it).
func indexShard(ctx context.Context) int {
	GinkgoHelper()
	n, err := cluster.NodeForSlot(ctx, slot.Of(registry.DefaultIndex))
	Expect(err).NotTo(HaveOccurred())
	return n.Shard()
}

func healLatency(ctx context.Context) {
	GinkgoHelper()
	for _, n := range cluster.Nodes() {
		Expect(n.RemoveToxics(ctx)).To(Succeed())
	}
}

// meshRun is one backend's main mesh run — churn, latency, a failover of
// the index shard — which both columns judge: completeness in the
// silently-wrong column, errors outside the failover in the errors column
// (one workload run, two columns).
type meshRun struct {
	clock                   *traffic.Clock
	h                       judge.RegistryHistory
	lat, fo                 check.Span
	cuts                    []check.Span // cutIndexAndRecords' windows
	faults                  []report.FaultWindow
	churn, forged           int
	unattested, undecodable int64
}

// faultSpans are the windows in which the run's faults excuse errors: the
// failover and cutIndexAndRecords' faults (the latency window excuses none).
func (r *meshRun) faultSpans() []check.Span { return append([]check.Span{r.fo}, r.cuts...) }

// mainRuns runs each backend's main mesh once; both of b's scenarios
// judge it.
var mainRuns = harness.NewOnce(mainRun)

func mainRun(ctx SpecContext, b client.Backend) *meshRun {
	GinkgoHelper()
	s := scaleOf()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.ClockOf(ctx)
	reg := newRegistry(pool, s, "", registry.MutantNone)
	mesh := newMesh(reg, s, "main-"+string(b), reg.Discover)

	By(fmt.Sprintf("%d runtimes join %s, heartbeat every %v (TTL %v), churn every %v, %d observers", s.Initial, cluster.Spec, s.Interval, 3*s.Interval, s.ChurnEvery, s.Observers))
	mesh.Start(ctx, clock)
	forged := forge(ctx, pool, reg, "main-"+string(b))
	pause(ctx, s.Steady)

	By("fault: latency 15 ms ± 5 ms on every link (not an excuse for errors)")
	lat, latW := inject(ctx, clock, fault.Latency{Latency: 15 * time.Millisecond, Jitter: 5 * time.Millisecond})
	pause(ctx, s.UnderLatency)
	healLatency(ctx)
	fault.Healed(ctx, latW)
	lat.End = clock.Now()

	shard := indexShard(ctx)
	By(fmt.Sprintf("fault: graceful failover of shard %d (owns the index slot)", shard))
	fo, _ := inject(ctx, clock, fault.Failover{Shard: shard, Mode: fault.FailoverGraceful})
	pause(ctx, s.After)
	cuts := cutIndexAndRecords(ctx, clock, s)
	mesh.Stop(true)
	r := &meshRun{clock: clock, h: mesh.History(), lat: lat, fo: fo, cuts: cuts, faults: harness.Faults(ctx), churn: mesh.ChurnEvents(), forged: forged,
		unattested: mesh.Skipped.Unattested.Load(), undecodable: mesh.Skipped.Undecodable.Load()}
	return r
}

// cutIndexAndRecords faults the registry's writes and record reads one at
// a time, each for longer than a record's TTL, and returns the windows. The
// graceful failover fails no command, so without these no heartbeat's SET
// or ZADD and no discovery's record MGET ever fails, and the registry's
// handling of those failures goes unjudged:
//
//   - the clients cut off (fault.ResetPeer, TCP reset; the cluster bus stays
//     up, so no failover) a primary that owns records but not the index:
//     every discovery's record MGET fails there, and one that swallowed the
//     failure would answer "nobody" without an error;
//   - that primary, then the index's, refusing writes (fault.RefuseWrites,
//     OOM under noeviction) while they still serve reads: a heartbeat that
//     reported success although its record (or its index score) was
//     refused leaves a runtime the checker must find whose record (score)
//     expires during the window, and every discovery in the rest of the
//     window misses it. (A cut would hide this: discoveries fail during it,
//     and after it the runtime's next heartbeat races the first discovery.)
//
// Every error these cause falls inside its window.
func cutIndexAndRecords(ctx context.Context, clock *traffic.Clock, s meshScale) []check.Span {
	GinkgoHelper()
	idx, err := cluster.NodeForSlot(ctx, slot.Of(registry.DefaultIndex))
	Expect(err).NotTo(HaveOccurred())
	var rec *fixtures.Node
	for sl := 0; sl < slot.Count && rec == nil; sl += slot.Count / 8 {
		n, err := cluster.NodeForSlot(ctx, sl)
		Expect(err).NotTo(HaveOccurred())
		if n.Name() != idx.Name() {
			rec = n
		}
	}
	Expect(rec).NotTo(BeNil(), "no primary owns records but not the index")
	d := 3*s.Interval*2 + s.Interval // two record TTLs and an interval: records and scores written before the fault expire inside it
	steps := []struct {
		what string
		f    fault.Fault
	}{
		{"clients cut off " + rec.Name() + " (owns records, not the index)", fault.ResetPeer{Nodes: []string{rec.Name()}, Duration: d}},
		{rec.Name() + " (owns records, not the index) refuses writes", fault.RefuseWrites{Node: rec.Name(), Duration: d}},
		{idx.Name() + " (owns the index) refuses writes", fault.RefuseWrites{Node: idx.Name(), Duration: d}},
	}
	var spans []check.Span
	for _, st := range steps {
		By(fmt.Sprintf("fault: %s for %v", st.what, d))
		span, _ := inject(ctx, clock, st.f)
		spans = append(spans, span)
		// Judged on its own: after a refused dial go-redis's pool re-dials
		// about once a second, so the clients are back a second or so after
		// a cut, and the next fault must not overlap that.
		pause(ctx, s.After)
	}
	return spans
}

func completeness(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	r := mainRuns.Get(ctx, b)
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	h, lat, fo, forged := r.h, r.lat, r.fo, r.forged
	ev.Faults = r.faults

	bounds := s.bounds(int(s.Steady/s.Interval) * s.Observers)
	cov := judge.Coverage(h, bounds)
	fu, fd := forgedByClass()
	result := check.All("registry-bounded", judge.Bounded.Judge(judge.Run{History: h, Bounds: bounds}),
		judge.SkipsClassified.Judge(judge.Skips{Discoveries: cov.Discoveries, Unattested: r.unattested, Undecodable: r.undecodable, ForgedUnattested: fu, ForgedUndecodable: fd}))
	outside := judge.ErrorsOutside.Judge(judge.OpsRun{History: h, Windows: r.faultSpans(), Settle: 2 * time.Second, MinOps: 1})
	ev.Metrics = map[string]float64{
		"population": float64(len(h.Population)), "churn_events": float64(r.churn), "discoveries": float64(cov.Discoveries),
		"completeness_pct": cov.Percent(), "required_pairs": float64(cov.Required), "forged_records": float64(forged),
		"unattested_skipped": float64(r.unattested), "undecodable_skipped": float64(r.undecodable),
		"operations": float64(len(h.Ops)),
	}
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("latency window %v–%v, failover window %v–%v, cuts and refused writes %v on the scenario clock", lat.Start.Round(time.Millisecond), lat.End.Round(time.Millisecond), fo.Start.Round(time.Millisecond), fo.End.Round(time.Millisecond), r.cuts),
		fmt.Sprintf("errors (scored in registry/ops): %v; outside the fault windows: %s", judge.RegistryErrKinds(h), outside.Message))

	By("negative controls: legacy SCAN on the cluster and on a standalone node; trust-records; no-expiry")
	controls := registryControls(ctx, b, s)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

// registryControls runs the known-bad variants side by side, each in its
// own key namespace, with the same checker.
func registryControls(ctx context.Context, b client.Backend, s meshScale) []report.Control {
	pool := harness.Pool(ctx, b, cluster)
	single := harness.Pool(ctx, b, standalone)
	bounds := s.bounds(int(s.ControlFor/s.Interval) * s.Observers / 2)
	type run struct {
		h       judge.RegistryHistory
		skipped int64
	}
	runs := make([]run, 4)
	var wg sync.WaitGroup
	variant := func(i int, p client.Pool, ns string, m registry.Mutant, scan bool, crash int) {
		defer GinkgoRecover()
		defer wg.Done()
		r := newRegistry(p, s, ns, m)
		discover := r.Discover
		if scan {
			discover = r.ScanReady
		}
		mesh := newMesh(r, s, ns+"-"+string(b), discover)
		mesh.Start(ctx, traffic.ClockOf(ctx))
		forge(ctx, p, r, ns+"-"+string(b))
		mesh.Crash(crash)
		pause(ctx, s.ControlFor)
		mesh.Stop(true)
		runs[i] = run{h: mesh.History(), skipped: mesh.Skipped.Unattested.Load() + mesh.Skipped.Undecodable.Load()}
	}
	wg.Add(4)
	go variant(0, pool, "scan", registry.MutantNone, true, 0)
	go variant(1, single, "scan", registry.MutantNone, true, 0)
	go variant(2, pool, "trust", registry.MutantTrustRecords, false, 0)
	go variant(3, pool, "noexp", registry.MutantNoExpiry, false, 5)
	wg.Wait()

	// Caught only when it is silent (no error at all) and the same checker
	// passes SCAN on a standalone node: the check is about the cluster
	// (check.ScanSubset decides both, so the re-check replays the premise).
	scan := harness.Variant("scan-ready/"+cluster.Spec.String(),
		"legacy scan_ready(): SCAN has no key, the client sends it to one node and the cursor ends there — a per-call subset, no error",
		judge.ScanSubset.Judge(judge.ScanRuns{OnCluster: runs[0].h, Single: runs[1].h, Bounds: bounds, ClusterSpec: cluster.Spec.String()}))
	return []report.Control{
		scan,
		harness.Variant(string(registry.MutantTrustRecords), "discovery believes any record: forged, unsigned and replayed records are returned", judge.Bounded.Judge(judge.Run{History: runs[2].h, Bounds: bounds})),
		harness.Variant(string(registry.MutantNoExpiry), "records without TTL and index scores of +inf: crashed runtimes stay discoverable forever", judge.Bounded.Judge(judge.Run{History: runs[3].h, Bounds: bounds})),
	}
}

func ops(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	// The same run the completeness column judges.
	r := mainRuns.Get(ctx, b)
	harness.UseClock(ctx, r.clock) // the run's axis, whichever scenario ran it
	h := r.h
	ev.Faults = r.faults
	const settle = 2 * time.Second
	result := judge.ErrorsOutside.Judge(judge.OpsRun{History: h, Windows: r.faultSpans(), Settle: settle, MinOps: 100})
	ev.Metrics = map[string]float64{"operations": float64(len(h.Ops)), "population": float64(len(h.Population)), "churn_events": float64(r.churn)}
	ev.Observed = append(ev.Observed, fmt.Sprintf("error kinds over the whole run: %v (the run registry/completeness judges; latency %v–%v is no excuse for errors)", judge.RegistryErrKinds(h), r.lat.Start.Round(time.Millisecond), r.lat.End.Round(time.Millisecond)))

	By("negative control: discovery that MGETs every record in one command")
	bad := newRegistry(pool, s, "xslot", registry.MutantCrossSlotMGet)
	bm := newMesh(bad, s, "xslot-"+string(b), bad.Discover)
	bm.Start(ctx, traffic.ClockOf(ctx))
	pause(ctx, s.Interval*3)
	bm.Stop(true)
	bh := bm.History()
	ctl := harness.Variant(string(registry.MutantCrossSlotMGet), "records live in every slot: one MGET of all of them is CROSSSLOT (server) or refused (valkey-go) on a cluster", judge.ErrorsOutside.Judge(judge.OpsRun{History: bh, MinOps: 1}))
	kinds := judge.RegistryErrKinds(bh)
	ctl = harness.Premise(ctl, kinds[string(client.KindCrossSlot)] > 0 && len(kinds) == 1, "the discovery errors were not CROSSSLOT alone")
	ctl.Observed += fmt.Sprintf(" (error kinds %v)", kinds)
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}
