package marconi_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-cache-lifecycle", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "marconi-cache-lifecycle/transitions-and-staleness/" + string(b), Row: report.RowMarconiCacheLifecycle, Column: report.ColumnSilentlyWrong,
				Spec: "every Stage 2 hook's state transition (on_session_expired via keyspace notifications on every primary, across a graceful failover of the sessions' shard); under register/deregister churn no send after a deregister's 200 routes to the old session, master-alias sends follow every flip (002 §5, Stage 2 test gates)",
				Run: func(ctx SpecContext) report.Check {
					r := lifecycleRuns.Get(ctx, b)
					r.record(ctx)
					return r.transitions(b)
				},
			},
			harness.Scenario{
				Name: "marconi-cache-lifecycle/warmup-and-hit-rate/" + string(b), Row: report.RowMarconiCacheLifecycle, Column: report.ColumnErrors,
				Spec: "post-warm-up the first read of every active session hits; hit rate ≥ 99% under churn; marconi_invalidator_errors_total zero; no control call fails (002 §6, Stage 2 exit criteria, §9)",
				Run: func(ctx SpecContext) report.Check {
					r := lifecycleRuns.Get(ctx, b)
					r.record(ctx)
					return r.health(b)
				},
			},
		)
	}
})

// lifecycleRun is one cache-lifecycle drill per backend, shared by the two
// columns through lifecycleRuns (each judges its own side of the same run);
// whichever spec runs first drives it.
type lifecycleRun struct {
	ev      report.Evidence
	steps   []judge.MeshHookStep
	tourErr error
	hist    judge.MeshHistory
	churn   workload.ChurnStats
	cache   judge.MeshCacheStats
	// late are the churn sessions the runner renewed TTL or more late
	// (ChurnStats.Late); histEx, cacheEx and indexEx are the run without
	// them (judge.MeshExcused), judged beside the whole (judge.LatePremise).
	late       []string
	histEx     judge.MeshHistory
	cacheEx    judge.MeshCacheStats
	indexEx    []judge.MeshIndexProbe
	expiryWait time.Duration

	forgetSteps []judge.MeshHookStep
	forgetHist  judge.MeshHistory
	cold        judge.MeshCacheStats

	// The stale-route-5xx mutant's churn (and sweep) beside the forgetful one.
	staleHist judge.MeshHistory
	stale     judge.MeshCacheStats

	resubscribed time.Duration // from the failover's end until B's listener covered the promoted primary

	// clock is the run's; ops are B's sends on it, for both columns'
	// timelines (record).
	clock *traffic.Clock
	ops   []history.Op

	// The static keyspace listener's tour across the same failover.
	staticSteps []judge.MeshHookStep
	staticErr   error

	// index is B's session index after the churn: ZSCORE of every session
	// released with a 200; keepIndex, the same probe on the
	// release-keeps-index mutant's few released sessions.
	index, keepIndex []judge.MeshIndexProbe

	// The master-term workload (runMasterTerm) on a correct mesh, judged
	// with the row, and on the put-back-to-identity mutant, its control.
	masterTerm, putBackCtl masterTermRun
}

var lifecycleRuns = harness.NewOnce(runLifecycle)

func hookErrors(m *marconi.Mesh) map[string]float64 {
	out := map[string]float64{}
	for _, h := range marconi.Hooks {
		out[string(h)] = m.MetricSum("marconi_invalidator_errors_total", map[string]string{"hook": string(h)})
	}
	return out
}

// firstReads sends one signal to each session's identity on a freshly
// started instance and returns what each resolved to.
func firstReads(ctx context.Context, rec *workload.MeshRecorder, sessions []marconi.Session) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, s := range sessions {
		res, err := rec.Send(ctx, marconi.SendRequest{Tenant: s.Tenant, Project: s.Project, Recipient: s.Identity, Kind: "first-read"})
		Expect(err).NotTo(HaveOccurred())
		out[s.SessionID] = res.SessionID
	}
	return out
}

