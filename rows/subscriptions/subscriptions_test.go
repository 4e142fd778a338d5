package subscriptions_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/pubsub"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/subscriptions/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowSubscriptions

// minExpected guards every silently-wrong check against a scenario that
// barely published.
const minExpected = 100

// enoughWait caps how long a drill publishes on, after its last fault, for
// its history to hold 2 × minExpected expected messages.
const enoughWait = 10 * time.Second

var _ = Describe("subscriptions", func() {
	for _, b := range harness.BackendsFromEnv() {
		silently := func(what, spec string, run func(ctx SpecContext, b client.Backend, name string) report.Check) harness.Scenario {
			name := "subscriptions/" + what + "/" + string(b)
			return harness.Scenario{Name: name, Row: row, Column: report.ColumnSilentlyWrong, Spec: spec,
				Run: func(ctx SpecContext) report.Check { return run(ctx, b, name) }}
		}
		harness.Emit(
			silently("steady", "every SPUBLISHed message reaches its SSUBSCRIBEd topic exactly once, in order, on its channel and to its subscription, on every shard, delivered by RESP3 push (CLIENT LIST) (000 §Sharded Pub/Sub Conversion; §Conformance, Subscriptions: RESP3 push delivery, message routing correct across shards)", steady),
			silently("slow-consumer", "an application that stalls reading loses nothing silently: backpressure through the relay, the client and the server's output buffer (000 §Conformance, Subscriptions)", slowConsumer),
			silently("dynamic", "dynamic ssubscribe/sunsubscribe across slots; duplicate confirmations tolerated (000 §Conformance, Subscriptions)", dynamic),
			silently("forced-disconnect", "forced disconnect of the subscription client: resubscription and delivery asserted, loss only inside the outage (000 §Client Architecture, redis-rs#2242)", forcedDisconnect),
			silently("slot-migration", "a topic's slot migrated under traffic: the server's sunsubscribe is recovered by re-SSUBSCRIBE (000 §Failure Modes, fails to resubscribe)", slotMigration),
			silently("failover", "the owning primary failed over, graceful and kill: subscriptions recover (000 §Conformance, Failure drills; Subscriptions)", failover),
			silently("patterns", "a missed cache-invalidate or conn-control message is silently wrong, across a forced reconnect and a kill failover of the node holding the pattern subscription: every signal delivered or covered by the resync after the pattern was restored; the patterns stay classic (000 §System Model, must-not-miss control signals; D2; §Failure Modes)", patterns),
			silently("topic-spread", "impl's exact topics, of both kinds, carry no hash tag: each community's topics spread over the shards in live placement (PUBSUB SHARDCHANNELS) and SPUBLISH load (commandstats), every message delivered (000 §Sharded Pub/Sub Conversion)", topicSpreadScenario),
			harness.Scenario{
				Name: "subscriptions/recovery-loud/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "no subscribe left failed or recovering, no publish error outside its outage window, across disconnect, migration and failover (000 §Conformance, Subscriptions)",
				Run: func(ctx SpecContext) report.Check {
					return recoveryLoud(ctx, b, "subscriptions/recovery-loud/"+string(b))
				},
			},
		)
	}
})

func full() bool { return cfg.Profile == harness.ProfileFull }

// verdict judges a drill's history with the silently-wrong checker: real
// bad variants (controls) and the checker's self-tests on edited copies of
// the history.
func verdict(r *drillRun, h history.SubscriptionHistory, controls ...report.Control) report.Check {
	return verdictOf(r, h, judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: minExpected}), controls...)
}

// verdictOf is verdict with the scenario's own result.
func verdictOf(r *drillRun, h history.SubscriptionHistory, res check.Result, controls ...report.Control) report.Check {
	controls = append(controls,
		harness.SelfTest("lost-after-healthy", "the last messages of a held topic vanish after its outage windows closed (a subscription silently gone): the history edited",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: loseTail(h), MinExpected: 1})),
		harness.SelfTest("duplicate-delivery", "one message handed to the application twice (a duplicate confirmation turned into a second subscription): the history edited",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: duplicate(h), MinExpected: 1})),
	)
	return harness.Check(row, report.ColumnSilentlyWrong, "", r.judged(res), r.evidence(h), controls...)
}

