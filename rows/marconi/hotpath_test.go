package marconi_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-hot-path", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "marconi-hot-path/no-io-before-200/" + string(b), Row: report.RowMarconiHotPath, Column: report.ColumnSilentlyWrong,
				Spec: "a send does zero Redis / PostgreSQL I/O before its 200: client seams with the audit writers running, INFO commandstats on every node and pg_stat_activity with them paused (002 §2.1, §2.2, Stage 5 exit criteria)",
				Run:  func(ctx SpecContext) report.Check { return hotPathIO(ctx, b) },
			},
			harness.Scenario{
				Name: "marconi-hot-path/serves-through-outage/" + string(b), Row: report.RowMarconiHotPath, Column: report.ColumnErrors,
				Spec: "every send answers 200 and is delivered exactly once, also while every Valkey node and PostgreSQL are unreachable (002 §2.1, §4 \"Marconi continues serving the hot path regardless of any pipeline's health\")",
				Run:  func(ctx SpecContext) report.Check { return hotPathOutage(ctx, b) },
			},
		)
	}
})

// ioBurst is what one measured burst saw.
type ioBurst struct {
	sends      int
	client     map[string]int64 // hot-path commands at the client seams
	server     map[string]int64 // per node:command, noise excluded
	noise      map[string]int64
	pgActive   []string
	latencies  []time.Duration
	allClients marconi.IOCounts
}

// measure runs a burst through rec and counts its I/O: at the client
// seams (pools, PostgreSQL tracer) and — when server is set — on every
// node and in pg_stat_activity.
func measure(ctx context.Context, rec *workload.MeshRecorder, burst workload.MeshBurst, pools func() []*marconi.CountingPool, tracer *marconi.PGCounter, server bool, probe *pgx.Conn) ioBurst {
	GinkgoHelper()
	var cs0 map[string]int64
	var pa0 map[int]pgBackend
	if server {
		waitUnblocked(ctx)
		waitReplicated(ctx)
		cs0, pa0 = commandStats(ctx), pgActivity(ctx, probe)
	}
	c0 := sumCounts(pools()...)
	var t0 marconi.IOCounts
	if tracer != nil {
		t0 = tracer.Counts()
	}
	before := okSends(rec)
	n0 := len(rec.Latencies())
	burst.Run(ctx, rec)
	out := ioBurst{sends: okSends(rec) - before, latencies: rec.Latencies()[n0:]}
	c := sumCounts(pools()...).Sub(c0)
	out.allClients = c
	out.client = prefixed("redis:", c.HotPathByCommand)
	if tracer != nil {
		for k, v := range tracer.Counts().Sub(t0).HotPathByCommand {
			out.client["pg:"+k] = v
		}
	}
	if server {
		out.server, out.noise = statDelta(cs0, commandStats(ctx))
		out.pgActive = pgActiveDuring(pa0, pgActivity(ctx, probe))
	}
	return out
}

