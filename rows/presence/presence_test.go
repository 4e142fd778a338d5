package presence_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/presence/judge"
	"github.com/slotgate/slotgate/rows/presence/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowPresenceMGet

var _ = Describe("presence-mget", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "presence-mget/positional/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "a bulk read split per slot answers every value and nil at its caller's position, also while a slot moves mid-read (000 §Conformance, Presence MGET)",
				Run:  func(ctx SpecContext) report.Check { return positional(ctx, b) },
			},
			harness.Scenario{
				Name: "presence-mget/bulk-ops/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "the per-slot bulk read never crosses slots and rides out a slot migration (TRYAGAIN retried, every retry counted) without an error, mode unset or per-slot, with counters or none (000 §Conformance, Presence MGET; §System Model, Presence)",
				Run:  func(ctx SpecContext) report.Check { return bulkOps(ctx, b) },
			},
		)
	}
})

// presenceScale sizes the row. Presence lives 90 s in production; the run
// keeps a long TTL for the present keys (they must not expire mid-scenario)
// and gives the expiring subset a short one that elapses before any read.
// The present keys' TTL is not the production one: a full-profile run on a
// heavily shared machine read its last keys 1m31s after writing them, past
// the 90 s TTL, and the model wanted values where the server had rightly
// expired them. The model now knows each key's expiry
// (judge.Want.ExpiresAt) and does not judge a read past it.
type presenceScale struct {
	Keys, FullReads, SampleReads, SampleSize int
	TTL, ShortTTL, Hold                      time.Duration
}

func scaleOf() presenceScale {
	if cfg.Profile == harness.ProfileFull {
		return presenceScale{Keys: 10_000, FullReads: 5, SampleReads: 200, SampleSize: 1000, TTL: presentTTL, ShortTTL: 500 * time.Millisecond, Hold: 1500 * time.Millisecond}
	}
	return presenceScale{Keys: 2_000, FullReads: 3, SampleReads: 30, SampleSize: 200, TTL: presentTTL, ShortTTL: 300 * time.Millisecond, Hold: time.Second}
}

// moveHoldMax bounds how long the moving slot stays MIGRATING past its
// hold while no reader has met TRYAGAIN yet: hold, this and the keys' move
// stay well inside a read's 10 s TRYAGAIN budget
// (presence.DefaultTryAgainBudget), so no read the row judges gives up
// because the harness held the slot.
const moveHoldMax = 5 * time.Second

// presentTTL outlasts any run of the row, loaded or not (a full run takes
// 2–4 minutes on a heavily shared machine).
const presentTTL = 15 * time.Minute

// probeBudget is the retry probe's TRYAGAIN budget in bulk-ops: a hundred
// first backoffs (5 ms), so a read that gives up has retried, and shorter
// than the smoke profile's 1 s MIGRATING hold, so some reads do give up.
const probeBudget = 500 * time.Millisecond

// pinnedPerSlot keys are forced into the slot that moves: half present,
// half never written, so the moving slot holds a mixed group — the case
// where a migrating slot answers TRYAGAIN for the group.
const pinnedPerSlot = 6

// setup writes the pattern and returns it with the slot that will move and
// the pinned keys in that slot.
func setup(ctx context.Context, store *presence.Store, clock *traffic.Clock, rng *rand.Rand, s presenceScale, community string) (workload.Pattern, int, []string) {
	GinkgoHelper()
	moving := rng.IntN(slot.Count)
	By(fmt.Sprintf("writing %d presence keys over every slot (present / never / cleared / expired) plus %d pinned in slot %d", s.Keys, pinnedPerSlot, moving))
	p := workload.Write(ctx, store, rng, workload.Layout{Community: community, Keys: s.Keys, ShortTTL: s.ShortTTL, TTL: s.TTL, Clock: clock, Pinned: map[int]int{moving: pinnedPerSlot}, Workers: 8})
	Expect(check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: p.Outcomes, MinOps: s.Keys / 2}).Status).To(Equal(check.Pass), "the pattern's writes must succeed before reads are judged")
	var pinned []string
	for _, k := range p.Keys {
		if slot.Of(k) == moving {
			pinned = append(pinned, k)
		}
	}
	return p, moving, pinned
}

// shardSpread says how many pattern keys each primary owns, so the
// evidence shows every shard took part.
func shardSpread(ctx context.Context, keys []string) ([]string, bool) {
	GinkgoHelper()
	perSlot := map[int]int{}
	for _, k := range keys {
		perSlot[slot.Of(k)]++
	}
	count := map[string]int{}
	for s, n := range perSlot {
		node, err := cluster.NodeForSlot(ctx, s)
		Expect(err).NotTo(HaveOccurred())
		count[node.Name()] += n
	}
	var out []string
	every := true
	for _, p := range cluster.Primaries() {
		out = append(out, fmt.Sprintf("%s owns %d of %d keys", p.Name(), count[p.Name()], len(keys)))
		every = every && count[p.Name()] > 0
	}
	return out, every
}

