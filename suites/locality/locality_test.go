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
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/registry"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
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
		Run:  func(SpecContext) report.Check { return static() },
	})
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "locality/runtime/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "the runtime twin around the reference workloads (fencing scripts, registry discovery, presence MGET, guards) on a standalone node, where the server would accept a cross-slot call: zero cross-slot calls (000 §Conformance, Locality contract; §Axioms A2)",
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

func static() report.Check {
	root := repoRoot()
	ev := harness.Evidence(cfg, nil, nil)

	By("validating ./impl in-process (package validate)")
	began := time.Now()
	res, err := validate.Dirs([]string{filepath.Join(root, "impl")})
	Expect(err).NotTo(HaveOccurred())
	implTime := time.Since(began)
	for i, f := range res.Findings { // report paths from the module root
		if rel, err := filepath.Rel(root, f.File); err == nil {
			res.Findings[i].File = rel
		}
	}
	result := locality.StaticClean(res, minImplFiles)

	By("timing the whole repository (the CI budget is 5 s)")
	began = time.Now()
	whole, err := validate.Dirs([]string{root})
	Expect(err).NotTo(HaveOccurred())
	wholeTime := time.Since(began)

	By("negative control: the known-bad corpus, every fixture naming the rule it must trip")
	corpusDir := filepath.Join(root, "validate", "testdata", "bad")
	entries, err := validate.Corpus(corpusDir)
	Expect(err).NotTo(HaveOccurred())
	corpus, flagged, missed := locality.CorpusResult(entries)
	ctl := harness.Variant("bad-corpus", "known-bad Lua and Go fixtures (undeclared keys, mis-tagged pairs, cross-slot MGET/RunScript/pipelines/transactions, unjustified or misplaced annotations): the same checker must fail, and every fixture must trip exactly the rules it names",
		locality.StaticClean(corpus, 1))
	ctl.Caught = ctl.Caught && flagged == len(entries)
	ctl.Observed = fmt.Sprintf("%d/%d fixtures flagged with their named rules (%d findings)", flagged, len(entries), len(corpus.Findings))
	if len(missed) > 0 {
		ctl.Observed += "; missed: " + strings.Join(missed, "; ")
	}

	ev.Metrics = map[string]float64{
		"impl_files": float64(res.Files), "impl_findings": float64(len(res.Findings)), "impl_ms": ms(implTime),
		"repo_files": float64(whole.Files), "repo_ms": ms(wholeTime),
		"corpus_fixtures": float64(len(entries)), "corpus_flagged": float64(flagged),
	}
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("./impl: %d files, %d findings in %v; whole repository: %d files in %v (budget 5 s)", res.Files, len(res.Findings), implTime.Round(time.Microsecond), whole.Files, wholeTime.Round(time.Microsecond)))
	if wholeTime > 5*time.Second {
		result = check.All("locality-static", result, check.Result{Status: check.Fail, Message: fmt.Sprintf("the whole repository took %v, over the 5 s budget", wholeTime)})
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
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
			dir := fencing.New(p, fencing.Options{Scripts: fencing.PhaseC(), LeaseTTL: 5 * time.Second})
			w := traffic.Contention{Sessions: sessions, Rounds: s.Rounds, Contenders: s.Contenders, Workers: 4}
			Expect(w.Run(ctx, dir, traffic.NewClock(), &traffic.Recorder{})).To(Succeed())
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
	hs := runWorkloads(ctx, pool, reference)
	merged := locality.Merge(values(hs)...)
	result := locality.CrossSlotFree(merged, s.MinMultiKey)
	ev.Metrics = map[string]float64{
		"calls": float64(merged.Calls), "multi_key_calls": float64(merged.MultiKey), "script_calls": float64(merged.Scripts),
		"violations": float64(merged.ViolationCount), "errors": float64(merged.TotalErrors()), "noscript_fallbacks": float64(merged.NoScript),
	}
	for _, w := range reference {
		h := hs[w.name]
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %d calls, %d multi-key, %d script calls, %d violations, errors %v", w.name, h.Calls, h.MultiKey, h.Scripts, h.ViolationCount, h.Errors))
	}

	By("negative controls on the same standalone node: un-tagged (phase O) and mis-tagged fencing layouts, the naive presence MGET, the one-MGET registry discovery")
	few := sessions[:min(len(sessions), 6)]
	controls := []struct {
		workload
		why string
	}{
		{workload{"fencing/untagged-keys", func(ctx context.Context, p client.Pool) {
			// The layout deployed today (phase O scripts over OldKeys): CROSSSLOT from G3 on.
			dir := fencing.New(p, fencing.Options{Scripts: fencing.ForPhase(fencing.O), Keys: fencing.OldKeys, LeaseTTL: 5 * time.Second})
			Expect(traffic.Contention{Sessions: few, Rounds: 1, Contenders: 2, Workers: 2}.Run(ctx, dir, traffic.NewClock(), &traffic.Recorder{})).To(Succeed())
		}}, "the un-tagged pair buzz:<c>:tunnel:<s>:lease|generation spans two slots: every script is CROSSSLOT on any cluster-enabled node, accepted here"},
		{workload{"fencing/mis-tagged-keys", func(ctx context.Context, p client.Pool) {
			dir := fencing.New(p, fencing.Options{Scripts: fencing.PhaseC(), Keys: fencing.MisTaggedKeys, LeaseTTL: 5 * time.Second})
			Expect(traffic.Contention{Sessions: few, Rounds: 1, Contenders: 2, Workers: 2}.Run(ctx, dir, traffic.NewClock(), &traffic.Recorder{})).To(Succeed())
		}}, "fencing.MisTaggedKeys: the generation's tag is narrower than the lease's, so the C scripts' pair looks tagged yet spans slots (silent until G3, §Failure Modes)"},
		{workload{"presence/single-mget", func(ctx context.Context, p client.Pool) {
			readPresence(ctx, p, s, pinned, "naive", presence.ReadSingleMGet)
		}}, "one MGET of every presence key (presence.ReadSingleMGet): CROSSSLOT on a cluster, a correct-looking answer here"},
		{workload{"registry/" + string(registry.MutantCrossSlotMGet), func(ctx context.Context, p client.Pool) {
			runMesh(ctx, p, s, "xslot-"+string(b), registry.MutantCrossSlotMGet)
		}}, "discovery fetches every record in one MGET: records live in every slot"},
	}
	ws := make([]workload, len(controls))
	for i, c := range controls {
		ws[i] = c.workload
	}
	bad := runWorkloads(ctx, pool, ws)
	var ctls []report.Control
	for _, c := range controls {
		h := bad[c.name]
		ctl := harness.Variant(c.name, c.why, locality.CrossSlotFree(h, 1))
		// Caught only when the twin flagged it AND the server said nothing: the point of the
		// control is that a standalone node cannot tell.
		ctl.Caught = ctl.Caught && h.TotalErrors() == 0
		ctl.Observed += fmt.Sprintf(" | %d calls, server errors %v", h.Calls, h.Errors)
		ctls = append(ctls, ctl)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctls...)
}