func hotPathIO(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	ev := harness.Evidence(cfg, cluster, nil)
	probe := probePG(ctx)
	reg := prometheus.NewRegistry()
	store := newPool(ctx, b, "marconi-store")
	ev.Client = store.Version()
	pipe := startPipeline(ctx, b, reg, "hp-"+string(b), true, audit.MutantNone)
	env := startMesh(ctx, marconi.Options{Pool: store, Sink: pipe.queue, Registry: reg})
	rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)

	By(fmt.Sprintf("%d receivers registered and attached on %s; audit queue → writer → archiver running (%s)", s.Receivers, cluster.Spec, b))
	keys, _ := registerReceivers(ctx, rec, recv, "hot", s.Receivers, true)
	burst := workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: s.PerSender, Kind: "hot", Rand: cfg.Rand("marconi-hot-path/burst/" + string(b))}

	By("burst 1 with the audit writers running: client seams")
	pools := func() []*marconi.CountingPool { return append(pipe.pools(), store) }
	running := measure(ctx, rec, burst, pools, nil, false, probe)
	workers := pipe.counts()
	Expect(workers.Total).To(BeNumerically(">", 0), "the audit workers ran (their pools sent nothing)")

	By("burst 2 with the audit workers paused: every node's commandstats and pg_stat_activity")
	pipe.pause()
	paused := measure(ctx, rec, burst, pools, nil, true, probe)
	pipe.resume()
	missing := workload.AwaitDeliveries(withTimeout(ctx, 10*time.Second), rec, "pushed")

	for k, v := range paused.client {
		running.client[k] += v
	}
	io := judge.MeshIO{Sends: running.sends, ClientHotPath: running.client, PausedSends: paused.sends,
		ServerRedis: paused.server, ServerPG: paused.pgActive, MinSends: s.Senders * s.PerSender / 2}
	result := judge.HotPathIO.Judge(io)
	all := append(running.latencies, paused.latencies...)
	ev.Metrics = map[string]float64{
		"sends": float64(running.sends + paused.sends), "receivers": float64(s.Receivers),
		"client_p50_ms": ms(workload.Quantile(all, 0.50)), "client_p99_ms": ms(workload.Quantile(all, 0.99)),
		"mesh_send_p99_bucket_ms":      1000 * histogramQuantile(reg, "marconi_signal_send_duration_seconds", 0.99),
		"audit_worker_commands_burst1": float64(running.allClients.Total - running.allClients.HotPath),
		"server_noise_excluded":        float64(sumValues(paused.noise)),
		"undelivered_pushed":           float64(missing),
		"audit_appended":               env.mesh.MetricSum("marconi_redis_writer_appended_total", nil),
	}
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("burst 1 (writers running): %d sends, the audit workers sent %v meanwhile, none under a send's context", running.sends, running.allClients.ByCommand),
		fmt.Sprintf("burst 2 (workers paused): server noise excluded by name (INFO probe, REPLCONF ACK, keepalive PING): %v", paused.noise),
		fmt.Sprintf("client-observed send latency p50 %.3f ms, p99 %.3f ms over HTTP (the benchmark measures the spec's p99 < 5 ms at 1,000 receivers; not asserted here)", ms(workload.Quantile(all, 0.5)), ms(workload.Quantile(all, 0.99))))

	// The controls measure every node with waitUnblocked first: the main
	// pipeline's archiver, left running, sits in XREADGROUP … BLOCK almost
	// all the time, so that wait passed only when a poll fell into the
	// instant between two blocks (it timed out under load). Its part is
	// done: stop it so the wait is for its last block to end.
	pipe.pause()
	By("negative controls: the legacy publish before the 200; the legacy synchronous PostgreSQL INSERT")
	controls := []report.Control{publishControl(ctx, b, s, probe), syncPGControl(ctx, b, s, probe)}
	return harness.Check(report.RowMarconiHotPath, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

// publishControl runs the publish-before-ack mutant through the same
// measurement: caught when the checker fails AND both seams saw it (the
// client hooks attributed PUBLISH to sends, the servers counted publish).
func publishControl(ctx context.Context, b client.Backend, s meshScale, probe *pgx.Conn) report.Control {
	GinkgoHelper()
	store := newPool(ctx, b, "marconi-mutant-publish")
	env := startMesh(ctx, marconi.Options{Pool: store, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantPublishBeforeAck, Store: marconi.StoreOptions{Prefix: "mutant-publish"}})
	rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, _ := registerReceivers(ctx, rec, recv, "hot-publish", 8, true)
	burst := workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: s.ControlPerSender * 4, Kind: "hot", Rand: cfg.Rand("marconi-hot-path/publish/" + string(b))}
	m := measure(ctx, rec, burst, func() []*marconi.CountingPool { return []*marconi.CountingPool{store} }, nil, true, probe)
	io := judge.MeshIO{Sends: m.sends, ClientHotPath: m.client, PausedSends: m.sends, ServerRedis: m.server, ServerPG: m.pgActive, MinSends: burst.Senders * burst.PerSender / 2}
	ctl := harness.Variant(string(marconi.MutantPublishBeforeAck), "the legacy §2.2 bus kept on the send path: PUBLISH on the session channel before the 200, delivery unchanged", judge.HotPathIO.Judge(io))
	serverPublishes := int64(0)
	for k, v := range m.server {
		if len(k) > 8 && k[len(k)-8:] == ":publish" {
			serverPublishes += v
		}
	}
	ctl = harness.Premise(ctl, m.client["redis:PUBLISH"] > 0 && serverPublishes > 0, "no PUBLISH seen on the send path and at the servers")
	ctl.Observed += fmt.Sprintf(" (client hooks: %d PUBLISH on the send path; servers: %d publish)", m.client["redis:PUBLISH"], serverPublishes)
	return ctl
}