func runLifecycle(ctx SpecContext, b client.Backend) *lifecycleRun {
	GinkgoHelper()
	s := scaleOf()
	r := &lifecycleRun{ev: harness.Evidence(cfg, cluster, nil), expiryWait: s.TTL + 3*time.Second}
	clock := traffic.NewClock()
	store := marconi.StoreOptions{TTL: s.TTL}
	primaries, err := marconi.PrimaryAddrs(ctx, newPool(ctx, b, "marconi-discovery"))
	Expect(err).NotTo(HaveOccurred())
	Expect(primaries).To(HaveLen(len(cluster.Primaries())), "CLUSTER NODES primaries")
	// No addresses: on a cluster the listener discovers the primaries
	// itself, and again after every failover (§5 KeyspaceReaper).
	notify := &marconi.NotifyOptions{Backend: b, Configure: true, ClientName: "marconi-keyspace"}

	By(fmt.Sprintf("instance A registers %d sessions (TTL %v) and a master, then stops", s.WarmSessions, s.TTL))
	poolA := newPool(ctx, b, "marconi-a")
	r.ev.Client = poolA.Version()
	a := startMesh(ctx, marconi.Options{Pool: poolA, Store: store, Sink: marconi.NewMemorySink()})
	recA := workload.NewMeshRecorder(clock, a.api)
	_, warm := registerReceivers(ctx, recA, nil, "warm", s.WarmSessions, false)
	Expect(recA.Master(ctx, tenant, "warm", "", warm[0].SessionID)).To(Succeed())
	a.stop()

	By("instance B warms up from the SessionStore; the skip-warmup mutant starts beside it on the same store")
	bEnv := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-b"), Store: store, Notify: notify, Sink: marconi.NewMemorySink()})
	recB := workload.NewMeshRecorder(clock, bEnv.api)
	first := firstReads(ctx, recB, warm)
	cold := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-cold"), Store: store, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantSkipWarmup})
	recCold := workload.NewMeshRecorder(clock, cold.api)
	coldFirst := firstReads(ctx, recCold, warm)
	for _, w := range warm[:min(5, len(warm))] { // a heartbeat round reaches sessions the cold tables lack
		_, _ = recCold.Heartbeat(ctx, w)
	}
	r.cold = judge.MeshCacheStats{FirstReads: coldFirst, HookErrors: hookErrors(cold.mesh), ControlErrors: recCold.History().ControlErrors,
		MinHitRate: 0.99, MinReads: s.MinReads}
	cold.stop()

	By("failover of the tenant's shard (graceful) under B and a static-listener mutant: every later expiry is announced by the promoted primary")
	static := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-static"), Store: marconi.StoreOptions{TTL: s.TTL, Prefix: "static"},
		Notify: notify, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantStaticListener})
	owner, err := cluster.NodeForSlot(ctx, slot.Of("{"+tenant+"}"))
	Expect(err).NotTo(HaveOccurred())
	w, err := fault.Apply(ctx, cluster, fault.Failover{Shard: owner.Shard(), Mode: fault.FailoverGraceful})
	harness.MustConfirm(err, cfg.Seed)
	r.ev.Faults = append(r.ev.Faults, harness.Windows(w)...)
	// The promoted primary reaches every node's CLUSTER NODES by gossip.
	discovery := newPool(ctx, b, "marconi-discovery")
	var promoted []string
	Eventually(ctx, func() ([]string, error) {
		promoted, err = marconi.PrimaryAddrs(ctx, discovery)
		return promoted, err
	}).WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).ShouldNot(Equal(primaries), "CLUSTER NODES shows the promoted primary")
	Eventually(ctx, bEnv.mesh.ExpiryListenerAddrs).WithTimeout(5*marconi.DefaultRediscover).WithPolling(20*time.Millisecond).
		Should(Equal(promoted), "B's keyspace listener follows the failover")
	r.resubscribed = time.Since(w.End)

	By("hook tour on B (and on the static-listener mutant beside it): every Stage 2 hook through the API, a socket and a key expiry on the promoted primary")
	recS := workload.NewMeshRecorder(traffic.NewClock(), static.api)
	recvS := workload.NewMeshReceivers(recS, static.url)
	DeferCleanup(recvS.Close)
	staticDone := make(chan struct{})
	go func() {
		defer close(staticDone)
		r.staticSteps, r.staticErr = workload.MeshHookTour(ctx, static.mesh, recS, recvS, tenant, "tour", r.expiryWait)
	}()
	recvB := workload.NewMeshReceivers(recB, bEnv.url)
	DeferCleanup(recvB.Close)
	r.steps, r.tourErr = workload.MeshHookTour(ctx, bEnv.mesh, recB, recvB, tenant, "tour", r.expiryWait)

	By(fmt.Sprintf("churn on B for %v: a re-registration every %v, master flips, %d sessions left to expire, %d senders", s.ChurnFor, s.ChurnEvery, s.Expire, s.ChurnSenders))
	churn := workload.MeshChurn{Tenant: tenant, Project: "churn", Identities: s.Identities, ChurnEvery: s.ChurnEvery, Dark: 3 * s.ChurnEvery,
		HeartbeatEvery: s.HeartbeatEvery, MasterEvery: 7, Expire: s.Expire, TTL: s.TTL, Senders: s.ChurnSenders, SendEvery: s.SendEvery,
		Rand: cfg.Rand("marconi-cache-lifecycle/churn/" + string(b))}
	onB := churn
	onB.Tail = func(ctx context.Context) {
		By("a send to the recipient of every ended session, after its end: a stale route to any of them can show")
		sweepEnded(ctx, recB, clock)
	}
	r.churn, err = onB.Run(ctx, recB, recvB, s.ChurnFor)
	Expect(err).NotTo(HaveOccurred())
	recvB.Close()
	<-staticDone // the mutant's tour ran beside the churn
	recvS.Close()
	static.stop()
	r.ev.Observed = append(r.ev.Observed, fmt.Sprintf("churn heartbeats: %d, the longest the runner held a live session's renewal back %v (TTL %v)",
		r.churn.Heartbeats, r.churn.MaxRenewGap.Round(time.Millisecond), s.TTL))
	// The run judges sessions it kept live as live: one the runner renewed
	// TTL late may have lapsed in the store (002 §5 KeyspaceReaper) by the
	// runner's doing. Such sessions are excused, not the run: each check
	// is judged with and without them (judge.LatePremise), and is
	// inconclusive only if its failure is theirs alone.
	r.late = r.churn.LateSessions()
	if len(r.churn.Late) > 0 {
		late := make([]string, 0, 3)
		for _, l := range r.churn.Late[:min(3, len(r.churn.Late))] {
			late = append(late, l.String())
		}
		r.ev.Observed = append(r.ev.Observed, fmt.Sprintf("%d renewals issued TTL or more after the runner was free to, %d sessions excused from the checks: %s",
			len(r.churn.Late), len(r.late), strings.Join(late, "; ")))
	}
	r.hist = recB.History()
	r.histEx = judge.MeshExcused(r.hist, r.late)
	r.clock, r.ops = clock, workload.MeshOps("B sends", r.hist.Sends)
	By("B's SessionStore index after the churn: ZSCORE of every session released with a 200")
	r.index, err = workload.MeshIndexProbes(ctx, newPool(ctx, b, "marconi-index-probe"), bEnv.mesh.Store(), r.hist)
	Expect(err).NotTo(HaveOccurred())
	r.indexEx = judge.MeshIndexExcused(r.index, r.late)
	cacheOf := func(h judge.MeshHistory) judge.MeshCacheStats {
		churned := onlyProject(h, tenant+"/churn/")
		hits, misses := workload.MeshLiveReads(churned)
		c := judge.MeshCacheStats{Hits: hits, Misses: misses, MinHitRate: 0.99, FirstReads: first, HookErrors: hookErrors(bEnv.mesh),
			ControlErrors: h.ControlErrors, MinReads: s.MinReads, FailedSends: judge.MeshFailedSends(h), RequireEnds: true}
		c.Ended, c.Uncovered = judge.MeshEndsUncovered(churned, expiryBound)
		return c
	}
	r.cache, r.cacheEx = cacheOf(r.hist), cacheOf(r.histEx)
	hits, misses := r.cache.Hits, r.cache.Misses
	r.ev.Metrics = map[string]float64{
		"warmup_sessions": float64(bEnv.warm.Sessions), "warmup_ms": ms(bEnv.warm.Took), "sends": float64(len(r.hist.Sends)),
		"reregistrations": float64(r.churn.Reregistrations), "master_flips": float64(r.churn.MasterFlips), "expired": float64(r.churn.Expired),
		"heartbeats": float64(r.churn.Heartbeats), "live_reads": float64(hits + misses), "hit_rate_pct": 100 * float64(hits) / float64(max(hits+misses, 1)),
		"mesh_hits": bEnv.mesh.MetricSum("marconi_routing_cache_hits_total", nil), "mesh_misses": bEnv.mesh.MetricSum("marconi_routing_cache_misses_total", nil),
		"expired_hook_calls":            bEnv.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(marconi.HookSessionExpired)}),
		"listener_followed_failover_ms": ms(r.resubscribed),
		"failed_sends":                  float64(len(r.cache.FailedSends)), "ended_sessions": float64(r.cache.Ended),
	}
	for _, h := range marconi.Hooks {
		r.ev.Metrics["hook_calls_"+string(h)] = bEnv.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(h)})
	}
	bEnv.stop()

	By("negative controls: the forgetful on_deregister (same tour and a shorter churn) and, beside it, the mesh that answers 5xx on a stale route (the shorter churn and the sweep)")
	staleDone := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(staleDone)
		r.staleHist, r.stale = runStale5xx(ctx, b, s, notify, churn)
	}()
	f := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-forgetful"), Store: marconi.StoreOptions{TTL: s.TTL, Prefix: "forgetful"},
		Notify: notify, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantForgetfulDeregister})
	recF := workload.NewMeshRecorder(traffic.NewClock(), f.api)
	recvF := workload.NewMeshReceivers(recF, f.url)
	DeferCleanup(recvF.Close)
	r.forgetSteps, _ = workload.MeshHookTour(ctx, f.mesh, recF, recvF, tenant, "tour", r.expiryWait)
	churn.Rand = cfg.Rand("marconi-cache-lifecycle/forgetful/" + string(b))
	_, err = churn.Run(ctx, recF, recvF, s.ControlChurnFor)
	Expect(err).NotTo(HaveOccurred())
	recvF.Close()
	r.forgetHist = recF.History()
	<-staleDone

	By("negative control: the release that keeps the index member (release-keeps-index): sessions registered and deregistered, then the same probe")
	r.keepIndex = runReleaseKeepsIndex(ctx, b, s)

	// After the churns, not beside them: its large pushes would take CPU
	// and loopback bandwidth from their control calls (a smoke run beside
	// it saw a register's Valkey read time out).
	By("the master-term workload on a correct mesh, then on the put-back-to-identity mutant: a master's session ends with master-alias signals unwritten, the flag flips, its identity comes back")
	r.masterTerm = runMasterTerm(ctx, b, marconi.MutantNone, "master-term")
	r.putBackCtl = runMasterTerm(ctx, b, marconi.MutantPutBackToIdentity, "put-back-to-identity")
	return r
}

