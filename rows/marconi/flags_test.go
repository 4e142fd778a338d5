package marconi_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The stage-flags row (spec 002 §8 Migration path, fine-grain feature
// flags): one mesh walks the rollout forward one flag at a time and back
// in rollback order, under traffic, with the audit workers following the
// Stage 3/4 flags; the ledger must stay exact in every phase, and every
// combination §8 forbids is refused by name — at start and as a flip.
// One backend: the flags live above the client seam.
var _ = Describe("marconi-stage-flags", func() {
	b := harness.BackendsFromEnv()[0]
	harness.Emit(
		harness.Scenario{
			Name: "marconi-stage-flags/walk-ledger/" + string(b), Row: report.RowMarconiStageFlags, Column: report.ColumnSilentlyWrong,
			Spec: "every stage's flags turned on one by one and back off in rollback order under traffic: every accepted signal delivered or queued exactly once, audited and archived as its phase's flags promise, the SessionStore fallback read while the table-read flags are off, send-path I/O exactly where a flag is off (002 §8 Stages 1–5, fine-grain flags)",
			Run:  func(ctx SpecContext) report.Check { return flagsRuns.Get(ctx, b).ledger() },
		},
		harness.Scenario{
			Name: "marconi-stage-flags/refusals/" + string(b), Row: report.RowMarconiStageFlags, Column: report.ColumnErrors,
			Spec: "every forbidden combination (Stage 5 without the archiver primary or the audit pipeline, table reads without the Stage 2 hooks, shadow and primary together, cross-instance forward) refused at start and as a flip with its rule named; every allowed flip, send and control call succeeds (002 §8)",
			Run:  func(ctx SpecContext) report.Check { return flagsRuns.Get(ctx, b).refusals() },
		},
		harness.Scenario{
			Name: "marconi-stage-flags/defaults-off/" + string(b), Row: report.RowMarconiStageFlags, Column: report.ColumnSilentlyWrong,
			Spec: "with no MARCONI_* variable set, every flag the mesh defines is OFF as the environment reader returns it and as the mesh started from it holds it (002 §8 fine-grain feature flags, default OFF)",
			Run:  func(ctx SpecContext) report.Check { return flagsRuns.Get(ctx, b).defaultsOff() },
		},
	)
})

// flagScale sizes the walk by profile.
type flagScale struct {
	Attached, Offline, Senders int
	Dwell, SendEvery           time.Duration
	MinSends                   int
}

func flagScaleOf() flagScale {
	s := flagScale{Attached: 8, Offline: 4, Senders: 2, Dwell: 250 * time.Millisecond, SendEvery: 20 * time.Millisecond, MinSends: 200}
	if cfg.Profile == "full" {
		s.Attached, s.Offline, s.Senders, s.Dwell, s.MinSends = 40, 10, 4, 2*time.Second, 3000
	}
	return s
}

// flagsRun is the walk and its bad variants, shared by the two columns.
type flagsRun struct {
	ev                          report.Evidence
	good, stale, drops, accepts judge.StageFlagsLedger
	defaults, defaultOn         judge.FlagDefaults
}

// flagsRuns runs the walk once per backend, even if it fails: the other
// column reports that (harness.Once).
var flagsRuns = harness.NewOnce(runFlags)

func runFlags(ctx SpecContext, b client.Backend) *flagsRun {
	GinkgoHelper()
	walk := marconi.StageWalk()
	r := &flagsRun{ev: harness.Evidence(cfg, cluster, nil)}
	By("the rollout forward and back under traffic, with the correct mesh")
	r.good = walkFlags(ctx, b, "good", marconi.MutantNone, walk)
	By("the stale-fallback mesh: Stage 1 and back with the table-read flags")
	r.stale = walkFlags(ctx, b, "stale", marconi.MutantStaleFallback, walk[:2])
	By("the rollback that drops the pending index: up to Stage 2 and back")
	r.drops = walkFlags(ctx, b, "drops", marconi.MutantRollbackDrops, walk[:3])
	By("the mesh that accepts forbidden combinations")
	r.accepts = walkFlags(ctx, b, "accepts", marconi.MutantAcceptForbidden, walk[:2])
	By("the shipped defaults: a mesh started from an environment with no MARCONI_* set, and from the reader that defaults a flag ON")
	r.defaults = readDefaults(ctx, b, "defaults", marconi.MutantNone)
	r.defaultOn = readDefaults(ctx, b, "default-on", marconi.MutantFlagDefaultOn)
	return r
}

func (r *flagsRun) defaultsOff() report.Check {
	result := judge.FlagsDefaultOff.Judge(r.defaults)
	on := harness.Variant(string(marconi.MutantFlagDefaultOn), "the flag reader takes an unset MARCONI_ROUTING_TABLE_READS as ON: a deployment that sets nothing skips the Stage 1 fallback",
		judge.FlagsDefaultOff.Judge(r.defaultOn))
	return harness.Check(report.RowMarconiStageFlags, report.ColumnSilentlyWrong, "", result, r.ev, on)
}

// readDefaults reads every flag's default twice, on a deployment that sets
// no MARCONI_* variable: as the environment reader returns it, and as the
// mesh started from that (on the cluster, with the reader's mutant) holds
// it. The flags are enumerated from marconi.Flags itself, so a flag added
// later is judged with the rest.
func readDefaults(ctx context.Context, b client.Backend, name string, mutant marconi.Mutant) judge.FlagDefaults {
	GinkgoHelper()
	var environ, given []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MARCONI_") {
			continue // the defaults are what a deployment that sets none gets
		}
		environ = append(environ, kv)
	}
	lookup := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		lookup[k] = v
		if strings.HasPrefix(k, "MARCONI_") {
			given = append(given, kv)
		}
	}
	read := marconi.FlagsFromEnvAs(func(k string) string { return lookup[k] }, environ, mutant)
	pool := newPool(ctx, b, "marconi-flags-"+name)
	env := startMeshAs(ctx, marconi.Options{Pool: pool, Flags: read, Store: marconi.StoreOptions{Prefix: "mf-" + name, TTL: 10 * time.Minute}})
	d := judge.FlagDefaults{Fields: reflect.TypeFor[marconi.Flags]().NumField(), Environ: given,
		Reader: flagSettings(read), Mesh: flagSettings(env.mesh.Flags())}
	env.stop()
	return d
}

