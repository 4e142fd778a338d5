package locality_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/guard"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/registry"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/locality/judge"
	presenceworkload "github.com/slotgate/slotgate/rows/presence/workload"
	registryworkload "github.com/slotgate/slotgate/rows/registry/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
	"github.com/slotgate/slotgate/validate"
	"github.com/slotgate/slotgate/validate/locality"
)

const row = report.RowLocality

var _ = Describe("locality", func() {
	harness.Emit(harness.Scenario{
		Name: "locality/static/impl", Row: row, Column: report.ColumnErrors,
		Spec: "the executable validator over ./impl: every Lua key from KEYS (A2's prohibition), every multi-key command, script call, pipeline and transaction one slot or declared at the call site (000 §Conformance, Locality contract)",
		Run:  func(ctx SpecContext) report.Check { return static(ctx) },
	})
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "locality/runtime/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "the runtime twin around the reference workloads (fencing scripts, registry discovery, presence MGET, guards) and the paths that only run on dead or expired entries (registry reaping, presence reads of expired keys, fencing on lapsed leases, the Marconi SessionStore), and the Marconi audit writer, on a standalone node, where the server would accept a cross-slot call: zero cross-slot calls (000 §Conformance, Locality contract; §Axioms A2)",
			Run:  func(ctx SpecContext) report.Check { return runtimeTwin(ctx, b) },
		})
	}
})

// minImplFiles: fewer files examined means the validator was pointed at the wrong tree.
const minImplFiles = 20

// repoRoot is the module root (the directory holding go.mod) above the working directory:
// Ginkgo runs a suite from its package directory, `slotgate run` from the root.
func repoRoot() string {
	GinkgoHelper()
	dir, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		Expect(parent).NotTo(Equal(dir), "no go.mod above the working directory")
		dir = parent
	}
}

// serverTable reads the command table (COMMAND key specs) of the standalone node the
// suite runs against: the validator's and the twin's only source of key positions.
func serverTable(ctx context.Context) *validate.Table {
	GinkgoHelper()
	p := harness.Pool(ctx, client.BackendGoRedis, standalone)
	t, err := locality.ServerTable(ctx, p, standalone.Addrs()[0])
	Expect(err).NotTo(HaveOccurred(), "read the command table from %s", standalone.Spec)
	return t
}

// agreement compares the hand fallback table with the server's key specs (the
// disagreements judge.HandTableAgrees judges).
func agreement(server, hand *validate.Table) judge.TableAgreement {
	a := judge.TableAgreement{Source: server.Source, ServerCommands: server.Len(), HandCommands: hand.Len()}
	for _, x := range server.Agree(hand) {
		a.Disagreements = append(a.Disagreements, x.String())
	}
	return a
}