// moveWhileReading moves slot s to the next shard (holding it MIGRATING for
// hold, and then until met reports that the readers met the migration, for
// at most moveHoldMax more) while every reader keeps reading samples that
// include must, and returns the span of the move on clock (fault.Apply
// records its window).
func moveWhileReading(ctx context.Context, clock *traffic.Clock, rng *rand.Rand, keys, must []string, size int, hold time.Duration, met func() bool, readers ...*workload.Reader) check.Span {
	GinkgoHelper()
	By(fmt.Sprintf("fault: slot %d moves to the next shard, held MIGRATING for %v and until the readers met TRYAGAIN (at most %v more), while %d readers read", slot.Of(must[0]), hold, moveHoldMax, len(readers)))
	samples := make([][]string, 64)
	for i := range samples {
		samples[i] = workload.Sample(rng, keys, size, must)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Go(func() {
			// A read that panics fails the scenario instead of killing the
			// suite process with no report.
			defer GinkgoRecover()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				r.Read(ctx, samples[i%len(samples)])
			}
		})
	}
	start := clock.Now()
	_, err := fault.Apply(ctx, cluster, fault.MoveSlot{Slot: slot.Of(must[0]), To: -1, Hold: hold, Until: met, UntilMax: moveHoldMax})
	span := check.Span{Start: start, End: clock.Now()}
	close(done)
	wg.Wait()
	harness.MustConfirm(err, cfg.Seed)
	return span
}

func during(reads []judge.Read, w check.Span) int {
	n := 0
	for _, r := range reads {
		if r.Call <= w.End && r.Return >= w.Start {
			n++
		}
	}
	return n
}

func positional(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	rng := cfg.Rand("presence-mget/positional/" + string(b))
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	clock := traffic.ClockOf(ctx)
	store := presence.New(pool, presence.Options{TTL: s.TTL})
	p, _, pinned := setup(ctx, store, clock, rng, s, "pos-"+string(b))
	spread, every := shardSpread(ctx, p.Keys)
	ev.Observed = append(ev.Observed, spread...)

	var retries, redirects atomic.Int64
	store = presence.New(pool, presence.Options{TTL: s.TTL, Read: presence.ReadOptions{Retries: &retries, Redirects: &redirects}})
	reader := &workload.Reader{Store: store, Clock: clock}
	concat := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadConcatenated}}), Clock: clock}
	By(fmt.Sprintf("%d full reads (shuffled, with duplicates) and %d samples of %d", s.FullReads, s.SampleReads, s.SampleSize))
	for range s.FullReads {
		reader.Read(ctx, workload.Shuffled(rng, p.Keys, s.Keys/20))
	}
	for range s.SampleReads {
		k := workload.Sample(rng, p.Keys, s.SampleSize, nil)
		reader.Read(ctx, k)
		concat.Read(ctx, k)
	}
	nilOnFailure := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadNilOnFailure}}), Clock: clock}
	// Held until the per-slot reader retried a TRYAGAIN: the migration
	// reached a read.
	span := moveWhileReading(ctx, clock, rng, p.Keys, pinned, s.SampleSize, s.Hold, func() bool { return retries.Load() > 0 }, reader, reader, reader, nilOnFailure)
	By("after the move: one more full read")
	reader.Read(ctx, workload.Shuffled(rng, p.Keys, s.Keys/20))

	reads := reader.Reads()
	result := judge.Positional.Judge(judge.PositionalInput{Want: p.Want, Reads: reads, MinPositions: s.Keys})
	if !every {
		result = check.All("presence-positional", result, check.HappenedCheck.Judge(check.HappenedInput{Name: "every-shard", Count: 0, None: "the pattern missed a shard"}))
	}
	positions := 0
	for _, r := range reads {
		positions += len(r.Keys)
	}
	failed := 0
	for _, o := range judge.Outcomes(reads) {
		if o.ErrKind != "" {
			failed++
		}
	}
	ev.Metrics = map[string]float64{
		"keys": float64(len(p.Keys)), "present": float64(p.States[workload.Set]), "never_written": float64(p.States[workload.Never]),
		"cleared": float64(p.States[workload.Cleared]), "expired": float64(p.States[workload.Expired]),
		"reads": float64(len(reads)), "positions_read": float64(positions), "reads_during_move": float64(during(reads, span)), "failed_reads": float64(failed), "tryagain_retries": float64(retries.Load()), "redirects_handed_back": float64(redirects.Load()),
	}
	nofReads := nilOnFailure.Reads()
	ev.Observed = append(ev.Observed, fmt.Sprintf("%d of the per-slot reader's reads overlapped the move; %d nil-on-failure reads overlapped it", during(reads, span), during(nofReads, span)))
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(presence.ReadNilOnFailure), "a split that answers nil for a part that failed (TRYAGAIN on the migrating slot) and reports no error: present users read as absent",
			judge.Positional.Judge(judge.PositionalInput{Want: p.Want, Reads: nofReads, MinPositions: 1})),
		harness.Variant(string(presence.ReadConcatenated), "a split that appends the per-slot answers in slot order instead of scattering them back to the caller's positions",
			judge.Positional.Judge(judge.PositionalInput{Want: p.Want, Reads: concat.Reads(), MinPositions: 1})),
	)
}