// flagSettings lists every field of f: a bool is an on/off flag, the
// per-verb map one flag (on when any verb is), anything else a setting
// recorded by value. A bool's environment name is what the flag printer
// (Flags.String) names when that flag alone is on.
func flagSettings(f marconi.Flags) []judge.FlagDefault {
	v, t := reflect.ValueOf(f), reflect.TypeFor[marconi.Flags]()
	out := make([]judge.FlagDefault, 0, t.NumField())
	for i := range t.NumField() {
		fd := judge.FlagDefault{Field: t.Field(i).Name}
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Bool:
			var alone marconi.Flags
			reflect.ValueOf(&alone).Elem().Field(i).SetBool(true)
			if s := alone.String(); strings.HasPrefix(s, "MARCONI_") && !strings.Contains(s, ",") {
				fd.Env = s
			}
			fd.Switch, fd.On = true, fv.Bool()
		case reflect.Map:
			fd.Env, fd.Switch = "MARCONI_VERB_*", true
			for _, k := range fv.MapKeys() {
				fd.On = fd.On || fv.MapIndex(k).Kind() == reflect.Bool && fv.MapIndex(k).Bool()
			}
		default:
			fd.Value = fmt.Sprint(fv.Interface())
		}
		out = append(out, fd)
	}
	return out
}

func (r *flagsRun) ledger() report.Check {
	result := judge.FlagsLedger.Judge(r.good)
	stale := harness.Variant(string(marconi.MutantStaleFallback), "the table-read flags off but the routes still read from the process-local table: a registration the SessionStore got from another writer is not seen",
		judge.FlagsLedger.Judge(r.stale))
	drops := harness.Variant(string(marconi.MutantRollbackDrops), "turning a flag off starts the mesh from clean state: the pending index is dropped, signals answered 200 queued_offline are lost",
		judge.FlagsLedger.Judge(r.drops))
	planted := r.good
	planted.Pulled = append(append([]judge.MeshDelivery(nil), r.good.Pulled...), r.good.Pulled...)
	dup := harness.SelfTest("pulled-twice", "every signal drained by the final pending call is recorded twice", judge.FlagsLedger.Judge(planted))
	return harness.Check(report.RowMarconiStageFlags, report.ColumnSilentlyWrong, "", result, r.ev, stale, drops, dup)
}

