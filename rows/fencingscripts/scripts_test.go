package fencingscripts_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowFencingScripts

var _ = Describe("fencing-scripts", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "fencing-scripts/contention/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "one lease per session, generation +1 per acquisition, owner+generation guards (000 §Per-phase operation table, C)",
				Run:  func(ctx SpecContext) report.Check { return contention(ctx, b) },
			},
			harness.Scenario{
				Name: "fencing-scripts/script-ops/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "tagged scripts run; un-tagged pairs refused with CROSSSLOT; NOSCRIPT after a lost script cache is recovered (000 §Conformance, Fencing scripts)",
				Run:  func(ctx SpecContext) report.Check { return scriptOps(ctx, b) },
			},
		)
	}
	harness.Emit(harness.Scenario{
		Name: "fencing-scripts/keyslot-equality", Row: row, Column: report.ColumnErrors,
		Spec: "CLUSTER KEYSLOT equality on real tagged pairs (000 §Deployment Gate rule 5, pre-G3)",
		Run:  keyslotEquality,
	})
})

func runContention(ctx context.Context, dir *fencing.Directory, sessions []fencing.Session, rounds, contenders int) *traffic.Recorder {
	rec := &traffic.Recorder{}
	w := traffic.Contention{Sessions: sessions, Rounds: rounds, Contenders: contenders, Workers: 8}
	Expect(w.Run(ctx, dir, traffic.ClockOf(ctx), rec)).To(Succeed())
	return rec
}

