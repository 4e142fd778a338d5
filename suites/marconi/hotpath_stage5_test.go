package marconi_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Stage 5 exit criteria of the hot path beyond "no I/O before the 200"
// (spec 002 §8 Stage 5, §2.2, §3.6): the WS handler opens no Redis
// subscription once Marconi-attached, counted on every node; the audit
// queue ships with the spec's defaults.
var _ = Describe("marconi-hot-path", func() {
	b := harness.BackendsFromEnv()[0]
	harness.Emit(
		harness.Scenario{
			Name: "marconi-hot-path/no-subscribe-when-attached/" + string(b), Row: report.RowMarconiHotPath, Column: report.ColumnSilentlyWrong,
			Spec: "attaching receiver sockets (and delivering to them) makes no SUBSCRIBE / SSUBSCRIBE / PSUBSCRIBE on any node and leaves no subscription open: INFO commandstats and CLIENT LIST on every node, before and while attached (002 §8 Stage 5 exit, §2.2)",
			Run:  func(ctx SpecContext) report.Check { return noSubscribe(ctx, b) },
		},
		harness.Scenario{
			Name: "marconi-hot-path/stamp-engagement/" + string(b), Row: report.RowMarconiHotPath, Column: report.ColumnSilentlyWrong,
			Spec: "stamp_engagement on attached receivers updates the route's freshness through on_heartbeat and leaves the entry whole: sockets stay attached, later sends are pushed (002 §5 hook table)",
			Run:  func(ctx SpecContext) report.Check { return engagement(ctx, b) },
		},
		harness.Scenario{
			Name: "marconi-hot-path/audit-queue-defaults", Row: report.RowMarconiHotPath, Column: report.ColumnSilentlyWrong,
			Spec: "the audit queue as shipped holds 50,000 entries and overwrites the oldest, caps 512 MB, ejects entries at 600 s (002 §3.6 defaults)",
			Run:  func(ctx SpecContext) report.Check { return queueDefaults() },
		},
	)
})

// storePool is a SessionStore pool with the clients' default timeouts:
// registering 50 sessions on a loaded 2-core machine must not trip
// newPool's short ones (those are for the outage scenarios).
func storePool(ctx context.Context, b client.Backend, name string) *marconi.CountingPool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: name}))
	Expect(err).NotTo(HaveOccurred(), "open %s pool", name)
	DeferCleanup(p.Close)
	return marconi.Count(p)
}

// subscriptions sums sub+ssub+psub of every connection per node (CLIENT
// LIST over the admin connection).
func subscriptions(ctx context.Context) map[string]int {
	GinkgoHelper()
	out := map[string]int{}
	for _, n := range cluster.Nodes() {
		v, err := n.Do(ctx, "CLIENT", "LIST")
		Expect(err).NotTo(HaveOccurred())
		text, _ := client.AsString(v)
		out[n.Name()] = 0
		for _, c := range check.ParseClientList(n.Name(), text) {
			out[n.Name()] += c.Sub + c.SSub + c.PSub
		}
	}
	return out
}

// attachCount attaches n receivers to a mesh built with o and counts the
// servers' subscriptions around it.
func attachCount(ctx context.Context, b client.Backend, o marconi.Options, project string, n int) check.SubscribeCount {
	GinkgoHelper()
	env := startMesh(ctx, o)
	rec := traffic.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := traffic.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, sessions := registerReceivers(ctx, rec, recv, project, n, false)
	waitUnblocked(ctx)
	cs0, sub0 := commandStats(ctx), subscriptions(ctx)
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.SessionID
	}
	Expect(recv.ConnectAll(ctx, ids, 16)).To(Succeed())
	traffic.MeshBurst{Recipients: keys, Senders: 4, PerSender: 5, Kind: "attached", Rand: cfg.Rand("marconi-hot-path/attached/" + project)}.Run(ctx, rec)
	traffic.AwaitDeliveries(withTimeout(ctx, 5*time.Second), rec, "pushed")
	cs1, sub1 := commandStats(ctx), subscriptions(ctx)
	attached := 0
	for _, ls := range env.mesh.Tables().Registrations {
		if ls.Attached {
			attached++
		}
	}
	c := check.SubscribeCount{ClusterNodes: len(cluster.Nodes()), Attached: attached, MinAttached: n,
		Commands: map[string]int64{}, Subscribed: map[string]int{}}
	for node, v := range sub1 {
		c.Nodes = append(c.Nodes, node)
		c.Subscribed[node] = v - sub0[node]
	}
	for k, v := range cs1 {
		_, cmd, _ := strings.Cut(k, ":")
		if d := v - cs0[k]; d != 0 && (cmd == "subscribe" || cmd == "ssubscribe" || cmd == "psubscribe") {
			c.Commands[k] = d
		}
	}
	return c
}