func (r *flagsRun) refusals() report.Check {
	result := judge.FlagsRefusals.Judge(r.good)
	accepts := harness.Variant(string(marconi.MutantAcceptForbidden), "the flag rules skipped: the mesh starts with, and flips to, combinations spec 002 §8 forbids",
		judge.FlagsRefusals.Judge(r.accepts))
	planted := r.good
	planted.Attempts = append([]judge.FlagAttempt(nil), r.good.Attempts...)
	for i := range planted.Attempts {
		if planted.Attempts[i].Rule != "" {
			planted.Attempts[i].Err = "bad marconi flags"
		}
	}
	unnamed := harness.SelfTest("unnamed-refusal", "every refusal's message stripped of its rule name", judge.FlagsRefusals.Judge(planted))
	return harness.Check(report.RowMarconiStageFlags, report.ColumnErrors, "", result, r.ev, accepts, unnamed)
}

// archiverMode is the Stage 4 mode the flags name.
func archiverMode(f marconi.Flags) string {
	switch {
	case f.PGArchiverPrimary:
		return "primary"
	case f.PGArchiverShadow:
		return "shadow"
	}
	return ""
}

// flagWorkers runs the audit workers as the Stage 3/4 flags say: the Redis
// Stream writer under MARCONI_REDIS_STREAM_WRITER, the PG archiver in the
// mode of MARCONI_PG_ARCHIVER_SHADOW / _PRIMARY.
type flagWorkers struct {
	b       client.Backend
	tenant  string
	queue   *audit.Queue
	writer  *audit.Writer
	metrics *audit.Metrics

	stopWriter, stopArchiver func()
	mode                     string
	pools                    []client.Pool
	mu                       sync.Mutex
}

func (w *flagWorkers) apply(ctx context.Context, f marconi.Flags) {
	GinkgoHelper()
	if f.RedisStreamWriter && w.stopWriter == nil {
		w.stopWriter = run(w.writer.Run)
	}
	if !f.RedisStreamWriter && w.stopWriter != nil {
		w.stopWriter()
		w.stopWriter = nil
	}
	mode := archiverMode(f)
	if mode == w.mode {
		return
	}
	if w.stopArchiver != nil {
		w.stopArchiver()
		w.stopArchiver = nil
	}
	w.mode = mode
	if mode == "" {
		return
	}
	a, err := audit.NewArchiver(audit.ArchiverOptions{
		Dial: func(ctx context.Context) (client.Pool, error) {
			p, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: w.b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "marconi-flags-archiver"}))
			if err == nil {
				w.mu.Lock()
				w.pools = append(w.pools, p)
				w.mu.Unlock()
			}
			return p, err
		},
		PostgresDSN: pg.DSN(), Tenants: []string{w.tenant}, Consumer: w.tenant + "-" + mode + "-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Targets: audit.Targets{Shadow: mode == "shadow", Primary: mode == "primary"}, Metrics: w.metrics, Block: 200 * time.Millisecond, Timeout: time.Second,
		// NOTE: an XREADGROUP whose reply a stopping (or timed-out) consumer
		// never read leaves its entry in that consumer's pending list until
		// XAUTOCLAIM takes it (§4.2 recovery); 2 s instead of the default
		// 30 s keeps a mode flip's drain short. Time-scaled, like the TTLs.
		ClaimMinIdle: 2 * time.Second, ClaimEvery: 250 * time.Millisecond,
		OnError: func(e audit.PipelineError) { fmt.Fprintf(GinkgoWriter, "archiver (%s): %v\n", mode, e) },
	})
	Expect(err).NotTo(HaveOccurred())
	w.stopArchiver = run(func(ctx context.Context) error {
		err := a.Run(ctx)
		fmt.Fprintf(GinkgoWriter, "archiver (%s) returned: %v\n", mode, err)
		return err
	})
}