// syncPGControl runs the synchronous-INSERT mutant: caught when the checker
// fails AND both seams saw it (the pgx tracer attributed INSERTs to sends,
// pg_stat_activity saw the backend run).
func syncPGControl(ctx context.Context, b client.Backend, s meshScale, probe *pgx.Conn) report.Control {
	GinkgoHelper()
	tracer := &marconi.PGCounter{}
	pgcfg, err := pgx.ParseConfig(pg.DSN())
	Expect(err).NotTo(HaveOccurred())
	pgcfg.Tracer = tracer
	pgcfg.RuntimeParams["application_name"] = "marconi-legacy-send"
	conn, err := pgx.ConnectConfig(ctx, pgcfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = conn.Close(context.Background()) })
	store := newPool(ctx, b, "marconi-mutant-pg")
	env := startMesh(ctx, marconi.Options{Pool: store, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantSyncPGWrite, LegacyPG: conn, Store: marconi.StoreOptions{Prefix: "mutant-pg"}})
	rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, _ := registerReceivers(ctx, rec, recv, "hot-pg", 8, true)
	burst := workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: s.ControlPerSender * 4, Kind: "hot", Rand: cfg.Rand("marconi-hot-path/sync-pg/" + string(b))}
	m := measure(ctx, rec, burst, func() []*marconi.CountingPool { return []*marconi.CountingPool{store} }, tracer, true, probe)
	io := judge.MeshIO{Sends: m.sends, ClientHotPath: m.client, PausedSends: m.sends, ServerRedis: m.server, ServerPG: m.pgActive, MinSends: burst.Senders * burst.PerSender / 2}
	ctl := harness.Variant(string(marconi.MutantSyncPGWrite), "the legacy synchronous PostgreSQL INSERT kept in send_signal (what Stage 5 removes)", judge.HotPathIO.Judge(io))
	ctl = harness.Premise(ctl, m.client["pg:INSERT"] > 0 && len(m.pgActive) > 0, "no INSERT seen on the send path and in pg_stat_activity")
	ctl.Observed += fmt.Sprintf(" (pgx tracer: %d INSERT on the send path; pg_stat_activity: %d backends ran)", m.client["pg:INSERT"], len(m.pgActive))
	return ctl
}

// outage cuts every Valkey node's proxy and PostgreSQL's; the returned
// func restores them (BeforeEach's Reset would too).
func outage() func() {
	GinkgoHelper()
	for _, n := range cluster.Nodes() {
		n.DisableProxy()
	}
	pg.DisableProxy()
	return func() {
		GinkgoHelper()
		for _, n := range cluster.Nodes() {
			Expect(n.EnableProxy()).To(Succeed())
		}
		Expect(pg.EnableProxy()).To(Succeed())
	}
}