// variantRun runs d as a known-bad variant on a reset cluster, under its
// own subscription client name, and narrates its evidence.
func variantRun(ctx SpecContext, b client.Backend, name, what string, d drill) (history.SubscriptionHistory, *drillRun) {
	GinkgoHelper()
	By("negative control: " + what)
	Expect(cluster.Reset(ctx)).To(Succeed())
	d.tag, d.quiet = "variant", 300*time.Millisecond
	h, r := d.run(ctx, b, name)
	r.evidence(h)
	return h, r
}

// loseTail is the checker's self-test: the last three deliveries on a topic
// the application still holds never happened. Only messages the checker
// cannot excuse are dropped: sent after every loss window of that topic
// closed (AnalyzeSubscriptions' own windows, bounded by SubInFlightBound
// and SubRecoveryBound). (NOTE: seeds found earlier gaps: dropping the
// plain tail picked deliveries inside a still-open window, and judging by
// delivery time rather than send time picked messages the checker rightly
// excused, and the last deliveries are often of publishes the scenario's
// stop cut short — delivered, but never acknowledged, so never expected.)
func loseTail(h history.SubscriptionHistory) history.SubscriptionHistory {
	heldAtEnd := map[string]bool{}
	for _, iv := range h.Held {
		if iv.To == 0 {
			heldAtEnd[iv.Sub] = true
		}
	}
	closed := map[string]time.Duration{} // sub → its last window's end
	for sub, ws := range judge.AnalyzeSubscriptions(h).Windows {
		for _, w := range ws {
			closed[sub] = max(closed[sub], w.To)
		}
	}
	type msg struct {
		p   int
		seq int64
	}
	sent := map[msg]time.Duration{} // acknowledged messages only
	for _, p := range h.Publishes {
		if p.ErrKind == "" {
			sent[msg{p.Publisher, p.Seq}] = p.Sent
		}
	}
	after := func(d history.SubDelivery) bool {
		at, ok := sent[msg{d.Publisher, d.Seq}]
		return ok && at > closed[d.Sub]
	}
	out := h
	out.Deliveries = slices.Clone(h.Deliveries)
	removed := 0
	var victim string
	for i := len(out.Deliveries) - 1; i >= 0 && removed < 3; i-- {
		d := out.Deliveries[i]
		if victim == "" && heldAtEnd[d.Sub] && after(d) {
			victim = d.Sub
		}
		if d.Sub == victim && after(d) {
			out.Deliveries = slices.Delete(out.Deliveries, i, i+1)
			removed++
		}
	}
	return out
}

// duplicate is a known-bad variant: the last delivery on an exact topic
// (or the last one at all) handed over twice.
func duplicate(h history.SubscriptionHistory) history.SubscriptionHistory {
	out := h
	out.Deliveries = slices.Clone(h.Deliveries)
	n := len(out.Deliveries)
	if n == 0 {
		return out
	}
	d := out.Deliveries[n-1]
	for i := n - 1; i >= 0; i-- {
		if !slices.Contains(h.Patterns, out.Deliveries[i].Sub) {
			d = out.Deliveries[i]
			break
		}
	}
	d.At = out.Deliveries[n-1].At + time.Millisecond
	out.Deliveries = append(out.Deliveries, d)
	return out
}

// steadyJudge is the steady scenario's checker: every message delivered
// once, in order, on its channel to its subscription, and every connection
// that delivered speaks RESP3 (push).
func steadyJudge(h history.SubscriptionHistory, r *drillRun, minExpected int) check.Result {
	return check.All("subscriptions-delivered-by-push", judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: minExpected}),
		judge.PushDelivery.Judge(judge.PushInput{Conns: r.conns, Name: r.subName, Exact: r.exact, Patterns: r.patterns}))
}