func (w *flagWorkers) close() {
	if w.stopWriter != nil {
		w.stopWriter()
	}
	if w.stopArchiver != nil {
		w.stopArchiver()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pools {
		_ = p.Close()
	}
}

// walkFlags runs one mesh through steps forward and back (rollback order)
// under traffic, and returns the ledger. Between phases it keeps the
// promises a careful operator keeps: the archiver has archived what was
// sent before its mode changes, and the writer has drained the audit queue
// before it stops.
func walkFlags(ctx context.Context, b client.Backend, name string, mutant marconi.Mutant, steps []marconi.StageStep) judge.StageFlagsLedger {
	GinkgoHelper()
	s := flagScaleOf()
	tenant := "flags-" + name
	const project = "walk"
	prefix := "mf-" + name
	clock := traffic.NewClock()
	rng := cfg.Rand("marconi-stage-flags/" + name)
	l := judge.StageFlagsLedger{MinSends: s.MinSends / 10}
	if name == "good" {
		l.MinSends = s.MinSends
	}

	// The mesh's pool keeps the clients' usual timeouts (not newPool's
	// 500 ms): Stage 1 and the legacy publish put Redis on the send path by
	// design, and a slow reply on a loaded machine is not a refused flag.
	cp, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "marconi-flags-" + name}))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Close)
	pool := marconi.Count(cp)
	metrics := audit.NewMetrics(nil)
	q, err := audit.NewQueue(audit.QueueOptions{Metrics: metrics})
	Expect(err).NotTo(HaveOccurred())
	writer, err := audit.NewWriter(audit.WriterOptions{Pool: newPool(ctx, b, "marconi-flags-writer-"+name), Queue: q, Metrics: metrics,
		OnError: func(e audit.PipelineError) { fmt.Fprintf(GinkgoWriter, "writer: %v\n", e) }})
	Expect(err).NotTo(HaveOccurred())
	w := &flagWorkers{b: b, tenant: tenant, queue: q, writer: writer, metrics: metrics}
	DeferCleanup(w.close)

	By(fmt.Sprintf("%s: every forbidden combination at start", name))
	examples := marconi.ForbiddenExamples()
	for _, rule := range sortedKeys(examples) {
		_, err := marconi.New(marconi.Options{Pool: pool, Sink: q, Flags: examples[rule], Mutant: mutant, Store: marconi.StoreOptions{Prefix: prefix, TTL: 10 * time.Minute}})
		l.Attempts = append(l.Attempts, attempt("start", examples[rule], rule, err))
	}

	first := steps[0].Flags
	// The walk sends no heartbeats: sessions live through it (10 min TTL),
	// so a route never lapses and expiry is the cache-lifecycle row's.
	store := marconi.StoreOptions{Prefix: prefix, TTL: 10 * time.Minute}
	env := startMeshAs(ctx, marconi.Options{Pool: pool, Sink: q, Flags: first, Mutant: mutant, Store: store})
	l.Attempts = append(l.Attempts, attempt("start", first, "", nil))
	w.apply(ctx, first)
	rec := workload.NewMeshRecorder(clock, env.api)
	recv := workload.NewMeshReceivers(rec, env.url)
	DeferCleanup(recv.Close)

	By(fmt.Sprintf("%s: %d attached receivers, %d offline, one probe identity", name, s.Attached, s.Offline))
	var attached, offline []marconi.RouteKey
	register := func(id string, connect bool) marconi.Session {
		sess, err := rec.Register(ctx, marconi.Session{SessionID: name + "-" + id, Tenant: tenant, Project: project, Identity: id})
		Expect(err).NotTo(HaveOccurred())
		if connect {
			Expect(recv.Connect(ctx, sess.SessionID)).To(Succeed())
		}
		return sess
	}
	for i := range s.Attached {
		attached = append(attached, register(fmt.Sprintf("a%02d", i), true).Route())
	}
	for i := range s.Offline {
		offline = append(offline, register(fmt.Sprintf("o%02d", i), false).Route())
	}
	probeOwn := register("probe", true)
	nobody := marconi.RouteKey{Tenant: tenant, Project: project, Identity: "nobody"}
	recipients := append(append(append([]marconi.RouteKey(nil), attached...), offline...), nobody)

	By(fmt.Sprintf("%s: traffic from %d senders for the whole walk", name, s.Senders))
	sendCtx := ctx // a send is never cut short by the stop: an answer cut off is not the mesh's failure
	stopTraffic := run(func(ctx context.Context) error {
		var wg sync.WaitGroup
		for i := range s.Senders {
			r := rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					k := recipients[r.IntN(len(recipients))]
					_, _ = rec.Send(sendCtx, marconi.SendRequest{Tenant: k.Tenant, Project: k.Project, Recipient: k.Identity, Sender: fmt.Sprintf("s%d", i), Kind: "walk", Payload: []byte(strconv.Itoa(n))})
					select {
					case <-ctx.Done():
					case <-time.After(s.SendEvery):
					}
				}
			})
		}
		wg.Wait()
		return nil
	})

	// The phases: steps forward, then back down to the first.
	plan := append([]marconi.StageStep(nil), steps...)
	for i := len(steps) - 2; i >= 0; i-- {
		back := steps[i]
		back.Name = "rollback to " + back.Name
		plan = append(plan, back)
	}
	otherWriter := marconi.NewSessionStore(pool, store)
	current := first
	for i, step := range plan {
		begin := clock.Now()
		if i > 0 {
			if mode := archiverMode(current); mode != "" && mode != archiverMode(step.Flags) {
				waitArchived(ctx, pool, tenant, rec, begin) // what was sent before the mode changes is in its mode's table
			}
			err := env.mesh.SetFlags(step.Flags)
			l.Attempts = append(l.Attempts, attempt("set-flags", step.Flags, "", err))
			if err == nil && current.RedisStreamWriter && !step.Flags.RedisStreamWriter {
				Eventually(ctx, func() int { return q.Stats(tenant).Depth }).WithTimeout(10*time.Second).WithPolling(20*time.Millisecond).
					Should(BeZero(), "the writer drains the audit queue before it stops")
			}
			w.apply(ctx, step.Flags)
			current = step.Flags
		}
		applied := clock.Now()
		io0 := pool.Counts().HotPath
		l.Probes = append(l.Probes, probe(ctx, env.mesh, rec, otherWriter, probeOwn, len(l.Phases)))
		if i == 0 {
			By(fmt.Sprintf("%s: every forbidden combination as a flip of the running mesh", name))
			for _, rule := range sortedKeys(examples) {
				err := env.mesh.SetFlags(examples[rule])
				l.Attempts = append(l.Attempts, attempt("set-flags", examples[rule], rule, err))
				if err == nil { // the mutant took it: put the phase's flags back
					Expect(env.mesh.SetFlags(current)).To(Succeed())
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.Dwell):
		}
		f := step.Flags
		l.Phases = append(l.Phases, judge.FlagPhase{Name: step.Name, Flags: f.String(), Begin: begin, Applied: applied,
			RoutingReads: f.RoutingTableReads, RegistrationReads: f.RegistrationTableReads, HotPathSend: f.HotPathSend,
			AuditQueueWrite: f.AuditQueueWrite, Obligations: f.ObligationsMemoryPrimary, Archiver: archiverMode(f),
			HotPathIO: pool.Counts().HotPath - io0})
	}
	stopTraffic()
	end := clock.Now()

	By(fmt.Sprintf("%s: deliveries settle, every recipient's pending queue is drained", name))
	settle, cancel := context.WithTimeout(ctx, 10*time.Second)
	workload.AwaitDeliveries(settle, rec, "pushed")
	cancel()
	for _, k := range append(recipients, probeOwn.Route()) {
		envs, err := env.api.Pending(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range envs {
			l.Pulled = append(l.Pulled, judge.MeshDelivery{SignalID: e.SignalID, SessionID: k.String(), At: clock.Now()})
		}
	}
	l.Mesh = rec.History()
	l.Mesh.End = end
	for i := range l.Phases {
		until := end
		if i+1 < len(l.Phases) {
			until = l.Phases[i+1].Begin
		}
		for _, snd := range l.Mesh.Sends {
			if snd.OK() && snd.Start >= l.Phases[i].Applied && snd.Done <= until {
				l.Phases[i].Sends++
			}
		}
	}
	l.Stream, err = traffic.ReadAuditStream(ctx, pool, tenant)
	Expect(err).NotTo(HaveOccurred())
	l.Canonical, err = traffic.ReadAuditCounts(ctx, pg.DirectDSN(), "public", audit.TableQueue)
	Expect(err).NotTo(HaveOccurred())
	l.Shadow, err = traffic.ReadAuditCounts(ctx, pg.DirectDSN(), "public", audit.TableQueueShadow)
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "%s: %d phases, %d sends, %d deliveries, %d pulled, %d stream entries, %d attempts\n",
		name, len(l.Phases), len(l.Mesh.Sends), len(l.Mesh.Deliveries), len(l.Pulled), len(l.Stream), len(l.Attempts))
	return l
}