func static(ctx SpecContext) report.Check {
	root := repoRoot()
	ev := harness.Evidence(cfg, standalone, nil)

	By("reading the command table from the server: COMMAND key specs of " + standalone.Spec.String())
	table := serverTable(ctx)
	hand := validate.Hand("")
	agree := judge.HandTableAgrees.Judge(agreement(table, hand))

	By("validating ./impl in-process (package validate) with the server's table")
	dirs := []string{filepath.Join(root, "impl")}
	if d := cfg.ScriptSet().Dir; d != "" {
		// --scripts: the fencing rows run this set, so the contract judges it too.
		By("and the --scripts set " + d)
		dirs = append(dirs, d)
	}
	began := time.Now()
	res, err := table.Dirs(dirs)
	Expect(err).NotTo(HaveOccurred())
	implTime := time.Since(began)
	for i, f := range res.Findings { // report paths from the module root
		if rel, err := filepath.Rel(root, f.File); err == nil {
			res.Findings[i].File = rel
		}
	}
	result := check.All("locality-static", judge.StaticClean.Judge(judge.StaticRun{Result: res, MinFiles: minImplFiles}), agree)

	By("timing the whole repository (the CI budget is 5 s)")
	began = time.Now()
	whole, err := table.Dirs([]string{root})
	Expect(err).NotTo(HaveOccurred())
	wholeTime := time.Since(began)

	By("negative control: the known-bad corpus, every fixture naming the rule it must trip")
	corpusDir := filepath.Join(root, "validate", "testdata", "bad")
	entries, err := table.Corpus(corpusDir)
	Expect(err).NotTo(HaveOccurred())
	_, flagged, _ := judge.CorpusResult(entries)
	ctl := harness.Variant("bad-corpus", "known-bad Lua and Go code (undeclared keys, mis-tagged pairs, cross-slot MGET/RunScript/pipelines/transactions, key slices built in a loop or behind a parameter, unjustified or misplaced annotations) through the real validator with the server's table: it must fail, and every fixture must trip exactly the rules it names",
		judge.BadCorpus.Judge(entries))

	By("negative control: ./impl with every //slotgate: declaration stripped")
	stripped, annotations := stripDeclarations(root)
	bare, err := table.Dirs([]string{stripped})
	Expect(err).NotTo(HaveOccurred())
	bareCtl := harness.Variant("impl-undeclared", "the reference implementation with its //slotgate: call-site declarations removed: every key slice built in a loop or passed in (marconi warm-up MGETs, presence per-slot MGET, fencing KeyList, relay SSUBSCRIBE) is unproven again",
		judge.DeclarationsNeeded.Judge(judge.StrippedRun{Bare: bare, Stripped: annotations}))

	drift := judge.HandTableAgrees.Judge(agreement(table, hand.With("MSET", 1, -1, 1)))
	driftCtl := harness.SelfTest("hand-table-drift", "the hand table edited so MSET's values count as keys (step 1 instead of 2): the agreement check must name it", drift)

	ev.Metrics = map[string]float64{
		"impl_files": float64(res.Files), "impl_findings": float64(len(res.Findings)), "impl_ms": ms(implTime),
		"repo_files": float64(whole.Files), "repo_ms": ms(wholeTime),
		"corpus_fixtures": float64(len(entries)), "corpus_flagged": float64(flagged),
		"server_table_commands": float64(table.Len()), "hand_table_commands": float64(hand.Len()),
	}
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("command table: %s, %d commands; %s", table.Source, table.Len(), agree.Message),
		fmt.Sprintf("./impl: %d files, %d findings in %v; whole repository: %d files in %v (budget 5 s)", res.Files, len(res.Findings), implTime.Round(time.Microsecond), whole.Files, wholeTime.Round(time.Microsecond)))
	if budget := judge.WithinBudget.Judge(judge.Timing{What: "the whole repository", Took: wholeTime, Budget: 5 * time.Second}); budget.Status != check.Pass {
		result = check.All("locality-static", result, budget)
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl, bareCtl, driftCtl)
}

// stripDeclarations copies ./impl's non-test Go files that carry a //slotgate: declaration
// into a temporary tree with those comment lines removed; it returns the tree and how
// many declarations it removed.
func stripDeclarations(root string) (string, int) {
	GinkgoHelper()
	out := GinkgoT().TempDir()
	n := 0
	impl := filepath.Join(root, "impl")
	err := filepath.WalkDir(impl, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "//slotgate:") {
			return err
		}
		var kept []string
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//slotgate:") {
				n++
				kept = append(kept, "")
				continue
			}
			kept = append(kept, line)
		}
		rel, _ := filepath.Rel(impl, path)
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(strings.Join(kept, "\n")), 0o644)
	})
	Expect(err).NotTo(HaveOccurred())
	return out, n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// localityScale sizes the runtime workloads: enough multi-key and script calls that a
// cross-slot call would show, small enough for smoke.
type localityScale struct {
	Sessions, Rounds, Contenders int
	PresenceKeys, Reads          int
	MeshFor                      time.Duration
	GuardCalls                   int
	MinMultiKey                  int
}

func scaleOf() localityScale {
	if cfg.Profile == harness.ProfileFull {
		return localityScale{Sessions: 120, Rounds: 4, Contenders: 4, PresenceKeys: 4000, Reads: 40, MeshFor: 5 * time.Second, GuardCalls: 400, MinMultiKey: 2000}
	}
	return localityScale{Sessions: 16, Rounds: 2, Contenders: 3, PresenceKeys: 600, Reads: 8, MeshFor: 1500 * time.Millisecond, GuardCalls: 60, MinMultiKey: 200}
}

// pinnedSlots and pinnedPerSlot force presence keys into shared slots, so the per-slot
// read sends real multi-key MGETs (random pubkeys almost never share a slot).
const pinnedSlots, pinnedPerSlot = 8, 6

// workload is one reference workload run through its own twin.
type workload struct {
	name string
	run  func(ctx context.Context, p client.Pool)
}

