// Package judge holds the Marconi mesh rows' records and pure checkers
// (spec 002: marconi-hot-path, marconi-cache-lifecycle, marconi-restart,
// marconi-metrics, marconi-stage-flags, marconi-obligations). Each checker
// is defined once under a stable name, so `slotgate check --from` replays
// it; the package links no client library.
package judge

import (
	"time"

	"github.com/slotgate/slotgate/check"
)

// HitFloorInput is a hit-rate phase's reads, the floor their rate must
// reach, the fewest reads that make a verdict, and whether the seam counted
// the phase's setup (marconiCacheHitFloor).
type HitFloorInput struct {
	Reads       []CacheRead
	Floor       float64
	MinReads    int
	SeamCounted bool
}

// DeliveredInput is a mesh history, the fewest sends that make a verdict,
// and whether every send must have been queued, not pushed (the restart
// window's sends; marconiSendsDelivered).
type DeliveredInput struct {
	History       MeshHistory
	MinSends      int
	RequireQueued bool
}

// StaleRoutesInput is a churn history, the expiry bound a route may
// outlive its session by, and the fewest sends to a recipient after its
// session ended that make a verdict (marconiStaleRoutes).
type StaleRoutesInput struct {
	History     MeshHistory
	ExpiryBound time.Duration
	MinJudged   int
}

// RehydratedInput is the SessionStore's active sessions and the routes a
// restarted instance holds, each by recipient (marconiRehydrated).
type RehydratedInput struct {
	Active, Routes map[string]string
}

// UnindexedInput is the per-project index probes after releases and the
// fewest released sessions probed that make a verdict
// (marconiReleasedUnindexed).
type UnindexedInput struct {
	Probes    []MeshIndexProbe
	MinJudged int
}

// ForgetfulInput is the forgetful-deregister control's hook tour, its
// churn history and the expiry bound (marconiHookAndStaleRoutes).
type ForgetfulInput struct {
	Steps       []MeshHookStep
	History     MeshHistory
	ExpiryBound time.Duration
}

// StaleControlInput is a control's churn history and the expiry bound
// (marconiStaleRoutesFailing, marconiMasterTermFailing).
type StaleControlInput struct {
	History     MeshHistory
	ExpiryBound time.Duration
}

// The rows' checkers, by stable name. Each keeps the Go name its calls
// were stored under before the family moved here as an alias; an input
// struct lists the old checker's arguments in order, so stored calls of
// several inputs replay into it.
var (
	// marconi-hot-path
	HotPathIO      = check.Define("marconi/hot-path-io", marconiHotPathIO, "MarconiHotPathIO")
	SendsDelivered = check.Define("marconi/sends-delivered", func(in DeliveredInput) check.Result {
		return marconiSendsDelivered(in.History, in.MinSends, in.RequireQueued)
	}, "MarconiSendsDelivered")
	NoSubscribe       = check.Define("marconi/no-subscribe", marconiNoSubscribe, "MarconiNoSubscribe")
	QueueDefaultsHeld = check.Define("marconi/queue-defaults", marconiQueueDefaults, "MarconiQueueDefaults")
	EngagementStamped = check.Define("marconi/engagement", marconiEngagement, "MarconiEngagement")

	// marconi-cache-lifecycle
	HookTransitions = check.Define("marconi/hook-transitions", marconiHookTransitions, "MarconiHookTransitions")
	StaleRoutes     = check.Define("marconi/stale-routes", func(in StaleRoutesInput) check.Result {
		return marconiStaleRoutes(in.History, in.ExpiryBound, in.MinJudged)
	}, "MarconiStaleRoutes")
	ReleasedUnindexed = check.Define("marconi/released-unindexed", func(in UnindexedInput) check.Result {
		return marconiReleasedUnindexed(in.Probes, in.MinJudged)
	}, "MarconiReleasedUnindexed")
	HookAndStaleRoutes = check.Define("marconi/hook-and-stale-routes", func(in ForgetfulInput) check.Result {
		return marconiHookAndStaleRoutes(in.Steps, in.History, in.ExpiryBound)
	}, "MarconiHookAndStaleRoutes")
	StaleRoutesFailing = check.Define("marconi/stale-routes-failing", func(in StaleControlInput) check.Result {
		return marconiStaleRoutesFailing(in.History, in.ExpiryBound)
	}, "MarconiStaleRoutesFailing")
	MasterTermFailing = check.Define("marconi/master-term-failing", func(in StaleControlInput) check.Result {
		return marconiMasterTermFailing(in.History, in.ExpiryBound)
	}, "MarconiMasterTermFailing")
	CacheHealth        = check.Define("marconi/cache-health", marconiCacheHealth, "MarconiCacheHealth")
	CacheHealthFailing = check.Define("marconi/cache-health-failing", marconiCacheHealthFailing, "MarconiCacheHealthFailing")
	CacheHitFloor      = check.Define("marconi/cache-hit-floor", func(in HitFloorInput) check.Result {
		return marconiCacheHitFloor(in.Reads, in.Floor, in.MinReads, in.SeamCounted)
	}, "MarconiCacheHitFloor")
	InvalidatorErrorsCounted = check.Define("marconi/invalidator-errors-counted", marconiInvalidatorErrorsCounted, "MarconiInvalidatorErrorsCounted")

	// marconi-restart
	Rehydrated = check.Define("marconi/rehydrated", func(in RehydratedInput) check.Result {
		return marconiRehydrated(in.Active, in.Routes)
	}, "MarconiRehydrated")
	AuditLedger   = check.Define("marconi/audit-ledger", marconiAuditLedger, "MarconiAuditLedger")
	SendsAnswered = check.Define("marconi/sends-answered", marconiSendsAnswered, "MarconiSendsAnswered")

	// marconi-metrics
	MetricsAgree   = check.Define("marconi/metrics-agree", marconiMetricsAgree, "MarconiMetricsAgree")
	MetricsExposed = check.Define("marconi/metrics-exposed", marconiMetricsExposed, "MarconiMetricsExposed")
	PendingTTL     = check.Define("marconi/pending-ttl", marconiPendingTTL, "MarconiPendingTTL")

	// marconi-stage-flags
	FlagsLedger     = check.Define("marconi/stage-flags-ledger", marconiStageFlagsLedger, "MarconiStageFlagsLedger")
	FlagsRefusals   = check.Define("marconi/stage-flags-refusals", marconiStageFlagsRefusals, "MarconiStageFlagsRefusals")
	FlagsDefaultOff = check.Define("marconi/flags-default-off", marconiFlagsDefaultOff, "MarconiFlagsDefaultOff")

	// marconi-obligations
	Obligations     = check.Define("marconi/obligations", marconiObligations, "MarconiObligations")
	ObligationCalls = check.Define("marconi/obligation-calls", marconiObligationCalls, "MarconiObligationCalls")
)