// probe sends one signal, with an obligation, to the probe identity while
// another writer of the SessionStore holds a newer registration of it that
// no hook of this mesh saw; the store then names the newer session, the
// table the mesh's own. The other writer releases it after.
func probe(ctx context.Context, mesh *marconi.Mesh, rec *workload.MeshRecorder, store *marconi.SessionStore, own marconi.Session, phase int) judge.FlagProbe {
	GinkgoHelper()
	now := time.Now()
	other := marconi.Session{SessionID: own.SessionID + "-elsewhere-" + strconv.Itoa(phase), Tenant: own.Tenant, Project: own.Project, Identity: own.Identity,
		RegisteredAt: now.Add(time.Hour), LastHeartbeat: now}
	Expect(store.Register(ctx, other)).To(Succeed())
	res, err := rec.Send(ctx, marconi.SendRequest{Tenant: own.Tenant, Project: own.Project, Recipient: own.Identity, Sender: "probe", Kind: "probe",
		Obligation: &marconi.ObligationRequest{Kind: "probe", AckSLASeconds: 3600, TerminalSLASeconds: 3600}})
	p := judge.FlagProbe{Phase: phase, SignalID: res.SignalID, StoreSession: other.SessionID, TableSession: own.SessionID, Got: res.SessionID, Status: 200, WantObligation: true}
	if err != nil {
		p.Status = 0
		var api *marconi.APIError
		if errors.As(err, &api) {
			p.Status = api.Status
		}
	}
	_, p.Obligation = mesh.Obligation(res.SignalID)
	_, err = store.Release(ctx, other.Tenant, other.SessionID)
	Expect(err).NotTo(HaveOccurred())
	Expect(store.Unroute(ctx, other.Tenant, other.Project, other.Identity, other.SessionID)).To(Succeed())
	return p
}