func steady(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 4, steady: 1500 * time.Millisecond, wire: true}
	if full() {
		d.steady = 20 * time.Second
	}
	h, r := d.run(ctx, b, name)

	short := drill{perShard: 2, steady: 500 * time.Millisecond, wire: true, fresh: 500 * time.Millisecond}
	mis := short
	mis.opts.Mutant = pubsub.MutantCommunityRoute
	mh, mr := variantRun(ctx, b, name+"/community-route", "a relay that routes by community, not by topic", mis)
	resp2 := short
	resp2.protocol = client.RESP2
	rh, rr := variantRun(ctx, b, name+"/resp2", "the subscription client on RESP2", resp2)
	return verdictOf(r, h, steadyJudge(h, r, minExpected),
		harness.Variant("community-route", "a relay whose handler table is keyed by community: each exact topic's messages handed to the community's first topic (a real misrouting relay, impl/pubsub MutantCommunityRoute)",
			steadyJudge(mh, mr, 1)),
		harness.Variant("resp2-subscriber", "the subscription client negotiating RESP2 (HELLO 2): every message still arrives, but not as a push on a shared RESP3 connection — CLIENT LIST says resp=2",
			steadyJudge(rh, rr, 1)))
}

// slowConsumer stalls the application's reading long enough to fill the
// relay's buffer (64 here) and the client's (1024), so the backlog backs up
// into the client library, the socket and the server's output buffer
// (smoke: ~1,500–2,000 messages published during the 2.5 s stall).
// NOTE: measured — valkey-go's backpressure holds only up to ~11 s: its
// connection's background PING (after Dialer.KeepAlive, 1 s, without a
// reply read) waits ConnWriteTimeout (default 10 s) behind the blocked
// reader, then valkey-go closes its own connection (pipe.go backgroundPing
// → _exit) and re-subscribes; the backlog is lost, reported only as
// "resubscribed" (a 14 s stall: 8,950 of 10,363 messages lost, and this
// row fails). go-redis (PubSub.Receive, no read deadline) held a 14 s
// stall without loss. The full profile stalls 8 s, inside both.
func slowConsumer(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 2, stall: 2500 * time.Millisecond, opts: pubsub.Options{DeliveryBuffer: 64}}
	if full() {
		d.stall = 8 * time.Second
	}
	h, r := d.run(ctx, b, name)
	fmt.Fprintf(GinkgoWriter, "slow consumer: %d messages published during a %v stall (relay buffer 64)\n", publishedDuring(h, d.stall), d.stall)

	v := drill{perShard: 2, stall: 700 * time.Millisecond, opts: pubsub.Options{DeliveryBuffer: 64, Mutant: pubsub.MutantDropWhenFull}, fresh: 500 * time.Millisecond}
	vh, _ := variantRun(ctx, b, name+"/drop-when-full", "a relay that drops what a slow consumer has no room for", v)
	return verdict(r, h, harness.Variant("drop-when-full",
		"a relay handing messages over with a non-blocking send: what the stalled application has no room for is dropped, uncounted and unreported, while the relay reports healthy (impl/pubsub MutantDropWhenFull)",
		judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: vh, MinExpected: 1})))
}

// publishedDuring counts acknowledged publishes in the longest stretch of
// the history without a delivery, up to stall: what the stalled consumer had
// to be buffered for.
func publishedDuring(h history.SubscriptionHistory, stall time.Duration) int {
	var from time.Duration
	for i := 1; i < len(h.Deliveries); i++ {
		if gap := h.Deliveries[i].At - h.Deliveries[i-1].At; gap > stall/2 {
			from = h.Deliveries[i-1].At
			break
		}
	}
	n := 0
	for _, p := range h.Publishes {
		if p.ErrKind == "" && p.Sent >= from && p.Sent < from+stall {
			n++
		}
	}
	return n
}