// runtimeTwin runs the reference workloads and the known-bad variants through the twin.
func runtimeTwin(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	pool := harness.Pool(ctx, b, standalone)
	ev := harness.Evidence(cfg, standalone, pool)
	rng := cfg.Rand("locality/runtime/" + string(b))
	sessions := harness.Sessions(rng, "loc", s.Sessions)
	pinned := map[int]int{}
	for range pinnedSlots {
		pinned[rng.IntN(slot.Count)] = pinnedPerSlot
	}

	reference := []workload{
		{"fencing-scripts", func(ctx context.Context, p client.Pool) {
			dir := fencing.New(p, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: 5 * time.Second})
			w := traffic.Contention{Sessions: sessions, Rounds: s.Rounds, Contenders: s.Contenders, Workers: 4}
			Expect(w.Run(ctx, dir, traffic.ClockOf(ctx), &traffic.Recorder{})).To(Succeed())
		}},
		{"registry-discovery", func(ctx context.Context, p client.Pool) {
			runMesh(ctx, p, s, "ref-"+string(b), registry.MutantNone)
		}},
		{"presence-mget", func(ctx context.Context, p client.Pool) {
			readPresence(ctx, p, s, pinned, "ref", presence.ReadPerSlot)
		}},
		{"guards", func(ctx context.Context, p client.Pool) {
			limiter := guard.NewLimiter(p, 1_000_000, time.Minute, guard.MutantNone)
			replay := guard.NewReplay(p, time.Minute, guard.MutantNone)
			for i := range s.GuardCalls {
				_, err := limiter.Allow(ctx, "loc", fmt.Sprintf("subject-%d", i%7))
				Expect(err).NotTo(HaveOccurred())
				_, err = replay.First(ctx, "loc", fmt.Sprintf("event-%d", i))
				Expect(err).NotTo(HaveOccurred())
			}
		}},
	}
	By(fmt.Sprintf("reference workloads on %s through the twin: %d fencing sessions × %d rounds, a registry mesh for %v, %d presence keys (+%d pinned), %d guard calls",
		standalone.Spec, s.Sessions, s.Rounds, s.MeshFor, s.PresenceKeys, pinnedSlots*pinnedPerSlot, s.GuardCalls))
	reference = append(reference, deadPathWorkloads(b)...)
	table := serverTable(ctx)
	hs := runWorkloads(ctx, pool, table, reference)
	merged := locality.Merge(values(hs)...)
	result := check.All("locality-runtime", judge.CrossSlotFree.Judge(judge.TwinRun{History: merged, MinMultiKey: s.MinMultiKey}), judge.WorkloadsExercised.Judge(exercised(reference, hs)))
	ev.Metrics = map[string]float64{
		"calls": float64(merged.Calls), "multi_key_calls": float64(merged.MultiKey), "script_calls": float64(merged.Scripts),
		"violations": float64(merged.ViolationCount), "errors": float64(merged.TotalErrors()), "noscript_fallbacks": float64(merged.NoScript),
	}
	for _, w := range reference {
		h := hs[w.name]
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %d calls (%d of multi-key-capable commands), %d multi-key, %d script calls, %d violations, errors %v", w.name, h.Calls, h.Grouping, h.MultiKey, h.Scripts, h.ViolationCount, h.Errors))
	}

	By("negative controls on the same standalone node: un-tagged (phase O) and mis-tagged fencing layouts, the naive presence MGET, the one-MGET registry discovery")
	few := sessions[:min(len(sessions), 6)]
	controls := []struct {
		workload
		why string
	}{
		{workload{"fencing/untagged-keys", func(ctx context.Context, p client.Pool) {
			// The layout deployed today (phase O scripts over OldKeys): CROSSSLOT from G3 on.
			dir := fencing.New(p, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.O), Keys: fencing.OldKeys, LeaseTTL: 5 * time.Second})
			Expect(traffic.Contention{Sessions: few, Rounds: 1, Contenders: 2, Workers: 2}.Run(ctx, dir, traffic.ClockOf(ctx), &traffic.Recorder{})).To(Succeed())
		}}, "the un-tagged pair buzz:<c>:tunnel:<s>:lease|generation spans two slots: every script is CROSSSLOT on any cluster-enabled node, accepted here"},
		{workload{"fencing/mis-tagged-keys", func(ctx context.Context, p client.Pool) {
			dir := fencing.New(p, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), Keys: fencing.MisTaggedKeys, LeaseTTL: 5 * time.Second})
			Expect(traffic.Contention{Sessions: few, Rounds: 1, Contenders: 2, Workers: 2}.Run(ctx, dir, traffic.ClockOf(ctx), &traffic.Recorder{})).To(Succeed())
		}}, "fencing.MisTaggedKeys: the generation's tag is narrower than the lease's, so the C scripts' pair looks tagged yet spans slots (silent until G3, §Failure Modes)"},
		{workload{"presence/single-mget", func(ctx context.Context, p client.Pool) {
			readPresence(ctx, p, s, pinned, "naive", presence.ReadSingleMGet)
		}}, "one MGET of every presence key (presence.ReadSingleMGet): CROSSSLOT on a cluster, a correct-looking answer here"},
		{workload{"registry/" + string(registry.MutantCrossSlotMGet), func(ctx context.Context, p client.Pool) {
			runMesh(ctx, p, s, "xslot-"+string(b), registry.MutantCrossSlotMGet)
		}}, "discovery fetches every record in one MGET: records live in every slot"},
		{workload{"registry-reaping/" + string(registry.MutantCrossSlotMGet), func(ctx context.Context, p client.Pool) {
			reapDead(ctx, p, "loc-reap-xslot-"+string(b), registry.MutantCrossSlotMGet)
		}}, "the one-MGET discovery on the dead-entry path only: expired records under four hash tags fetched in one MGET (every record missing, so nothing else notices)"},
	}
	ws := make([]workload, len(controls))
	for i, c := range controls {
		ws[i] = c.workload
	}
	bad := runWorkloads(ctx, pool, table, ws)
	var ctls []report.Control
	for _, c := range controls {
		h := bad[c.name]
		ctl := harness.Variant(c.name, c.why, judge.CrossSlotFree.Judge(judge.TwinRun{History: h, MinMultiKey: 1}))
		// Caught only when the twin flagged it AND the server said nothing: the point of the
		// control is that a standalone node cannot tell.
		ctl = harness.Premise(ctl, h.TotalErrors() == 0, "the server reported errors: the standalone node was not silent")
		ctl.Observed += fmt.Sprintf(" | %d calls, server errors %v", h.Calls, h.Errors)
		ctls = append(ctls, ctl)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctls...)
}