func hotPathOutage(ctx SpecContext, b client.Backend) report.Check {
	s := scaleOf()
	ev := harness.Evidence(cfg, cluster, nil)
	reg := prometheus.NewRegistry()
	store := newPool(ctx, b, "marconi-store")
	ev.Client = store.Version()
	pipe := startPipeline(ctx, b, reg, "outage-"+string(b), true, audit.MutantNone)
	env := startMesh(ctx, marconi.Options{Pool: store, Sink: pipe.queue, Registry: reg})
	rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, _ := registerReceivers(ctx, rec, recv, "outage", s.Receivers/2, true)
	burst := workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: s.PerSender / 2, Kind: "outage", Rand: cfg.Rand("marconi-hot-path/outage/" + string(b))}

	By("healthy burst, then every Valkey node and PostgreSQL cut off (proxies disabled) and a burst through the outage")
	burst.Run(ctx, rec)
	healthy := okSends(rec)
	restore := outage()
	began := time.Now()
	burst.Run(ctx, rec)
	// The outage is real for the audit fan-out: it holds until the writer
	// has counted failed appends, and a second burst runs through it.
	Eventually(ctx, func() float64 { return env.mesh.MetricSum("marconi_redis_writer_errors_total", nil) }).
		WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).Should(BeNumerically(">", 0), "the audit writer never failed: no outage")
	burst.Rand = cfg.Rand("marconi-hot-path/outage/2/" + string(b))
	burst.Run(ctx, rec)
	during := time.Since(began)
	errs := env.mesh.MetricSum("marconi_redis_writer_errors_total", nil)
	depth := env.mesh.MetricSum("marconi_audit_queue_depth", nil)
	restore()
	missing := workload.AwaitDeliveries(withTimeout(ctx, 10*time.Second), rec, "pushed")
	h := rec.History()
	result := judge.SendsDelivered.Judge(judge.DeliveredInput{History: h, MinSends: 3 * s.Senders * s.PerSender / 2, RequireQueued: false})
	lat := rec.Latencies()
	ev.Metrics = map[string]float64{"sends": float64(len(h.Sends)), "sends_during_outage": float64(len(h.Sends) - healthy),
		"outage_burst_ms": ms(during), "client_p99_ms": ms(workload.Quantile(lat, 0.99)), "undelivered_pushed": float64(missing),
		"audit_writer_errors_during_outage": errs, "audit_queue_depth_at_restore": depth}
	ev.Observed = append(ev.Observed, fmt.Sprintf("outage of %v: the audit writer counted %.0f failed appends and its queue held %.0f entries while every send answered in memory", during.Round(time.Millisecond), errs, depth))

	By("negative control: the publish-before-ack mutant through the same outage")
	return harness.Check(report.RowMarconiHotPath, report.ColumnErrors, "", result, ev, publishOutageControl(ctx, b, s))
}

// publishOutageControl: with Redis unreachable the legacy send path cannot
// publish, so its sends fail — loud, the errors column. Caught when the
// checker fails on failed sends (not on lost deliveries).
func publishOutageControl(ctx context.Context, b client.Backend, s meshScale) report.Control {
	GinkgoHelper()
	store := newPool(ctx, b, "marconi-mutant-outage")
	env := startMesh(ctx, marconi.Options{Pool: store, Sink: marconi.NewMemorySink(), Mutant: marconi.MutantPublishBeforeAck, Store: marconi.StoreOptions{Prefix: "mutant-outage"}})
	env.api.HTTP = &http.Client{Timeout: 750 * time.Millisecond}
	rec := workload.NewMeshRecorder(traffic.NewClock(), env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)
	keys, _ := registerReceivers(ctx, rec, recv, "outage-publish", 4, true)
	restore := outage()
	workload.MeshBurst{Recipients: keys, Senders: s.Senders, PerSender: 1, Kind: "outage", Rand: cfg.Rand("marconi-hot-path/outage-publish/" + string(b))}.Run(ctx, rec)
	restore()
	h := rec.History()
	failed := len(h.Sends) - okSends(rec)
	ctl := harness.Variant(string(marconi.MutantPublishBeforeAck), "a send path that needs Redis fails its sends while Redis is unreachable", judge.SendsDelivered.Judge(judge.DeliveredInput{History: h, MinSends: s.Senders, RequireQueued: false}))
	ctl = harness.Premise(ctl, failed > 0, "no send failed: the outage did not reach the send path")
	ctl.Observed += fmt.Sprintf(" (%d of %d sends failed)", failed, len(h.Sends))
	return ctl
}

func withTimeout(ctx context.Context, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	DeferCleanup(cancel)
	return c
}