func dynamic(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 6, churn: 6}
	if full() {
		d.churn = 40
	}
	h, r := d.run(ctx, b, name)

	v := drill{perShard: 3, churn: 2, opts: pubsub.Options{Mutant: pubsub.MutantDuplicateHandler}}
	vh, _ := variantRun(ctx, b, name+"/duplicate-handler", "a relay that adds a handler for every repeated subscribe", v)
	k := drill{perShard: 3, churn: 2, opts: pubsub.Options{Mutant: pubsub.MutantKeepAfterUnsubscribe}}
	kh, _ := variantRun(ctx, b, name+"/keep-after-unsubscribe", "a relay whose unsubscribe does nothing", k)
	return verdict(r, h,
		harness.Variant("duplicate-handler",
			"a relay that registers another handler each time a held topic is subscribed again: after the duplicate confirmation every message is handed over twice (impl/pubsub MutantDuplicateHandler)",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: vh, MinExpected: 1})),
		harness.Variant("keep-after-unsubscribe",
			"a relay that answers the application's unsubscribe without doing it: messages keep reaching the subscriptions the application released (impl/pubsub MutantKeepAfterUnsubscribe)",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: kh, MinExpected: 1})))
}

func forcedDisconnect(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 3, faults: func(r *drillRun) []fault.Fault {
		primaries := cluster.Primaries()
		kill := fault.KillClients{Client: r.subName}
		reset := func(i int) fault.Fault {
			return fault.ResetPeer{Nodes: []string{primaries[i%len(primaries)].Name()}, Duration: 150 * time.Millisecond}
		}
		restart := func(i int) fault.Fault { return fault.RestartPrimary{Index: i % len(primaries)} }
		if !full() {
			return []fault.Fault{kill, reset(1), restart(2)}
		}
		return []fault.Fault{kill, reset(0), restart(1), kill, reset(1), restart(2), kill, reset(2), restart(0), kill, reset(0), kill}
	}}
	h, r := d.run(ctx, b, name)
	admitDisconnect(b, r, h)

	v := drill{perShard: 2, fresh: 500 * time.Millisecond, opts: pubsub.Options{Mutant: pubsub.MutantForgetOnResubscribe},
		faults: func(r *drillRun) []fault.Fault { return []fault.Fault{fault.KillClients{Client: r.subName}} }}
	vh, _ := variantRun(ctx, b, name+"/forget-on-resubscribe", "a relay that forgets what the library re-sent after a disconnect", v)
	return verdict(r, h, harness.Variant("forget-on-resubscribe",
		"the subscription client killed under a relay that unregisters a subscription once the library re-sent it after the reconnect: it reports healthy and delivers nothing more (spec 000 §Failure Modes: fails to resubscribe after disconnect; impl/pubsub MutantForgetOnResubscribe)",
		judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: vh, MinExpected: 1})))
}

// admitDisconnect records the raw client's admission for resubscription
// after a forced disconnect: both libraries re-send every subscription on
// reconnect by themselves (impl/client subscriber_*.go). The relay's own
// re-subscriptions ("dropped" → "recovered") are impl's wrapper at work;
// the library's ("resubscribed") are the raw client's.
func admitDisconnect(b client.Backend, r *drillRun, h history.SubscriptionHistory) {
	GinkgoHelper()
	var relayed, library int
	for _, e := range h.Events {
		switch e.Kind {
		case "dropped":
			relayed++
		case "resubscribed":
			library++
		}
	}
	delivered := r.judged(judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: minExpected}))
	raw := delivered
	switch {
	case library == 0 && relayed == 0:
		raw = check.Result{Status: check.Unknown, Message: "no re-subscription was seen at all: the faults did not reach the subscription client"}
	case relayed > 0 && delivered.Status == check.Pass:
		raw = check.Result{Status: check.Fail, Message: fmt.Sprintf("%d subscriptions were re-subscribed by impl's relay, not by the library", relayed)}
	}
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementResubDisconnect, Client: r.pool.Version(), Path: harness.LibraryPath(b, "ClusterClient.SSubscribe, PubSub.Receive (its own reconnect and resubscribe)", "Client.Receive, WithOnSubscriptionHook (its own reconnect and resubscribe)"), Raw: raw, Wrapped: delivered,
		Wrapper:  "impl/pubsub.Relay (re-SSUBSCRIBE on the client's MsgDropped)",
		Evidence: fmt.Sprintf("Client kill, reset-peer and primary restart on the subscription client's connections: the library re-subscribed %d times by itself, impl's relay %d times.", library, relayed)})
}