// keepIndexSessions is how many sessions the release-keeps-index control
// registers and deregisters.
const keepIndexSessions = 4

// runReleaseKeepsIndex runs marconi.MutantReleaseKeepsIndex — a REAL mesh
// on the real cluster whose SessionStore.release deletes the record but
// not the index member — registers and deregisters a few sessions through
// its API, and probes its index as the reference's is probed.
func runReleaseKeepsIndex(ctx context.Context, b client.Backend, s meshScale) []judge.MeshIndexProbe {
	GinkgoHelper()
	m := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-keepidx"), Store: marconi.StoreOptions{TTL: s.TTL, Prefix: "keepidx"},
		Sink: marconi.NewMemorySink(), Mutant: marconi.MutantReleaseKeepsIndex})
	rec := workload.NewMeshRecorder(traffic.NewClock(), m.api)
	for i := range keepIndexSessions {
		sess := marconi.Session{SessionID: fmt.Sprintf("keep-%d", i), Tenant: tenant, Project: "keep", Identity: fmt.Sprintf("k%d", i), Surface: "control"}
		_, err := rec.Register(ctx, sess)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Deregister(ctx, sess)).To(Succeed())
	}
	probes, err := workload.MeshIndexProbes(ctx, newPool(ctx, b, "marconi-index-probe"), m.mesh.Store(), rec.History())
	Expect(err).NotTo(HaveOccurred())
	m.stop()
	return probes
}