// exercised is how many calls of multi-key-capable commands each reference workload sent
// through its twin, in the order they are listed (judge.WorkloadsExercised judges it).
func exercised(ws []workload, hs map[string]locality.History) []judge.Workload {
	out := make([]judge.Workload, len(ws))
	for i, w := range ws {
		out[i] = judge.Workload{Name: w.name, Grouping: hs[w.name].Grouping}
	}
	return out
}

// deadPathWorkloads are the paths that only run on dead or expired entries: registry
// discovery over expired records and the index prune, presence reads of expired keys,
// fencing on lapsed leases, and the Marconi SessionStore's register/heartbeat/release and
// warm-up over expired sessions. Each drives its entries past their TTL and asserts the
// dead path ran (a count of missing, pruned, expired), so the twin judged it. The Marconi
// audit writer's append script rides along: the last impl workload with multi-key calls.
func deadPathWorkloads(b client.Backend) []workload {
	const ttl = 80 * time.Millisecond
	lapse := func(ctx context.Context, ttl time.Duration) {
		select {
		case <-time.After(2 * ttl):
		case <-ctx.Done():
		}
	}
	past := func() time.Time { return time.Now().Add(-time.Minute) } // a reader whose clock lags: expired entries look live
	return []workload{
		{"registry-reaping", func(ctx context.Context, p client.Pool) {
			reapDead(ctx, p, "loc-reap-"+string(b), registry.MutantNone)
		}},
		{"presence-expired", func(ctx context.Context, p client.Pool) {
			store := presence.New(p, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadPerSlot}})
			community := "loc-exp-" + string(b)
			var keys []string
			for g := range pinnedSlots {
				for i := range pinnedPerSlot {
					pk := fmt.Sprintf("{exp-%d}-%d", g, i) // one slot per group: real multi-key MGETs
					Expect(store.SetTTL(ctx, community, pk, "online", ttl)).To(Succeed())
					keys = append(keys, presence.Key(community, pk))
				}
			}
			lapse(ctx, ttl)
			vals, err := store.Bulk(ctx, keys)
			Expect(err).NotTo(HaveOccurred())
			for i, v := range vals {
				Expect(v.Present).To(BeFalse(), "presence %s expired", keys[i])
			}
		}},
		{"fencing-expiry", func(ctx context.Context, p client.Pool) {
			dir := fencing.New(p, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: ttl})
			ss := harness.Sessions(cfg.Rand("locality/fencing-expiry/"+string(b)), "loc-exp", 8)
			gens := make([]int64, len(ss))
			for i, se := range ss {
				a, err := dir.Acquire(ctx, se, "first")
				Expect(err).NotTo(HaveOccurred())
				Expect(a.OK).To(BeTrue())
				gens[i] = a.Generation
			}
			lapse(ctx, ttl)
			for i, se := range ss { // every call below meets a lapsed lease
				renewed, err := dir.Renew(ctx, se, "first", gens[i])
				Expect(err).NotTo(HaveOccurred())
				Expect(renewed).To(BeFalse(), "renew of a lapsed lease")
				_, err = dir.Lookup(ctx, se)
				Expect(err).NotTo(HaveOccurred())
				_, err = dir.ValidateFencedHeader(ctx, se, "first", gens[i])
				Expect(err).NotTo(HaveOccurred())
				_, err = dir.Release(ctx, se, "first", gens[i])
				Expect(err).NotTo(HaveOccurred())
				a, err := dir.Acquire(ctx, se, "second") // takeover after expiry
				Expect(err).NotTo(HaveOccurred())
				Expect(a.OK).To(BeTrue(), "takeover of a lapsed lease")
			}
		}},
		{"marconi-store", func(ctx context.Context, p client.Pool) {
			const ttl = 250 * time.Millisecond // 24 registrations and a warm-up fit well inside it
			o := marconi.StoreOptions{Prefix: "loc-marconi-" + string(b), TTL: ttl}
			st := marconi.NewSessionStore(p, o)
			now := time.Now()
			var all []marconi.Session
			for t := range 3 {
				tenant := fmt.Sprintf("t%d", t)
				for i := range 8 {
					sess := marconi.Session{SessionID: fmt.Sprintf("%s-s%d", tenant, i), Tenant: tenant, Project: fmt.Sprintf("p%d", i%2),
						Identity: fmt.Sprintf("%s/id%d", tenant, i), RegisteredAt: now, LastHeartbeat: now}
					Expect(st.Register(ctx, sess)).To(Succeed())
					all = append(all, sess)
				}
				Expect(st.SetMaster(ctx, tenant, "p0", "", tenant+"-s0")).To(Succeed())
				Expect(st.SetMaster(ctx, tenant, "p1", "", tenant+"-s1")).To(Succeed())
			}
			_, err := st.Load(ctx) // warm-up over (normally) live sessions: per-tenant MGETs of records and masters
			Expect(err).NotTo(HaveOccurred())
			lapse(ctx, ttl)
			lo := o
			lo.Now = past
			snap, err := marconi.NewSessionStore(p, lo).Load(ctx) // a lagging warm-up: MGETs of expired records
			Expect(err).NotTo(HaveOccurred())
			Expect(snap.Sessions).To(BeEmpty(), "every record expired")
			for _, sess := range all[:6] {
				Expect(st.Heartbeat(ctx, sess.Tenant, sess.SessionID, time.Now())).To(MatchError(marconi.ErrSessionExpired))
				existed, err := st.Release(ctx, sess.Tenant, sess.SessionID)
				Expect(err).NotTo(HaveOccurred())
				Expect(existed).To(BeFalse())
			}
			snap, err = st.Load(ctx) // prunes the dead index entries
			Expect(err).NotTo(HaveOccurred())
			Expect(snap.Sessions).To(BeEmpty())
		}},
		{"marconi-audit-writer", func(ctx context.Context, p client.Pool) {
			// The Redis Stream writer's append script (stream + offset keys) for two tenants.
			q, err := audit.NewQueue(audit.QueueOptions{})
			Expect(err).NotTo(HaveOccurred())
			tenants := []string{"loc-a-" + string(b), "loc-b-" + string(b)}
			for i := range 40 {
				t := tenants[i%len(tenants)]
				Expect(q.Offer(audit.Entry{Envelope: audit.Envelope{SignalID: fmt.Sprintf("sig-%d", i), TenantID: t, ProjectID: "p", Recipient: "r", Kind: "locality"},
					ArrivedAt: time.Now()})).To(BeTrue())
			}
			w, err := audit.NewWriter(audit.WriterOptions{Pool: p, Queue: q, Batch: 8})
			Expect(err).NotTo(HaveOccurred())
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(wctx) }()
			Eventually(ctx, func() int {
				n := 0
				for _, t := range tenants {
					n += q.Stats(t).Depth
				}
				return n
			}).WithTimeout(10*time.Second).WithPolling(10*time.Millisecond).Should(BeZero(), "the writer drained the queue")
			cancel()
			Expect(<-done).To(Succeed())
		}},
	}
}