// migrations moves the slots of up to n exact topics on different shards.
func migrations(n int) func(r *drillRun) []fault.Fault {
	return func(r *drillRun) []fault.Fault {
		per := len(r.topics) / len(cluster.Primaries())
		var out []fault.Fault
		for i := range n {
			t := r.topics[(i*per+i/len(cluster.Primaries()))%len(r.topics)]
			out = append(out, fault.MoveSlot{Slot: slot.Of(t), To: -1, Hold: 200 * time.Millisecond})
		}
		return out
	}
}

func slotMigration(ctx SpecContext, b client.Backend, name string) report.Check {
	n := 1
	if full() {
		n = 3
	}
	h, r := drill{perShard: 3, faults: migrations(n)}.run(ctx, b, name)

	By("negative control: the naive relay, which ignores the server's sunsubscribe")
	Expect(cluster.Reset(ctx)).To(Succeed())
	naive, nr := drill{perShard: 3, faults: migrations(1), ignoreDrops: true, fresh: 2 * time.Second}.run(ctx, b, name+"/naive")
	nr.evidence(naive) // narrated to GinkgoWriter
	// Client admission: neither library re-subscribes after a server
	// sunsubscribe (impl/client subscriber_*.go, read in their sources), so
	// the naive relay, which ignores the drop, is the raw client here.
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementResubSunsubscribe, Client: r.pool.Version(), Path: harness.LibraryPath(b, "ClusterClient.SSubscribe, PubSub.Receive (server sunsubscribe push)", "Client.Receive (server sunsubscribe push)"),
		Raw: nr.judged(judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: naive, MinExpected: 1})), Wrapped: r.judged(judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: minExpected})),
		Wrapper:  "impl/pubsub.Relay (re-SSUBSCRIBE on the client's MsgDropped)",
		Evidence: fmt.Sprintf("A topic's slot migrated under traffic; the raw client's own reaction to the server's sunsubscribe (nothing: no re-subscribe, %s) run as the relay that ignores the drop.", r.pool.Version())})
	return verdict(r, h, harness.Variant("naive-no-resubscribe",
		"a relay that ignores MsgDropped after a slot migration: messages lost while it reports healthy, and zero errors (spec 000 §Failure Modes, silent)",
		judge.SilentOnly(judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: naive, MinExpected: 1}), judge.SubscriptionErrors.Judge(judge.LoudInput{History: naive, MinPublishes: 1}))))
}

// failover drills both backends with graceful and kill failovers. NOTE:
// go-redis was drilled with graceful failovers only while its command pool
// kept dialing a killed primary until its 60 s slot-map reload (no SPUBLISH
// reached the shard, so the subscription's recovery could not be shown by
// delivery); impl's pool now reloads on a failed node (impl/client
// topology.go), and the subscription client's halt is gated by
// failure-drills.
func failover(ctx SpecContext, b client.Backend, name string) report.Check {
	kill := fault.FailoverKill
	d := drill{perShard: 3, faults: func(*drillRun) []fault.Fault {
		if !full() {
			return []fault.Fault{fault.Failover{Shard: 0, Mode: fault.FailoverGraceful}, fault.Failover{Shard: 1, Mode: kill}}
		}
		return []fault.Fault{
			fault.Failover{Shard: 0, Mode: fault.FailoverGraceful}, fault.Failover{Shard: 1, Mode: kill},
			fault.Failover{Shard: 2, Mode: fault.FailoverGraceful}, fault.Failover{Shard: 0, Mode: kill},
		}
	}}
	h, r := d.run(ctx, b, name)

	v := drill{perShard: 2, fresh: 500 * time.Millisecond, ignoreDrops: true,
		faults: func(r *drillRun) []fault.Fault {
			return []fault.Fault{droppingFailover{client: r.subName, shard: 2}}
		}}
	vh, vr := variantRun(ctx, b, name+"/naive", "the naive relay through a graceful failover", v)
	return verdict(r, h, harness.Variant("naive-no-resubscribe-failover",
		"a graceful failover of shard 2 under the naive relay, which ignores the server's sunsubscribe: the shard's topics go silent while it reports healthy (spec 000 §Failure Modes, silent)",
		vr.judged(judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: vh, MinExpected: 1}))))
}