// runWorkloads runs each workload through its own twin over pool, concurrently, and
// returns each twin's history by workload name.
func runWorkloads(ctx context.Context, pool client.Pool, ws []workload) map[string]locality.History {
	GinkgoHelper()
	out := map[string]locality.History{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			defer GinkgoRecover()
			twin := locality.Wrap(pool)
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
	mesh := &traffic.Mesh{Registry: r, Discover: r.Discover, Min: 8, Max: 14, Initial: 10, ChurnEvery: 100 * time.Millisecond,
		Observers: 2, DiscoverEvery: interval / 2, Rand: cfg.Rand("locality/mesh/" + name), Name: name}
	mesh.Start(ctx, traffic.NewClock())
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
	pat := traffic.WritePresence(ctx, store, cfg.Rand("locality/presence/"+community), traffic.PresenceLayout{
		Community: "loc-" + community, Keys: s.PresenceKeys, ShortTTL: 100 * time.Millisecond, Pinned: pinned, Workers: 4})
	reader := &traffic.PresenceReader{Store: store, Clock: traffic.NewClock()}
	for range s.Reads {
		reader.Read(ctx, pat.Keys)
	}
	for _, rd := range reader.Reads() {
		Expect(rd.Err).To(BeEmpty(), "presence read (%s)", mode)
	}
}
