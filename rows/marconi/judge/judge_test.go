package judge

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/check/checktest"
	"github.com/slotgate/slotgate/history"
)

// Every checker's input survives the JSON round trip (Judge keeps the
// call) on passing and failing fixtures alike, live times included, and
// the call replays to the very result.
func TestCheckersReplay(t *testing.T) {
	now := time.Now() // a live time: monotonic reading
	obl := obligationHistory()
	for i := range obl.Ops {
		obl.Ops[i].Start = now.Add(obl.Ops[i].Start.Sub(obl.End))
		obl.Ops[i].End = now.Add(obl.Ops[i].End.Sub(obl.End))
	}
	forgetful := hookSteps()
	forgetful[5].After = MeshRouteState{Route: "s1", LastHeartbeat: now}
	stale := meshHistory()
	stale.Sends[20].SessionID = "s1"
	h, s := metricsFixture()
	points := []MetricsPoint{{Name: "final", Scrape: s, History: h}}
	checktest.Judged(t, NoSubscribe, SubscribeCount{Nodes: []string{"n1"}, ClusterNodes: 1, Attached: 4, MinAttached: 1, Commands: map[string]int64{"n1:subscribe": 3}})
	checktest.Judged(t, QueueDefaultsHeld, QueueDefaults{MaxBytes: 512 << 20, DepthAtOverflow: 50_000, LostFirst: 1, KeptNewest: true, AgeBelow: 599 * time.Second, AgeAbove: 601 * time.Second, SurvivedBelow: true, EjectedAbove: true})
	checktest.Judged(t, EngagementStamped, Engagement{Receivers: 2, Stamps: 2, HookCalls: 2, Advanced: 2, Attached: 1, Sends: 4, Pushed: 4})
	checktest.Judged(t, HotPathIO, MeshIO{Sends: 100, PausedSends: 100, MinSends: 50, ClientHotPath: map[string]int64{}, ServerRedis: map[string]int64{"n0:get": 0}})
	checktest.Judged(t, SendsDelivered, DeliveredInput{meshHistory(), 1, false})
	checktest.Judged(t, HookTransitions, forgetful)
	checktest.Judged(t, StaleRoutes, StaleRoutesInput{stale, 0, 1})
	checktest.Judged(t, ReleasedUnindexed, UnindexedInput{[]MeshIndexProbe{{SessionID: "s1", Tenant: "acme", Index: "marconi:sessidx:{acme}", Member: true, Score: 1.7e12}}, 1})
	checktest.Judged(t, HookAndStaleRoutes, ForgetfulInput{forgetful, stale, 500 * time.Millisecond})
	checktest.Judged(t, StaleRoutesFailing, StaleControlInput{stale, 0})
	checktest.Judged(t, MasterTermFailing, StaleControlInput{stale, 0})
	checktest.Judged(t, CacheHealth, MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1"}})
	checktest.Judged(t, CacheHealthFailing, MeshCacheStats{Hits: 1, MinReads: 1, FirstReads: map[string]string{"s1": ""}, FailedSends: []string{"x"}})
	checktest.Judged(t, CacheHitFloor, HitFloorInput{cacheReads(200, 10, 2), 0.99, 100, true})
	checktest.Judged(t, InvalidatorErrorsCounted, InvalidatorOutage{SeamFailures: 12, Counted: 8})
	checktest.Judged(t, Rehydrated, RehydratedInput{map[string]string{"s1": "acme/p1/a"}, map[string]string{"acme/p1/a": "s1"}})
	checktest.Judged(t, AuditLedger, MeshLedger{Accepted: []string{"a", "b"}, Streamed: map[string]int{"a": 1}})
	checktest.Judged(t, SendsAnswered, meshHistory())
	checktest.Judged(t, MetricsAgree, points)
	checktest.Judged(t, MetricsExposed, points)
	checktest.Judged(t, PendingTTL, pendingTTL())
	checktest.Judged(t, FlagsLedger, flagLedger())
	checktest.Judged(t, FlagsRefusals, flagLedger())
	checktest.Judged(t, FlagsDefaultOff, flagDefaults())
	checktest.Judged(t, Obligations, obl)
	checktest.Judged(t, ObligationCalls, obl)
}

// Histories written before the checkers were defined here stored the
// reflective calls under the old Go names, one input per argument: each
// replays through its alias to what the typed checker gives.
func TestStoredCallsReplayThroughAliases(t *testing.T) {
	raw := func(v ...any) []json.RawMessage { return checktest.Inputs(t, v...) }
	stale := meshHistory()
	stale.Sends[20].SessionID = "s1"
	forgetful := hookSteps()
	forgetful[5].After = MeshRouteState{Route: "s1"}
	probes := []MeshIndexProbe{{SessionID: "s1", Tenant: "acme", Index: "marconi:sessidx:{acme}", Member: true, Score: 1.7e12}}
	active, routes := map[string]string{"s1": "acme/p1/a", "s2": "acme/p1/b"}, map[string]string{"acme/p1/a": "s1"}
	reads := cacheReads(200, 10, 2)
	h, s := metricsFixture()
	points := []MetricsPoint{{Name: "final", Scrape: s, History: h}}
	cache := MeshCacheStats{Hits: 995, Misses: 5, MinHitRate: 0.99, MinReads: 100, FirstReads: map[string]string{"s1": "s1"}}
	for _, c := range []struct {
		old   string
		input []json.RawMessage
		want  check.Result
	}{
		// Several arguments: each replays into the input struct's fields in order.
		{"MarconiSendsDelivered", raw(stale, 1, false), SendsDelivered.Judge(DeliveredInput{stale, 1, false})},
		{"MarconiStaleRoutes", raw(stale, time.Duration(0), 1), StaleRoutes.Judge(StaleRoutesInput{stale, 0, 1})},
		{"MarconiReleasedUnindexed", raw(probes, 1), ReleasedUnindexed.Judge(UnindexedInput{probes, 1})},
		{"MarconiHookAndStaleRoutes", raw(forgetful, stale, 500*time.Millisecond), HookAndStaleRoutes.Judge(ForgetfulInput{forgetful, stale, 500 * time.Millisecond})},
		{"MarconiStaleRoutesFailing", raw(stale, time.Duration(0)), StaleRoutesFailing.Judge(StaleControlInput{stale, 0})},
		{"MarconiMasterTermFailing", raw(stale, time.Duration(0)), MasterTermFailing.Judge(StaleControlInput{stale, 0})},
		{"MarconiCacheHitFloor", raw(reads, 0.99, 100, true), CacheHitFloor.Judge(HitFloorInput{reads, 0.99, 100, true})},
		{"MarconiRehydrated", raw(active, routes), Rehydrated.Judge(RehydratedInput{active, routes})},
		// One argument: the input is the old argument itself.
		{"MarconiHotPathIO", raw(MeshIO{Sends: 100, PausedSends: 100, MinSends: 50, ClientHotPath: map[string]int64{"publish": 3}}), HotPathIO.Judge(MeshIO{Sends: 100, PausedSends: 100, MinSends: 50, ClientHotPath: map[string]int64{"publish": 3}})},
		{"MarconiHookTransitions", raw(forgetful), HookTransitions.Judge(forgetful)},
		{"MarconiCacheHealth", raw(cache), CacheHealth.Judge(cache)},
		{"MarconiCacheHealthFailing", raw(cache), CacheHealthFailing.Judge(cache)},
		{"MarconiSendsAnswered", raw(meshHistory()), SendsAnswered.Judge(meshHistory())},
		{"MarconiAuditLedger", raw(MeshLedger{Accepted: []string{"a", "b"}, Streamed: map[string]int{"a": 1}}), AuditLedger.Judge(MeshLedger{Accepted: []string{"a", "b"}, Streamed: map[string]int{"a": 1}})},
		{"MarconiNoSubscribe", raw(SubscribeCount{Nodes: []string{"n1"}, ClusterNodes: 1, Attached: 4, MinAttached: 1}), NoSubscribe.Judge(SubscribeCount{Nodes: []string{"n1"}, ClusterNodes: 1, Attached: 4, MinAttached: 1})},
		{"MarconiQueueDefaults", raw(QueueDefaults{MaxBytes: 64 << 20}), QueueDefaultsHeld.Judge(QueueDefaults{MaxBytes: 64 << 20})},
		{"MarconiEngagement", raw(Engagement{Receivers: 2, Stamps: 2}), EngagementStamped.Judge(Engagement{Receivers: 2, Stamps: 2})},
		{"MarconiInvalidatorErrorsCounted", raw(InvalidatorOutage{SeamFailures: 12}), InvalidatorErrorsCounted.Judge(InvalidatorOutage{SeamFailures: 12})},
		{"MarconiMetricsAgree", raw(points), MetricsAgree.Judge(points)},
		{"MarconiMetricsExposed", raw(points), MetricsExposed.Judge(points)},
		{"MarconiPendingTTL", raw(pendingTTL()), PendingTTL.Judge(pendingTTL())},
		{"MarconiStageFlagsLedger", raw(flagLedger()), FlagsLedger.Judge(flagLedger())},
		{"MarconiStageFlagsRefusals", raw(flagLedger()), FlagsRefusals.Judge(flagLedger())},
		{"MarconiFlagsDefaultOff", raw(flagDefaults()), FlagsDefaultOff.Judge(flagDefaults())},
		{"MarconiObligations", raw(obligationHistory()), Obligations.Judge(obligationHistory())},
		{"MarconiObligationCalls", raw(obligationHistory()), ObligationCalls.Judge(obligationHistory())},
	} {
		checktest.ReplaysTo(t, history.Call{Checker: c.old, Input: c.input}, c.want)
	}
}

// A broken premise answers unknown, named, through the stable checker —
// for the checkers whose own tests judge only verdicts.
func TestBrokenPremisesAreUnknown(t *testing.T) {
	onlyAllowed := flagLedger()
	onlyAllowed.Attempts = onlyAllowed.Attempts[:1] // no forbidden combination tried
	queue := QueueDefaults{MaxBytes: 512 << 20, DepthAtOverflow: 50_000, LostFirst: 1, KeptNewest: true,
		AgeBelow: 601 * time.Second, AgeAbove: 601 * time.Second, SurvivedBelow: true, EjectedAbove: true} // ages do not bracket 600 s
	few := obligationHistory()
	few.Ops = few.Ops[:1]
	for _, c := range []struct {
		name string
		r    check.Result
	}{
		{"refusals: no forbidden combination tried", FlagsRefusals.Judge(onlyAllowed)},
		{"queue defaults: ages do not bracket max_age", QueueDefaultsHeld.Judge(queue)},
		{"rehydrated: no active session", Rehydrated.Judge(RehydratedInput{nil, map[string]string{"acme/p1/a": "s1"}})},
		{"audit ledger: nothing accepted", AuditLedger.Judge(MeshLedger{})},
		{"metrics exposed: no scrape", MetricsExposed.Judge(nil)},
		{"obligations: fewer than MinOps opened", Obligations.Judge(few)},
		{"stale-route-5xx control: no churn", StaleRoutesFailing.Judge(StaleControlInput{MeshHistory{}, 0})},
		{"master-term control: no churn", MasterTermFailing.Judge(StaleControlInput{MeshHistory{}, 0})},
		{"cache health control: too few reads", CacheHealthFailing.Judge(MeshCacheStats{MinReads: 100})},
	} {
		if c.r.Status != check.Unknown || c.r.Message == "" {
			t.Errorf("%s: %s %q, want unknown saying why", c.name, c.r.Status, c.r.Message)
		}
	}
}

// The hook tour's premise is that every Stage 2 hook ran: a tour that
// skipped one fails naming it (the tour is the row's own driven walk, so a
// hook it never reached is the row's failure, not an unjudged run).
func TestHookTransitionsNamesUnexercisedHooks(t *testing.T) {
	r := HookTransitions.Judge(hookSteps()[:1])
	if r.Status != check.Fail || r.Counterexample == "" {
		t.Fatalf("a tour of one step: %s %q", r.Status, r.Message)
	}
}