func contention(ctx SpecContext, b client.Backend) report.Check {
	scale := cfg.Scale()
	rng := cfg.Rand("fencing-scripts/contention/" + string(b))
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)

	By(fmt.Sprintf("racing %d pods for %d sessions × %d rounds on %s", scale.Contenders, scale.Sessions, scale.Rounds, cluster.Spec))
	sessions := harness.Sessions(rng, "contention", scale.Sessions)
	rec := runContention(ctx, fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C)}), sessions, scale.Rounds, scale.Contenders)
	h := rec.FencingHistory()
	result := check.FencingInvariantsCheck.Judge(h)
	acquired := 0
	for _, op := range h {
		if op.Kind == history.OpAcquire && op.OK {
			acquired++
		}
	}
	ev.Metrics = map[string]float64{"operations": float64(len(h)), "acquisitions": float64(acquired), "sessions": float64(len(sessions))}
	ev.Observed = append(ev.Observed, shardSpread(ctx, sessions)...)
	if errs := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: rec.Outcomes(), MinOps: 1}); errs.Status != check.Pass {
		ev.Observed = append(ev.Observed, "errors during the run (scored in the errors column): "+errs.Message)
	}

	var controls []report.Control
	for _, m := range fencing.Mutants {
		By("negative control: mutant " + string(m))
		scripts, err := fencing.WithMutant(m)
		Expect(err).NotTo(HaveOccurred())
		ms := harness.Sessions(rng, "mutant-"+string(m), scale.MutantSessions)
		mrec := runContention(ctx, fencing.New(pool, fencing.Options{Scripts: scripts}), ms, 2, scale.Contenders)
		mh := mrec.FencingHistory()
		controls = append(controls, harness.Variant(string(m), mutantWhy[m], check.FencingInvariantsCheck.Judge(mh)))
		if ce := check.FencingCounterexample(mh, 10*time.Second); ce != nil && ev.Timeline == nil {
			ev.Timeline = harness.FencingTimeline(fmt.Sprintf("Not this run: the counterexample the checker caught in negative control %s (%s), session %s.", m, mutantWhy[m], ce[0].Session), ce)
		}
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

var mutantWhy = map[fencing.Mutant]string{
	fencing.MutantAcquireIgnoresLease:     "acquire skips the held-lease check: two owners for one session (spec mutant M1 class)",
	fencing.MutantAcquireReusesGeneration: "acquire never advances the counter: a generation issued twice, stale frames pass the fence (M3/M5 class)",
	fencing.MutantRenewUnguarded:          "renew without owner+generation guard: a stale holder keeps another owner's lease alive",
	fencing.MutantReleaseUnguarded:        "release without owner+generation guard: a stale holder frees the current owner's session",
	fencing.MutantAcquireHidesHolder:      "a refused acquire reports the holder's generation but not its owner: the pod cannot redirect to the holder (a gomut survivor, Directory.Acquire:negate-cond#3)",
}

// shardSpread says how many sessions each primary owns, so the evidence
// shows that every shard was exercised.
func shardSpread(ctx context.Context, sessions []fencing.Session) []string {
	count := map[string]int{}
	for _, s := range sessions {
		n, err := cluster.NodeForSlot(ctx, slot.Of(fencing.NewKeys(s).Lease))
		if err != nil {
			return []string{"shard spread unknown: " + err.Error()}
		}
		count[n.Name()]++
	}
	var out []string
	for _, p := range cluster.Primaries() {
		out = append(out, fmt.Sprintf("%s owns %d of %d sessions", p.Name(), count[p.Name()], len(sessions)))
	}
	return out
}

func scriptOps(ctx SpecContext, b client.Backend) report.Check {
	scale := cfg.Scale()
	rng := cfg.Rand("fencing-scripts/script-ops/" + string(b))
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	dir := fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C)})
	var outcomes []history.OpOutcome
	phase := func(name string) {
		By(name)
		rec := runContention(ctx, dir, harness.Sessions(rng, name, scale.Sessions/2), 1, 2)
		outcomes = append(outcomes, rec.Outcomes()...)
	}
	phase("warm: scripts loaded by EVAL fallback on first use")

	By("fault: SCRIPT FLUSH on every node")
	_, err := fault.Apply(ctx, cluster, fault.ScriptFlush{})
	harness.MustConfirm(err, cfg.Seed)

	By("negative control: a naive client that sends EVALSHA only")
	naive := runContention(ctx, fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), EvalSHAOnly: true}), harness.Sessions(rng, "naive", 4), 1, 1)
	naiveCtl := harness.Variant("evalsha-only", "a client without NOSCRIPT fallback fails after any script-cache loss (failover, restart, SCRIPT FLUSH)", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: naive.Outcomes(), MinOps: 1}))
	// Caught only by NOSCRIPT: any other error (a timeout on a loaded
	// runner) is not the missing fallback this variant models.
	naiveCtl = harness.Premise(naiveCtl, harness.ErrorsOf(naive.Outcomes(), client.KindNoScript) > 0, "no script met NOSCRIPT")

	before := dir.Stats().NoScriptFallbacks.Load()
	phase("after the flush: NOSCRIPT must be answered by EVAL")
	afterFlush := dir.Stats().NoScriptFallbacks.Load() - before

	By("fault: restart primary 0 (its script cache is empty afterwards)")
	_, err = fault.Apply(ctx, cluster, fault.RestartPrimary{Index: 0})
	harness.MustConfirm(err, cfg.Seed)
	settle := awaitDirectory(ctx, dir, rng)
	before = dir.Stats().NoScriptFallbacks.Load()
	phase("after the restart")
	afterRestart := dir.Stats().NoScriptFallbacks.Load() - before

	ev.Metrics = map[string]float64{
		"operations": float64(len(outcomes)), "noscript_fallbacks_after_flush": float64(afterFlush),
		"noscript_fallbacks_after_restart": float64(afterRestart), "reconnect_errors_after_restart": float64(settle),
	}
	result := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: outcomes, MinOps: scale.Sessions})
	if seen := check.HappenedCheck.Judge(check.HappenedInput{Name: "noscript-fallback", Count: int(afterFlush), None: "no NOSCRIPT fallback after SCRIPT FLUSH: the recovery path was never exercised"}); seen.Status != check.Pass {
		result = check.All("script-ops", result, seen)
	}

	By("negative control: the un-tagged legacy key pair on the multi-shard cluster and on the single-shard node")
	untagged := untaggedOutcomes(ctx, pool, rng)
	singlePool := harness.Pool(ctx, b, single)
	untaggedSingle := untaggedOutcomes(ctx, singlePool, rng)
	ev.Observed = append(ev.Observed, "un-tagged pair on "+cluster.Spec.String()+": "+check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: untagged, Want: string(client.KindCrossSlot)}).Message,
		"un-tagged pair on single-shard: "+check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: untaggedSingle, Want: string(client.KindCrossSlot)}).Message)
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		loudCrossSlot("untagged-pair/multi-shard", untagged),
		loudCrossSlot("untagged-pair/single-shard", untaggedSingle),
		naiveCtl,
	)
}