// patternsJudge is the patterns scenario's checker: the drill's delivery
// rule, and no control signal missed — an outage window does not excuse a
// lost ban or invalidation, only the resync after the restoration does.
func patternsJudge(h history.SubscriptionHistory, r *drillRun, minExpected int) check.Result {
	return r.judged(check.All("control-signals-delivered", judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: h, MinExpected: minExpected}),
		judge.ControlSignalsCovered.Judge(judge.SignalsInput{History: h, MinSignals: minExpected / 4})))
}

func patterns(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 1, patterns: true, faults: func(r *drillRun) []fault.Fault {
		kill := fault.KillClients{Client: r.subName}
		holder := patternHolderFailover{client: r.subName}
		if !full() {
			return []fault.Fault{kill, holder}
		}
		return []fault.Fault{kill, fault.ResetPeer{Duration: 150 * time.Millisecond}, holder, kill, kill}
	}}
	h, r := d.run(ctx, b, name)

	// Six kills: a reconnect gap that happens to hold no acknowledged
	// control signal leaves the skipped resync unexercised (the variant
	// passes on delivery alone). valkey-go reconnects within milliseconds:
	// over three kills its gaps held 0–30 signals a run, none in two runs
	// of one tree.
	skip := drill{perShard: 1, patterns: true, fresh: 500 * time.Millisecond, noResync: true,
		faults: func(r *drillRun) []fault.Fault {
			kill := fault.KillClients{Client: r.subName}
			return []fault.Fault{kill, kill, kill, kill, kill, kill}
		}}
	sh, sr := variantRun(ctx, b, name+"/skip-resync", "a relay that restores the patterns after a reconnect but skips the resync", skip)

	By("negative control: the patterns enumerated as SSUBSCRIBEd channels of known communities (the design D2 rejected)")
	enumerated := enumeratedPatterns(ctx, b, name+"/enumerated")
	v := drill{perShard: 1, patterns: true, steady: 500 * time.Millisecond, fresh: 500 * time.Millisecond, opts: pubsub.Options{Mutant: pubsub.MutantGreedyPattern}}
	vh, _ := variantRun(ctx, b, name+"/greedy-pattern", "a relay whose pattern match is the pattern's literal prefix", v)
	return verdictOf(r, h, patternsJudge(h, r, minExpected),
		harness.Variant("skip-resync",
			"the subscription client killed under a relay that lets the library restore the patterns but never runs the application's resync: signals published in the reconnect gap are silently never applied, while the relay reports healthy and every later signal arrives (the relay with no Options.Resync)",
			// Judged by the coverage checker alone, so the variant is
			// caught for the missed signal, not for a delivery rule.
			judge.SilentOnly(sr.judged(judge.ControlSignalsCovered.Judge(judge.SignalsInput{History: sh, MinSignals: 1})), sr.judged(judge.SubscriptionErrors.Judge(judge.LoudInput{History: sh, MinPublishes: 1})))),
		harness.Variant("enumerated-pattern-channels",
			"cache-invalidate/conn-control converted to SSUBSCRIBE of each known community's channel: a community that appears later is never heard (000 D2)",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: enumerated, MinExpected: 1})),
		harness.Variant("greedy-pattern",
			"a relay matching pattern messages to its patterns by literal prefix (\"buzz:\"): every conn-control message also handed to the cache-invalidate subscription — a pattern that matches too much (impl/pubsub MutantGreedyPattern)",
			judge.SubscriptionsDelivered.Judge(judge.DeliveryInput{History: vh, MinExpected: 1})))
}