func bulkOps(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	rng := cfg.Rand("presence-mget/bulk-ops/" + string(b))
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	clock := traffic.ClockOf(ctx)
	var retries, redirects atomic.Int64
	store := presence.New(pool, presence.Options{TTL: s.TTL, Read: presence.ReadOptions{Retries: &retries, Redirects: &redirects}})
	p, _, pinned := setup(ctx, store, clock, rng, s, "ops-"+string(b))

	reader := &workload.Reader{Store: store, Clock: clock}
	for range s.FullReads {
		reader.Read(ctx, workload.Shuffled(rng, p.Keys, s.Keys/20))
	}
	noRetry := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadNoRetry}}), Clock: clock}
	// The read paths other callers take through the move too: the zero
	// ReadOptions (presence.MGet, a Store as production makes it: no
	// counters) and ReadPerSlot named explicitly (the registry's record
	// fetch) — the reader above sets counters, and a mode of "" and
	// ReadPerSlot must both retry. The probe counts its own retries with a
	// budget short enough that some of its reads of the moving slot give up,
	// for judge.RetriesCounted (three goroutines share its counters,
	// which the check judges in total); its errors are by design and judged
	// by nothing else.
	plain := &workload.Reader{Store: presence.New(pool, presence.Options{}), Clock: clock}
	perSlot := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadPerSlot}}), Clock: clock}
	var probeRetries, probeRedirects atomic.Int64
	probe := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadPerSlot,
		TryAgainBudget: probeBudget, Retries: &probeRetries, Redirects: &probeRedirects}}), Clock: clock}
	// Held until both the per-slot reader retried a TRYAGAIN and the
	// no-retry control met one: a run that never did proves nothing either
	// way (the row's "tryagain-retry" check and the control's premise).
	met := func() bool {
		return retries.Load() > 0 && harness.ErrorsOf(judge.Outcomes(noRetry.Reads()), client.KindTryAgain) > 0 &&
			harness.ErrorsOf(judge.Outcomes(probe.Reads()), client.KindTryAgain) > 0 // a probe read gave up: RetriesCounted has something to judge
	}
	span := moveWhileReading(ctx, clock, rng, p.Keys, pinned, s.SampleSize, s.Hold, met, reader, reader, reader, noRetry, plain, perSlot, probe, probe, probe)
	reader.Read(ctx, workload.Shuffled(rng, p.Keys, s.Keys/20))

	By("negative control: one MGET of keys in many slots")
	single := &workload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadSingleMGet}}), Clock: clock}
	for range 4 {
		single.Read(ctx, workload.Sample(rng, p.Keys, 50, nil))
	}
	reads := reader.Reads()
	outcomes := append(append([]history.OpOutcome(nil), p.Outcomes...), judge.Outcomes(reads)...)
	outcomes = append(append(outcomes, judge.Outcomes(plain.Reads())...), judge.Outcomes(perSlot.Reads())...)
	result := check.All("bulk-ops", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: outcomes, MinOps: s.Keys / 2}),
		judge.RetriesCounted.Judge(judge.RetriesCountedInput{Reads: probe.Reads(), Retries: probeRetries.Load(), Redirects: probeRedirects.Load()}))
	if seen := check.HappenedCheck.Judge(check.HappenedInput{Name: "tryagain-retry", Count: int(retries.Load()), None: "no read met TRYAGAIN: the migration path was never exercised"}); seen.Status != check.Pass {
		result = check.All("bulk-ops", result, seen)
	}
	ev.Metrics = map[string]float64{"writes": float64(len(p.Outcomes)), "reads": float64(len(reads)), "reads_during_move": float64(during(reads, span)), "tryagain_retries": float64(retries.Load()), "redirects_handed_back": float64(redirects.Load()),
		"plain_reads": float64(len(plain.Reads())), "per_slot_reads": float64(len(perSlot.Reads())), "probe_reads": float64(len(probe.Reads())), "probe_tryagain_retries": float64(probeRetries.Load())}
	if n := redirects.Load(); n > 0 {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s handed %d MOVED/ASK back to the caller during the migration instead of following it; the per-slot read re-sent the part", pool.Version(), n))
	}

	singleOut := judge.Outcomes(single.Reads())
	// Caught only when refused loudly with CROSSSLOT (check.LoudRefusal
	// decides both, so the re-check replays the premise); the first error
	// is shown beside it.
	crossSlot := harness.Variant(string(presence.ReadSingleMGet), "one MGET over keys of many slots: CROSSSLOT from the server (go-redis sends it) or a refusal before sending (valkey-go)", check.LoudRefusalCheck.Judge(check.LoudRefusalInput{Outcomes: singleOut, Want: string(client.KindCrossSlot)}))
	refused := check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: singleOut, Want: string(client.KindCrossSlot)})
	crossSlot.Observed += ": " + singleOut[0].Err
	nr := judge.Outcomes(noRetry.Reads())
	noRetryCtl := harness.Variant(string(presence.ReadNoRetry), "a per-slot split that hands TRYAGAIN (a slot mid-migration holding part of a group) straight to the caller", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: nr, MinOps: 1}))
	// Caught only by TRYAGAIN: a timeout on a loaded runner is not the bug
	// this variant models, and a run that never met TRYAGAIN proves nothing.
	noRetryCtl = harness.Premise(noRetryCtl, harness.ErrorsOf(nr, client.KindTryAgain) > 0, "no read met TRYAGAIN")
	admitCrossSlot(b, pool.Version(), singleOut, refused, result)
	admitMultiKeyRedirects(b, pool.Version(), retries.Load(), redirects.Load(), result)
	return harness.Check(row, report.ColumnErrors, "", result, ev, crossSlot, noRetryCtl)
}