// runStale5xx runs marconi.MutantStaleRoute5xx — a REAL mesh on the real
// cluster whose on_deregister keeps the dead route and whose send_signal
// answers 500 on it — under the control churn and the end sweep, and
// returns its history and its cache statistics.
func runStale5xx(ctx context.Context, b client.Backend, s meshScale, notify *marconi.NotifyOptions, churn workload.MeshChurn) (judge.MeshHistory, judge.MeshCacheStats) {
	GinkgoHelper()
	m := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, "marconi-stale5xx"), Store: marconi.StoreOptions{TTL: s.TTL, Prefix: "stale5xx"},
		Notify: notify, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantStaleRoute5xx})
	clock := traffic.NewClock()
	rec := workload.NewMeshRecorder(clock, m.api)
	recv := workload.NewMeshReceivers(rec, m.url)
	DeferCleanup(recv.Close)
	churn.Rand = cfg.Rand("marconi-cache-lifecycle/stale-5xx/" + string(b))
	churn.Tail = func(ctx context.Context) { sweepEnded(ctx, rec, clock) }
	_, err := churn.Run(ctx, rec, recv, s.ControlChurnFor)
	Expect(err).NotTo(HaveOccurred())
	recv.Close()
	h := rec.History()
	churned := onlyProject(h, tenant+"/churn/")
	hits, misses := workload.MeshLiveReads(churned)
	st := judge.MeshCacheStats{Hits: hits, Misses: misses, MinHitRate: 0.99, HookErrors: hookErrors(m.mesh), ControlErrors: h.ControlErrors,
		MinReads: 1, FailedSends: judge.MeshFailedSends(h), RequireEnds: true}
	st.Ended, st.Uncovered = judge.MeshEndsUncovered(churned, expiryBound)
	m.stop()
	return h, st
}