// enumeratedPatterns runs the design D2 rejected: instead of PSUBSCRIBE,
// the relay SSUBSCRIBEs the concrete cache-invalidate/conn-control channels
// of the communities it knows, while publishers also serve a community it
// has not discovered yet. The application still expects every
// cache-invalidate and conn-control message.
func enumeratedPatterns(ctx context.Context, b client.Backend, name string) history.SubscriptionHistory {
	GinkgoHelper()
	_, relay := openRelay(ctx, b, client.ModeCluster, cluster.Addrs(), "slotgate-sub-enum-"+string(b), pubsub.Options{}, 0, false)
	rec := traffic.NewSubscriptions(relay, traffic.ClockOf(ctx))
	known := communities[:3]
	var channels []string
	for _, c := range known {
		channels = append(channels, pubsub.CacheInvalidateChannel(c), pubsub.ConnControlChannel(c))
		// The application files each channel under the pattern it stands for.
		rec.Alias(pubsub.CacheInvalidateChannel(c), pubsub.CacheInvalidatePattern)
		rec.Alias(pubsub.ConnControlChannel(c), pubsub.ConnControlPattern)
	}
	err := relay.Subscribe(ctx, channels...)
	Expect(err).NotTo(HaveOccurred())
	rec.Hold(err, true, pubsub.Patterns...)
	var targets []traffic.SubTarget
	for _, c := range communities {
		targets = append(targets,
			traffic.SubTarget{Channel: pubsub.CacheInvalidateChannel(c), Sub: pubsub.CacheInvalidatePattern, Sharded: true},
			traffic.SubTarget{Channel: pubsub.ConnControlChannel(c), Sub: pubsub.ConnControlPattern, Sharded: true})
	}
	stop := rec.Publishers(ctx, publishers, targets, publishPause, publishTimeout)
	time.Sleep(500 * time.Millisecond) // a duration: the control's window of traffic
	stop()
	return rec.History()
}

func recoveryLoud(ctx SpecContext, b client.Backend, name string) report.Check {
	d := drill{perShard: 3, faults: func(r *drillRun) []fault.Fault {
		fs := []fault.Fault{fault.KillClients{Client: r.subName}}
		fs = append(fs, migrations(1)(r)...)
		fs = append(fs, fault.Failover{Shard: 2, Mode: fault.FailoverGraceful})
		if full() {
			fs = append(fs, fault.ResetPeer{Duration: 150 * time.Millisecond}, fault.Failover{Shard: 1, Mode: fault.FailoverKill})
		}
		return fs
	}}
	h, r := d.run(ctx, b, name)

	By("negative control: cluster-unaware clients (today's single-node manager and subscriber)")
	unaware := singleNodeClients(ctx, b, name+"/single-node")
	return harness.Check(row, report.ColumnErrors, "", r.judged(judge.SubscriptionErrors.Judge(judge.LoudInput{History: h, MinPublishes: minExpected})), r.evidence(h),
		harness.Variant("single-node-clients", "a ModeSingle pool and subscriber pointed at one primary: SSUBSCRIBE and SPUBLISH for topics of other shards answered MOVED, never recovered",
			judge.SubscriptionErrors.Judge(judge.LoudInput{History: unaware, MinPublishes: 1})))
}

// singleNodeClients runs the relay over ModeSingle clients on the first
// primary: the relay as deployed today, pointed at a cluster.
func singleNodeClients(ctx context.Context, b client.Backend, name string) history.SubscriptionHistory {
	GinkgoHelper()
	rng := cfg.Rand(name)
	_, relay := openRelay(ctx, b, client.ModeSingle, []string{cluster.Primaries()[0].Addr()}, "slotgate-sub-single-"+string(b), pubsub.Options{}, 0, false)
	rec := traffic.NewSubscriptions(relay, traffic.ClockOf(ctx))
	topics := topicsOnEveryShard(ctx, rng, cluster, 1)
	var targets []traffic.SubTarget
	for _, t := range topics {
		sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_ = rec.Subscribe(sctx, t) // recorded; MOVED for other shards' topics
		cancel()
		targets = append(targets, traffic.TopicTarget(t))
	}
	stop := rec.Publishers(ctx, 1, targets, publishPause, publishTimeout)
	time.Sleep(300 * time.Millisecond) // a duration: the control's window of traffic
	stop()
	fmt.Fprintf(GinkgoWriter, "single-node control: %d topics\n", len(topics))
	return rec.History()
}