// waitArchived waits until every send done before `before` that the audit
// queue kept is in PostgreSQL (either table): the archiver of the phase
// that is ending has archived its phase.
func waitArchived(ctx context.Context, pool client.Pool, tenant string, rec *workload.MeshRecorder, before time.Duration) {
	GinkgoHelper()
	var want []string
	for _, s := range rec.History().Sends {
		if s.OK() && s.AuditKept && s.Done < before {
			want = append(want, s.SignalID)
		}
	}
	// Every kept send counts as missing until a read of PostgreSQL says
	// otherwise: a wait whose reads all failed proves nothing archived.
	missing := slices.Clone(want)
	// A bound passing is reported below, with what was missing.
	_ = wait.Within(ctx, 30*time.Second, 50*time.Millisecond, func(ctx context.Context) error {
		canon, err1 := traffic.ReadAuditCounts(ctx, pg.DirectDSN(), "public", audit.TableQueue)
		shadow, err2 := traffic.ReadAuditCounts(ctx, pg.DirectDSN(), "public", audit.TableQueueShadow)
		if ctx.Err() == nil {
			Expect(errors.Join(err1, err2)).NotTo(HaveOccurred())
		} else if err := errors.Join(err1, err2); err != nil {
			return err
		}
		missing = missing[:0]
		for _, id := range want {
			if canon[id]+shadow[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d kept sends not archived", len(missing))
		}
		return nil
	})
	if len(missing) > 0 {
		stream, _ := traffic.ReadAuditStream(ctx, pool, tenant)
		g, err := traffic.ReadAuditGroup(ctx, pool, tenant, audit.DefaultGroup)
		total, dups := 0, 0
		for _, n := range stream {
			total += n
			if n > 1 {
				dups++
			}
		}
		fmt.Fprintf(GinkgoWriter, "group: %+v %v; %d kept sends before the flip, stream %d entries, %d distinct, %d duplicated\n", g, err, len(want), total, len(stream), dups)
		for _, id := range missing[:min(5, len(missing))] {
			fmt.Fprintf(GinkgoWriter, "not archived: %s (stream entries %d)\n", id, stream[id])
		}
	}
	Expect(missing).To(BeEmpty(), "the archiver archives its phase before its mode changes")
}

func attempt(where string, f marconi.Flags, rule string, err error) judge.FlagAttempt {
	a := judge.FlagAttempt{Where: where, Flags: f.String(), Rule: rule}
	if err != nil {
		a.Err = err.Error()
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