// sweepEnded waits until every session the recorder saw end is past its end
// (its TTL lapse plus expiryBound for one left to expire), then sends one
// signal to the recipient of each: the stale-route and hit-rate checks see
// a send after every session end (else they are Unknown).
func sweepEnded(ctx context.Context, rec *workload.MeshRecorder, clock *traffic.Clock) {
	GinkgoHelper()
	h := rec.History()
	var last time.Duration
	recipients := map[string]bool{}
	for _, sess := range h.Sessions {
		if sess.Ended == 0 {
			continue
		}
		recipients[sess.Recipient] = true
		end := sess.Ended
		if sess.Expired {
			end += expiryBound
		}
		last = max(last, end)
	}
	if wait := last - clock.Now(); wait > 0 {
		select {
		case <-time.After(wait + 10*time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
	names := make([]string, 0, len(recipients))
	for r := range recipients {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		parts := strings.SplitN(r, "/", 3)
		Expect(parts).To(HaveLen(3), "recipient %q", r)
		// A failed send is recorded and judged by the checks, not asserted here.
		_, _ = rec.Send(ctx, marconi.SendRequest{Tenant: parts[0], Project: parts[1], Recipient: parts[2], Kind: "sweep"})
	}
}

// onlyProject keeps the sends and sessions of one project (key prefix
// "tenant/project/").
func onlyProject(h judge.MeshHistory, prefix string) judge.MeshHistory {
	out := h
	out.Sends, out.Sessions = nil, nil
	for _, s := range h.Sends {
		if strings.HasPrefix(s.Recipient, prefix) {
			out.Sends = append(out.Sends, s)
		}
	}
	for _, s := range h.Sessions {
		if strings.HasPrefix(s.Recipient, prefix) {
			out.Sessions = append(out.Sessions, s)
		}
	}
	return out
}

// expiryBound is how long after its TTL lapse an expired session may still
// be routed to: the keyspace notification's latency (active expiry runs
// at hz 10) — the in-memory TTL backstop stops routing at the lapse anyway.
const expiryBound = 500 * time.Millisecond

// record puts the run's sends into the history of the scenario judging
// it, whichever of the two columns ran it (harness.RecordOps), so both
// draw the run's timeline with the failover shaded.
func (r *lifecycleRun) record(ctx context.Context) { harness.RecordOps(ctx, r.clock, r.ops) }

func (r *lifecycleRun) transitions(b client.Backend) report.Check {
	ev := r.ev
	ev.Observed = append([]string(nil), r.ev.Observed...)
	minJudged := scaleOf().MinReads
	judgeRun := func(hist judge.MeshHistory, index []judge.MeshIndexProbe) check.Result {
		return check.All("marconi-cache-lifecycle", judge.HookTransitions.Judge(r.steps), judge.StaleRoutes.Judge(judge.StaleRoutesInput{History: hist, ExpiryBound: expiryBound, MinJudged: minJudged}),
			judge.ReleasedUnindexed.Judge(judge.UnindexedInput{Probes: index, MinJudged: 1}),
			judge.StaleRoutes.Judge(judge.StaleRoutesInput{History: r.masterTerm.hist, ExpiryBound: expiryBound, MinJudged: 1}))
	}
	result := judgeRun(r.hist, r.index)
	if len(r.late) > 0 {
		result = judge.LatePremise("heartbeat-cadence", result, judgeRun(r.histEx, r.indexEx), r.late)
	}
	if r.tourErr != nil {
		ev.Observed = append(ev.Observed, "hook tour stopped: "+r.tourErr.Error())
	}
	for _, st := range r.steps {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s(%s) via %s: %+v → %+v", st.Hook, st.SessionID, st.Via, brief(st.Before), brief(st.After)))
	}
	// Caught only when both the hook's own transition and the churn's
	// stale-route bound saw it: each check must be able to fail alone.
	ctl := harness.Variant(string(marconi.MutantForgetfulDeregister), "on_deregister drops the registration but forgets routing.invalidate_project: the route keeps naming the dead session",
		judge.HookAndStaleRoutes.Judge(judge.ForgetfulInput{Steps: r.forgetSteps, History: r.forgetHist, ExpiryBound: expiryBound}))
	// The static listener heard only the demoted primary: its tour's
	// expiry on the promoted one never reaches on_session_expired.
	staticTour := judge.HookTransitions.Judge(r.staticSteps)
	staticCtl := harness.Variant(string(marconi.MutantStaticListener), "the keyspace listener subscribes to the primaries seen at Start and never rediscovers: after the failover on_session_expired silently stops",
		staticTour)
	expiredSeen := false
	for _, st := range r.staticSteps {
		expiredSeen = expiredSeen || st.Hook == string(marconi.HookSessionExpired)
	}
	staticCtl = harness.Premise(staticCtl, !expiredSeen, "the static listener still saw on_session_expired: the failover did not move it off its primary")
	if r.staticErr != nil {
		staticCtl.Observed += " | tour: " + r.staticErr.Error()
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("graceful failover of the tenant's shard before the tour; B's listener covered the promoted primary %v after it", r.resubscribed.Round(time.Millisecond)))
	staleCtl := harness.Variant(string(marconi.MutantStaleRoute5xx), "on_deregister keeps the dead route and send_signal answers 500 on it instead of queuing offline: nothing is routed to a dead session, only failed sends tell",
		judge.StaleRoutesFailing.Judge(judge.StaleControlInput{History: r.staleHist, ExpiryBound: expiryBound}))
	staleCtl = harness.Premise(staleCtl, len(judge.MeshFailedSends(r.staleHist)) > 0, "no send met the dead route")
	keepCtl := harness.Variant(string(marconi.MutantReleaseKeepsIndex), "SessionStore.release deletes the record but leaves the session in its tenant's index (release.lua's ZREM forgotten): no route changes, the index keeps a dead member until its score lapses",
		judge.ReleasedUnindexed.Judge(judge.UnindexedInput{Probes: r.keepIndex, MinJudged: keepIndexSessions}))
	members := 0
	for _, p := range r.index {
		if p.Member {
			members++
		}
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("B's session index after the churn: %d of %d sessions released with a 200 still members (ZSCORE)", members, len(r.index)))
	// The master-term rule's own control: the pre-fix put-back
	// (docs/FINDINGS.md, "put-back") hands the old master's unwritten
	// master-alias signals to the next session of its identity.
	putBackCtl := harness.Variant(string(marconi.MutantPutBackToIdentity), "a closed socket's unwritten signals go back under the closing session's identity, not the recipient they were addressed to: the old master's master-alias signals reach the next session of its identity, which is not master",
		judge.MasterTermFailing.Judge(judge.StaleControlInput{History: r.putBackCtl.hist, ExpiryBound: expiryBound}))
	putBackCtl = harness.Premise(putBackCtl, r.putBackCtl.left > 0, "the old master's socket had written every master-alias signal when its session ended: nothing was put back")
	ev.Observed = append(ev.Observed, fmt.Sprintf("master-term workload: %d master-alias signals left unwritten by the old master, %d of them reached a later socket (put-back-to-identity: %d, %d)",
		r.masterTerm.left, r.masterTerm.reached, r.putBackCtl.left, r.putBackCtl.reached))
	return harness.Check(report.RowMarconiCacheLifecycle, report.ColumnSilentlyWrong, "", result, ev, ctl, staticCtl, staleCtl, keepCtl, putBackCtl)
}

func (r *lifecycleRun) health(b client.Backend) report.Check {
	ev := r.ev
	ev.Observed = append([]string(nil), r.ev.Observed...)
	result := judge.CacheHealth.Judge(r.cache)
	if len(r.late) > 0 {
		result = judge.LatePremise("heartbeat-cadence", result, judge.CacheHealth.Judge(r.cacheEx), r.late)
	}
	cold := judge.CacheHealth.Judge(r.cold)
	ctl := harness.Variant(string(marconi.MutantSkipWarmup), "Start skips warm_caches_from_store: active sessions miss until they re-register; their heartbeats reach no registration",
		cold)
	missed := 0
	for sid, got := range r.cold.FirstReads {
		if got != sid {
			missed++
		}
	}
	ctl = harness.Premise(ctl, missed > 0, "no first read missed")
	staleCtl := harness.Variant(string(marconi.MutantStaleRoute5xx), "send_signal answers 500 on a route whose session is gone (on_deregister kept it): each failed send is counted and fails the check",
		judge.CacheHealthFailing.Judge(r.stale))
	staleCtl = harness.Premise(staleCtl, len(r.stale.FailedSends) > 0, "no send met the dead route")
	ev.Observed = append(ev.Observed, fmt.Sprintf("%d sends, %d failed; %d churn sessions ended, %d of them without a later send", len(r.hist.Sends), len(r.cache.FailedSends), r.cache.Ended, len(r.cache.Uncovered)))
	return harness.Check(report.RowMarconiCacheLifecycle, report.ColumnErrors, "", result, ev, ctl, staleCtl)
}

func brief(s judge.MeshRouteState) string {
	return fmt.Sprintf("route=%q master=%q registered=%v attached=%v pending=%d", s.Route, s.Master, s.Registered, s.Attached, s.Pending)
}