// reapDead heartbeats 24 registry records (four hash tags, so the fetch of
// the dead ones sends real multi-key MGETs), lets them lapse, fetches them
// all with a discovery whose clock lags (every record missing), then reaps
// the dead index scores with a discovery on the real clock.
func reapDead(ctx context.Context, p client.Pool, ns string, m registry.Mutant) {
	GinkgoHelper()
	const ttl = 80 * time.Millisecond
	o := registry.Options{Interval: ttl / 3, TTL: ttl, Key: []byte("slotgate-locality"), Mutant: m,
		Prefix: ns + ":" + registry.DefaultPrefix, Index: ns + ":" + registry.DefaultIndex}
	w, err := registry.New(p, o)
	Expect(err).NotTo(HaveOccurred())
	const dead = 24
	for i := range dead {
		Expect(w.Heartbeat(ctx, registry.Record{ID: fmt.Sprintf("{dead-%d}-%d", i%4, i), Addr: "127.0.0.1:1"})).To(Succeed())
	}
	select {
	case <-time.After(2 * ttl):
	case <-ctx.Done():
	}
	o.Now = func() time.Time { return time.Now().Add(-time.Minute) }
	lagging, err := registry.New(p, o)
	Expect(err).NotTo(HaveOccurred())
	d, err := lagging.Discover(ctx) // fetches every dead record
	Expect(err).NotTo(HaveOccurred())
	Expect(d.Missing).To(Equal(dead), "the lagging discovery fetched the expired records")
	d, err = w.Discover(ctx) // the reap: prunes the dead scores
	Expect(err).NotTo(HaveOccurred())
	Expect(d.Pruned).To(BeNumerically("==", dead), "discovery reaped the dead index entries")
}