// admitCrossSlot records the raw client's admission for cross-slot
// multi-key work (spec 000 §Conformance, Locality contract): one MGET over
// keys of many slots handed to the library as it is. Refused loudly
// (CROSSSLOT from the server, or the library's refusal before sending), the
// client is safe but cannot serve the read: impl's per-slot split is needed.
// Served without an error, the library scattered atomic-looking work
// silently, which the locality contract forbids whatever wraps it.
func admitCrossSlot(b client.Backend, version string, single []history.OpOutcome, refused, split check.Result) {
	GinkgoHelper()
	raw, wrapped := check.Result{Status: check.Unknown, Message: "the cross-slot MGET failed, but not with CROSSSLOT: " + refused.Message}, split
	switch {
	case refused.Status == check.Pass:
		raw = check.Result{Status: check.Fail, Message: "loud, cannot serve it: " + refused.Message}
	case check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: single, MinOps: 1}).Status == check.Pass:
		raw = check.Result{Status: check.Fail, Message: fmt.Sprintf("%d cross-slot MGETs answered without an error: scattered silently", len(single))}
		wrapped = check.Result{Status: check.Fail, Message: "a library that scatters cross-slot work silently is refused whatever wraps it"}
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementCrossSlot, Client: version, Path: harness.LibraryPath(b, "ClusterClient.Do (MGET over many slots)", "Client.Do (MGET over many slots)"), Raw: raw, Wrapped: wrapped,
		Wrapper:  "impl/presence per-slot split (positional MGET per slot, TRYAGAIN re-sent)",
		Evidence: fmt.Sprintf("%d MGETs, each over 50 presence keys of many slots, through the raw %s pool.", len(single), version)})
}

// admitMultiKeyRedirects adds the presence run's evidence to the redirects
// requirement (the routing row records the single-key one): a per-slot MGET
// on a slot held MIGRATING meets TRYAGAIN (part of the keys moved), and
// ASK/MOVED; every one the library handed back to impl's read instead of
// absorbing it is a redirect the raw client did not handle.
func admitMultiKeyRedirects(b client.Backend, version string, tryAgain, redirects int64, reads check.Result) {
	GinkgoHelper()
	raw := check.Result{Status: check.Unknown, Message: "the library handed no TRYAGAIN, MOVED or ASK back during this run's migration"}
	if tryAgain+redirects > 0 {
		raw = check.Result{Status: check.Fail, Message: fmt.Sprintf("the library handed %d TRYAGAIN and %d MOVED/ASK back to the caller on per-slot MGETs of a slot held MIGRATING", tryAgain, redirects)}
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementRedirects, Client: version, Path: harness.LibraryPath(b, "ClusterClient.Do (per-slot MGET, its own redirect following)", "Client.Do (per-slot MGET, its own redirect following)"), Raw: raw, Wrapped: reads,
		Wrapper:  "impl/presence per-slot read (re-sends TRYAGAIN, MOVED and ASK)",
		Evidence: fmt.Sprintf("Multi-key reads (per-slot MGET through the %s pool) while a slot of their keys migrated.", version)})
}