// loudCrossSlot: the control is caught when the no-errors checker fails on
// it AND the failure is the server's CROSSSLOT, i.e. loud and for the
// right reason (spec 000 §Axioms A2); check.LoudRefusal decides both, so
// the offline re-check replays the premise too.
func loudCrossSlot(name string, outcomes []history.OpOutcome) report.Control {
	return harness.Variant(name, "legacy key pair without a shared hash tag: every script must fail loudly with CROSSSLOT",
		check.LoudRefusalCheck.Judge(check.LoudRefusalInput{Outcomes: outcomes, Want: string(client.KindCrossSlot)}))
}

func untaggedOutcomes(ctx context.Context, pool client.Pool, rng *rand.Rand) []history.OpOutcome {
	dir := fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), Keys: fencing.OldKeys})
	rec := &traffic.Recorder{}
	clock := traffic.ClockOf(ctx)
	for i := range 8 {
		s := fencing.Session{Community: "legacy", ID: fmt.Sprintf("u%d-%x", i, rng.Uint32())}
		traffic.Acquire(ctx, dir, clock, rec, 0, s)
	}
	return rec.Outcomes()
}

// awaitDirectory waits until the directory answers on every shard again
// after a restart; it returns how many attempts failed meanwhile (the
// failure-drills row characterises that window; this row scores what
// happens after it).
func awaitDirectory(ctx context.Context, dir *fencing.Directory, rng *rand.Rand) int {
	failed := 0
	probe := harness.Sessions(rng, "probe", 24)
	Eventually(func() error {
		for _, s := range probe {
			if _, err := dir.Lookup(ctx, s); err != nil {
				failed++
				return err
			}
		}
		return nil
	}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return failed
}

func keyslotEquality(ctx SpecContext) report.Check {
	rng := cfg.Rand("fencing-scripts/keyslot-equality")
	ev := harness.Evidence(cfg, cluster, nil)
	node := cluster.Primaries()[0]
	pairs := func(rule fencing.KeyRule, n int) []check.PairSlots {
		var out []check.PairSlots
		for _, s := range harness.Sessions(rng, "keyslot", n) {
			k := rule(s)
			out = append(out, check.PairSlots{A: k.Lease, B: k.Generation, SlotA: keyslot(ctx, node, k.Lease), SlotB: keyslot(ctx, node, k.Generation)})
		}
		return out
	}
	result := check.PairsShareSlotCheck.Judge(pairs(fencing.NewKeys, 200))
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("mis-tagged-pair", "generation key tagged {community} only: looks tagged, spans slots, a CROSSSLOT outage at G3", check.PairsShareSlotCheck.Judge(pairs(fencing.MisTaggedKeys, 20))),
		harness.Variant("legacy-pair", "the legacy un-tagged pair buzz:<c>:tunnel:<s>:lease|generation", check.PairsShareSlotCheck.Judge(pairs(fencing.OldKeys, 20))),
	)
}

func keyslot(ctx context.Context, n *fixtures.Node, key string) int {
	GinkgoHelper()
	reply, err := n.Do(ctx, "CLUSTER", "KEYSLOT", key)
	Expect(err).NotTo(HaveOccurred())
	s, err := client.AsInt64(reply)
	Expect(err).NotTo(HaveOccurred())
	return int(s)
}