func noSubscribe(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	ev := harness.Evidence(cfg, cluster, nil)
	store := storePool(ctx, b, "marconi-attach")
	ev.Client = store.Version()
	By(fmt.Sprintf("%d receivers attach to a Stage 5 instance; every node's commandstats and CLIENT LIST before and while attached", s.Receivers))
	c := attachCount(ctx, b, marconi.Options{Pool: store, Sink: marconi.NewMemorySink(), Store: marconi.StoreOptions{Prefix: "attach"}}, "attach", s.Receivers)
	result := check.MarconiNoSubscribe(c)
	ev.Metrics = map[string]float64{"attached": float64(c.Attached), "nodes_counted": float64(len(c.Nodes))}

	By("negative control: the legacy session_stream SUBSCRIBE kept beside the attach")
	sub, err := client.NewSubscriber(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "legacy-session-stream"}))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(sub.Close)
	bad := attachCount(ctx, b, marconi.Options{Pool: storePool(ctx, b, "marconi-attach-legacy"), Sink: marconi.NewMemorySink(), Store: marconi.StoreOptions{Prefix: "attach-legacy"},
		Mutant: marconi.MutantWSSubscribe, LegacySubscriber: sub}, "attach-legacy", 8)
	ctl := harness.Variant(string(marconi.MutantWSSubscribe), "every attached socket also SUBSCRIBEs its legacy session channel (the §2.2 forwarding loop Stage 5 removes); delivery unchanged", check.MarconiNoSubscribe(bad))
	ctl.Observed += fmt.Sprintf(" (commands %v, subscriptions %v)", bad.Commands, bad.Subscribed)
	return harness.Check(report.RowMarconiHotPath, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

// engagementRun stamps engagement on n attached receivers of a mesh built
// with o, then sends to each.
func engagementRun(ctx context.Context, o marconi.Options, project string, n int) check.Engagement {
	GinkgoHelper()
	env := startMesh(ctx, o)
	rec := traffic.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := traffic.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, sessions := registerReceivers(ctx, rec, recv, project, n, true)
	e := check.Engagement{Receivers: n}
	hook := func() float64 {
		return env.mesh.MetricSum("marconi_invalidator_calls_total", map[string]string{"hook": string(marconi.HookHeartbeat)})
	}
	h0 := hook()
	for _, s := range sessions {
		at := time.Now()
		_, err := env.api.StampEngagement(ctx, s.Tenant, s.Project, s.SessionID)
		e.Stamps++
		if err != nil {
			e.StampErrors++
			continue
		}
		if reg, ok := env.mesh.Tables().Registrations[s.SessionID]; ok && !reg.LastHeartbeat.Before(at.Truncate(time.Millisecond)) {
			e.Advanced++
		}
	}
	e.HookCalls = int(hook() - h0)
	for _, ls := range env.mesh.Tables().Registrations {
		if ls.Attached && ls.Project == project {
			e.Attached++
		}
	}
	n0 := len(rec.History().Sends)
	traffic.MeshBurst{Recipients: keys, Senders: 2, PerSender: n, Kind: "engaged", Rand: cfg.Rand("marconi-hot-path/engagement/" + project)}.Run(ctx, rec)
	for _, snd := range rec.History().Sends[n0:] {
		e.Sends++
		if snd.OK() && snd.Outcome == string(audit.OutcomePushed) {
			e.Pushed++
		}
	}
	return e
}

func engagement(ctx SpecContext, b client.Backend) report.Check {
	ev := harness.Evidence(cfg, cluster, nil)
	store := storePool(ctx, b, "marconi-engagement")
	ev.Client = store.Version()
	By("16 attached receivers each stamp engagement, then 32 sends")
	e := engagementRun(ctx, marconi.Options{Pool: store, Sink: marconi.NewMemorySink(), Store: marconi.StoreOptions{Prefix: "engage"}}, "engage", 16)
	ev.Metrics = map[string]float64{"stamps": float64(e.Stamps), "later_sends": float64(e.Sends), "pushed": float64(e.Pushed)}
	By("negative control: stamp_engagement invalidating the entry")
	bad := engagementRun(ctx, marconi.Options{Pool: storePool(ctx, b, "marconi-engagement-bad"), Sink: marconi.NewMemorySink(), Store: marconi.StoreOptions{Prefix: "engage-bad"},
		Mutant: marconi.MutantEngagementInvalidates}, "engage-bad", 8)
	return harness.Check(report.RowMarconiHotPath, report.ColumnSilentlyWrong, "", check.MarconiEngagement(e), ev,
		harness.Variant(string(marconi.MutantEngagementInvalidates), "stamp_engagement drops the entry's WS handle instead of a freshness update", check.MarconiEngagement(bad)))
}

// measureQueue offers to a real audit queue built with def (the zero
// value: as shipped) on a clock the harness moves, with no writer.
func measureQueue(def audit.QueueConfig) check.QueueDefaults {
	GinkgoHelper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	q, err := audit.NewQueue(audit.QueueOptions{Default: def, Now: clock})
	Expect(err).NotTo(HaveOccurred())
	shipped := def
	if shipped == (audit.QueueConfig{}) {
		shipped = audit.DefaultQueueConfig()
	}
	out := check.QueueDefaults{MaxBytes: shipped.MaxBytes, AgeBelow: 599 * time.Second, AgeAbove: 601 * time.Second}
	const tenant = "defaults"
	entry := func(i int) audit.Entry {
		return audit.Entry{Envelope: audit.Envelope{SignalID: strconv.Itoa(i), TenantID: tenant, Kind: "k", CreatedAt: now}, ArrivedAt: now, Outcome: audit.OutcomePushed}
	}
	for i := 1; i <= 50_001; i++ {
		q.Offer(entry(i))
	}
	out.DepthAtOverflow = q.Stats(tenant).Depth
	seen := map[int]bool{}
	for items := q.Take(tenant, 4096); len(items) > 0; items = q.Take(tenant, 4096) {
		for _, it := range items {
			n, _ := strconv.Atoi(it.Entry.Envelope.SignalID)
			seen[n] = true
		}
	}
	out.KeptNewest = seen[50_001]
	for i := 1; i <= 50_001; i++ {
		if !seen[i] {
			out.LostFirst = i
			break
		}
	}
	q.Offer(entry(0))
	now = now.Add(out.AgeBelow)
	out.SurvivedBelow = len(q.Take(tenant, 1)) == 1
	q.Offer(entry(0))
	now = now.Add(out.AgeAbove)
	out.EjectedAbove = len(q.Take(tenant, 1)) == 0 && q.Stats(tenant).Dropped[audit.DropMaxAge] > 0
	q.Close()
	return out
}

func queueDefaults() report.Check {
	ev := harness.Evidence(cfg, nil, nil)
	By("a queue as shipped (zero configuration): 50,001 offers with no writer; entries aged 599 s and 601 s")
	got := measureQueue(audit.QueueConfig{})
	result := check.MarconiQueueDefaults(got)
	ev.Metrics = map[string]float64{"depth_after_50001": float64(got.DepthAtOverflow), "lost_entry": float64(got.LostFirst), "max_bytes": float64(got.MaxBytes)}
	By("negative controls: a queue shipped with 10,000 entries; one that rejects the newest instead")
	small := audit.DefaultQueueConfig()
	small.MaxEntries = 10_000
	reject := audit.DefaultQueueConfig()
	reject.Policy = audit.PolicyRejectNew
	return harness.Check(report.RowMarconiHotPath, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("max-entries-10000", "a default of 10,000 entries (the sizing formula's floor for a smaller burst, not the spec's default)", check.MarconiQueueDefaults(measureQueue(small))),
		harness.Variant("policy-reject-new", "overwrite_policy reject_new as the default: the newest entry is refused instead of the oldest overwritten", check.MarconiQueueDefaults(measureQueue(reject))))
}