// runWorkloads runs each workload through its own twin over pool, concurrently, and
// returns each twin's history by workload name.
func runWorkloads(ctx context.Context, pool client.Pool, table *validate.Table, ws []workload) map[string]locality.History {
	GinkgoHelper()
	out := map[string]locality.History{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			defer GinkgoRecover()
			twin := locality.WrapTable(pool, table)
			w.run(ctx, twin)
			mu.Lock()
			out[w.name] = twin.History()
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func values(m map[string]locality.History) []locality.History {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]locality.History, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// runMesh runs a small registry mesh (heartbeats, churn, discovery) for s.MeshFor.
func runMesh(ctx context.Context, p client.Pool, s localityScale, name string, m registry.Mutant) {
	GinkgoHelper()
	interval := 200 * time.Millisecond
	ns := "loc-" + name
	r, err := registry.New(p, registry.Options{Interval: interval, Key: []byte("slotgate-locality"), Mutant: m,
		Prefix: ns + ":" + registry.DefaultPrefix, Index: ns + ":" + registry.DefaultIndex})
	Expect(err).NotTo(HaveOccurred())
	mesh := &registryworkload.Mesh{Registry: r, Discover: r.Discover, Min: 8, Max: 14, Initial: 10, ChurnEvery: 100 * time.Millisecond,
		Observers: 2, DiscoverEvery: interval / 2, Rand: cfg.Rand("locality/mesh/" + name), Name: name}
	mesh.Start(ctx, traffic.ClockOf(ctx))
	select {
	case <-time.After(s.MeshFor):
	case <-ctx.Done():
	}
	mesh.Stop(true)
}

// readPresence writes a presence pattern and reads all of it back s.Reads times with mode.
func readPresence(ctx context.Context, p client.Pool, s localityScale, pinned map[int]int, community string, mode presence.ReadMode) {
	GinkgoHelper()
	store := presence.New(p, presence.Options{Read: presence.ReadOptions{Mode: mode}})
	pat := presenceworkload.Write(ctx, store, cfg.Rand("locality/presence/"+community), presenceworkload.Layout{
		Community: "loc-" + community, Keys: s.PresenceKeys, ShortTTL: 100 * time.Millisecond, Pinned: pinned, Workers: 4})
	reader := &presenceworkload.Reader{Store: store, Clock: traffic.ClockOf(ctx)}
	for range s.Reads {
		reader.Read(ctx, pat.Keys)
	}
	for _, rd := range reader.Reads() {
		Expect(rd.Err).To(BeEmpty(), "presence read (%s)", mode)
	}
}
