package fencingmigration_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
	"github.com/slotgate/slotgate/rows/fencingmigration/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// Time scale: production renews every 10 s against a 30 s TTL
// (reliable.rs, audio/join.rs); the suite keeps the 1:3 ratio at 600 ms.
const (
	leaseTTL = 600 * time.Millisecond
	slack    = 20 * time.Millisecond
)

// size is the suite's scale per profile.
type size struct {
	sessions, pods        int // the staged deploy
	mutantSessions, mPods int // each mutant's run
	roll, killEvery, hold time.Duration
	// link faults of the staged deploy: latency ± jitter for a phase, and
	// a reset-peer cut of this length mid-phase.
	latency, jitter, reset time.Duration
}

func scale() size {
	if cfg.Profile == harness.ProfileFull {
		return size{sessions: 1200, pods: 12, mutantSessions: 240, mPods: 8, roll: 60 * time.Millisecond, killEvery: 300 * time.Millisecond, hold: 900 * time.Millisecond,
			latency: 4 * time.Millisecond, jitter: 3 * time.Millisecond, reset: 400 * time.Millisecond}
	}
	return size{sessions: 240, pods: 6, mutantSessions: 160, mPods: 6, roll: 50 * time.Millisecond, killEvery: 350 * time.Millisecond, hold: 500 * time.Millisecond,
		latency: 4 * time.Millisecond, jitter: 3 * time.Millisecond, reset: 300 * time.Millisecond}
}

// run is one staged deployment as data: its fleet, gate, and plan.
type run struct {
	name     string
	mutant   fencing.MigrationMutant
	sessions int
	pods     int
	cap      int // held sessions per pod lane; 0 = enough for the population
	kills    bool
	// reads runs the read-side probe beside the fleet (readside_test.go);
	// readMutant swaps the pods' own read scripts (a read-side control).
	reads      bool
	readMutant fencing.ReadMutant
	// grace is the longest a pod replaced by a rollout keeps renewing (its
	// termination grace): the operator's drain bound is traffic.DrainBound
	// of it and the TTL.
	grace time.Duration
	// Known-bad variants, each a negative control run on the node:
	// unboundedDrain runs the operator without a drain bound (waits for a
	// stuck pod until Timeout or the plan's context), keepBackfill the gate
	// that keeps the backfill across a rollback, merge a broken backfill.
	unboundedDrain bool
	keepBackfill   bool
	// ignoreTerminating runs the gate without rule 2(b), advanceMajority
	// the gate whose rule 2(a) asks only most pods (rollout_test.go).
	ignoreTerminating bool
	advanceMajority   bool
	merge             fencing.MergeMutant
	plan              func(ctx context.Context, r *staged) error
}

// staged is a run in progress and, afterwards, its record.
type staged struct {
	run
	probe *workload.ReadProbe // the read probe while the plan runs (run.reads)
	// allowedAt are the keyspaces as observed right after each step the
	// gate allowed: whether a mutant's plan reached the state its missing
	// check exists for (a control's premise).
	allowedAt []allowedSample
	rng       *rand.Rand
	sz        size
	op        *traffic.Operator
	fleet     *traffic.Fleet
	clock     *traffic.Clock
	history   []history.MigrationOp
	samples   []history.KeyspaceSample
	obsErrs   int
	elapsed   time.Duration
	backend   client.Backend
	sessions  []fencing.Session
	// faults are the link-fault windows injected on the pods' links, as
	// report data and as offsets on the scenario clock (for the checkers).
	faults []fault.Window
	spans  []check.Span
	// timerFrom are the starts of full-A holds longer than a TTL: where a
	// "wait one TTL" drain would be trusted (the timer-drain control).
	timerFrom []time.Duration
	// reads are the read-side probe's judged calls (when run.reads).
	reads     []history.ReadOp
	readStats workload.ReadProbeStats
	// killsPaused stops the seeded pod kills from the plan step that sets
	// it (pauseKills) to the end of the run.
	killsPaused atomic.Bool
	// planEnd is when the plan returned, on the run's clock.
	planEnd time.Duration
}

// coexistence is every stretch over which the observer saw pods of both
// phases a and b live at once (from the first sample of the stretch to the
// last), up to the end of the plan: the stopped fleet's pods stay in its
// gauges while the run shuts down.
func (r *staged) coexistence(a, b fencing.Phase) [][2]time.Duration {
	var out [][2]time.Duration
	open := false
	for _, s := range r.samples {
		if r.planEnd > 0 && s.At > r.planEnd {
			break
		}
		if s.Pods[string(a)] > 0 && s.Pods[string(b)] > 0 {
			if !open {
				out = append(out, [2]time.Duration{s.At, s.At})
				open = true
			}
			out[len(out)-1][1] = s.At
			continue
		}
		open = false
	}
	return out
}

// m8Window is M8's hazard window as the run saw it: the longest stretch
// over which A and C pods were live at once (coexistence), and how many
// successful acquires A pods began inside any such stretch.
func (r *staged) m8Window() (longest time.Duration, acquires int) {
	stretches := r.coexistence(fencing.A, fencing.C)
	for _, st := range stretches {
		longest = max(longest, st[1]-st[0])
	}
	for _, op := range r.history {
		if op.Kind != history.OpAcquire || !op.OK || op.Phase != string(fencing.A) {
			continue
		}
		if slices.ContainsFunc(stretches, func(st [2]time.Duration) bool { return op.Call >= st[0] && op.Call <= st[1] }) {
			acquires++
		}
	}
	return longest, acquires
}

func (r *staged) hold(ctx context.Context, d time.Duration) {
	var from map[traffic.Lane]int
	if r.probe != nil {
		from = r.probe.Judged()
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	// With the read probe on, the hold also lasts until every lane took
	// the read side's per-phase minimum of samples in it: the read side
	// needs reads in every stage and enough per phase, and under load a
	// fixed hold ended the first O stage with none (blind, "no read during
	// 0. O") or phase C with 4 lookups of the 20 needed (blind). A
	// quiet run takes them well inside the hold. Bounded, so a probe that
	// cannot read (every pod dead) does not stall the plan.
	if r.probe != nil {
		harness.WaitAtMost(ctx, readHoldMax, 10*time.Millisecond, func() bool { return r.probe.ReadSince(from, readMinPerCell()) })
	}
}

type allowedSample struct {
	step   string
	sample history.KeyspaceSample
}

// newLeasesAt says whether new-keyspace leases were live right after the
// gate allowed step (false when it never did).
func (r *staged) newLeasesAt(step string) bool {
	for _, a := range r.allowedAt {
		if a.step == step {
			return a.sample.NewLeases > 0
		}
	}
	return false
}

// readHoldMax bounds how long a hold waits beyond its time for the reads
// of every lane.
const readHoldMax = 20 * time.Second

// wait blocks until a rollout finished (every pod runs the phase).
func wait(ctx context.Context, done <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-done:
	}
}

// latency puts latency with jitter on every pod link (the standalone
// node's proxy) until the returned heal is called; the window is recorded.
func (r *staged) latency(ctx context.Context, f fault.Latency) (heal func() error, err error) {
	from := r.clock.Now()
	w, err := fault.Apply(ctx, standalone, f)
	if err != nil {
		return nil, err
	}
	return func() error {
		for _, n := range standalone.Nodes() {
			if err := n.RemoveToxics(ctx); err != nil {
				return fmt.Errorf("heal %s: %w", f.Name(), err)
			}
		}
		w = fault.Healed(ctx, w) // the latency stayed on until here
		w.Target = fmt.Sprintf("%s (%v ± %v)", w.Target, f.Latency, f.Jitter)
		r.recordFault(w, from)
		return nil
	}, nil
}

// resetPeer cuts every pod link with a TCP reset for d (the proxy refuses
// reconnects meanwhile); the operator's and observer's direct links stay up.
func (r *staged) resetPeer(ctx context.Context, d time.Duration) error {
	from := r.clock.Now()
	w, err := fault.Apply(ctx, standalone, fault.ResetPeer{Duration: d})
	if err != nil {
		return err
	}
	w.Target = fmt.Sprintf("%s for %v", w.Target, d)
	r.recordFault(w, from)
	return nil
}

func (r *staged) recordFault(w fault.Window, from time.Duration) {
	r.faults = append(r.faults, w)
	r.spans = append(r.spans, check.Span{Start: from, End: r.clock.Now()})
	fmt.Fprintf(GinkgoWriter, "%s: fault %s on %s during [%v, %v]\n", r.name, w.Fault, w.Target, from.Round(time.Millisecond), r.clock.Now().Round(time.Millisecond))
}

// step returns the n-th (1-based) allowed gate step named name.
func (r *staged) step(name string, n int) (traffic.Step, bool) {
	for _, s := range r.op.Steps {
		if s.Name == name && s.Allowed {
			if n--; n == 0 {
				return s, true
			}
		}
	}
	return traffic.Step{}, false
}

func (r *staged) advance(ctx context.Context, to fencing.Phase) error {
	done, err := r.op.Advance(ctx, to)
	if err == nil {
		wait(ctx, done)
		r.op.Marks["full-"+string(to)] = r.clock.Now()
	}
	return err
}

func (r *staged) rollback(ctx context.Context, to fencing.Phase) error {
	done, err := r.op.Rollback(ctx, to)
	if err == nil {
		wait(ctx, done)
		r.op.Marks["full-"+string(to)] = r.clock.Now()
	}
	return err
}

// backfillReplacing is the opening of the scenarios with a replaced A pod
// (spec 000 §Deployment Gate rules 2(b) and 3): O→A, then a hold of held
// while the pods take old-keyspace leases; B is asked, and as its rollout
// starts the last slot's A pod is replaced by a B pod under opts (how long
// it lingers, whether the rollout still lists it); at full B, the backfill.
func (r *staged) backfillReplacing(ctx context.Context, held time.Duration, opts traffic.ReplaceOptions) error {
	r.hold(ctx, leaseTTL/2)
	if err := r.advance(ctx, fencing.A); err != nil {
		return err
	}
	r.hold(ctx, held)
	done, err := r.op.Advance(ctx, fencing.B)
	if err != nil {
		return err
	}
	if _, err := r.fleet.Replace(r.fleet.Size()-1, fencing.B, opts); err != nil {
		return err
	}
	wait(ctx, done)
	_, err = r.op.Backfill(ctx)
	return err
}

// stage runs r on the standalone node: a fleet at O, the observer, a seeded
// kill schedule, and the plan driven through the Deployment Gate.
func stage(ctx context.Context, in run) *staged {
	GinkgoHelper()
	Expect(standalone.Reset(ctx)).To(Succeed())
	sz := scale()
	r := &staged{run: in, rng: cfg.Rand(in.name), sz: sz, clock: traffic.ClockOf(ctx), backend: cfg.Backends[0]}
	reliable := harness.Sessions(r.rng, "tunnel", in.sessions/2)
	huddle := harness.Sessions(r.rng, "huddle", in.sessions-in.sessions/2)
	r.sessions = append(append([]fencing.Session(nil), reliable...), huddle...)
	// The operator and the observer reach the node directly, not through
	// the proxy the pods use: link faults are on the pods' links, and the
	// oracle must not go blind while they last.
	admin := directPool(ctx, r.backend)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	fleet, err := traffic.NewFleet(runCtx, traffic.FleetOptions{
		Addr: standalone.Addrs()[0], Backend: r.backend, Pods: in.pods, Reliable: reliable, Huddle: huddle,
		TTL: leaseTTL, Acquires: 6, ReleaseP: 0.3, Cap: in.cap, Mutant: in.mutant, ReadMutant: in.readMutant, Set: cfg.ScriptSet(), Seed: r.rng.Uint64(),
	}, r.clock, fencing.O)
	Expect(err).NotTo(HaveOccurred())
	r.fleet = fleet
	obs := traffic.StartObserver(runCtx, admin, fleet, r.clock, r.sessions, 10*time.Millisecond)
	var drain time.Duration
	if !in.unboundedDrain {
		drain = traffic.DrainBound(leaseTTL, in.grace)
	}
	var merges *fencing.ScriptSet
	if in.merge != "" {
		merges, err = cfg.ScriptSet().WithMergeMutant(in.merge)
		Expect(err).NotTo(HaveOccurred())
	}
	r.op = &traffic.Operator{Fleet: fleet, Gate: gate.New(gate.Options{Mutant: in.mutant, KeepBackfill: in.keepBackfill,
		IgnoreTerminating: in.ignoreTerminating, AdvanceMajority: in.advanceMajority}), Admin: admin, Clock: r.clock,
		Roll: sz.roll, Poll: 20 * time.Millisecond, Timeout: 15 * time.Second, Drain: drain, Scripts: merges,
		Log: func(f string, a ...any) { fmt.Fprintf(GinkgoWriter, in.name+": "+f+"\n", a...) },
		// The observer's witness of what each gate decision saw (judge.OldKeyspaceDrained).
		OnAllowed: func(step string) {
			if smp, err := obs.Sample(runCtx); err == nil {
				r.allowedAt = append(r.allowedAt, allowedSample{step: step, sample: smp})
			}
		}}
	var probe *workload.ReadProbe
	if in.reads {
		probe = startReadProbe(runCtx, r, fleet, reliable, huddle)
		r.probe = probe
	}
	killsDone := make(chan struct{})
	killCtx, stopKills := context.WithCancel(runCtx)
	go func() {
		defer close(killsDone)
		if !in.kills {
			return
		}
		krng := cfg.Rand(in.name + "/kills")
		for {
			select {
			case <-killCtx.Done():
				return
			case <-time.After(sz.killEvery/2 + time.Duration(krng.Int64N(int64(sz.killEvery)))):
			}
			if r.killsPaused.Load() {
				continue
			}
			if err := fleet.Kill(krng.IntN(fleet.Size())); err != nil && killCtx.Err() == nil {
				fmt.Fprintf(GinkgoWriter, "%s: kill: %v\n", in.name, err)
			}
		}
	}()
	began := time.Now()
	planErr := in.plan(runCtx, r)
	r.planEnd = r.clock.Now()
	stopKills()
	<-killsDone
	if probe != nil {
		r.reads, r.readStats = probe.Stop()
	}
	fleet.Stop()
	r.samples, r.obsErrs = obs.Stop()
	r.elapsed = time.Since(began)
	r.history = fleet.History()
	if _, ok := fault.NotConfirmed(planErr); ok {
		// A latency or reset the harness could not inject: no verdict on the gate.
		harness.MustConfirm(planErr, cfg.Seed)
	}
	Expect(planErr).NotTo(HaveOccurred(), "%s: the plan could not complete through the gate", in.name)
	return r
}

// directPool opens a pool on the standalone node's own address, bypassing
// its toxiproxy proxy; it is closed when the current node ends.
func directPool(ctx context.Context, backend client.Backend) client.Pool {
	GinkgoHelper()
	p, err := client.NewPool(ctx, client.Options{Backend: backend, Mode: client.ModeSingle, Addrs: []string{standalone.Nodes()[0].DirectAddr()}, ClientName: "slotgate-operator"})
	Expect(err).NotTo(HaveOccurred(), "open the operator's direct pool")
	DeferCleanup(p.Close)
	return p
}

// invariants is the silently-wrong checker of the row: T1 from the
// recorded history and from the atomic observer, T2 across both counters.
func invariants(r *staged) check.Result {
	return check.All("fencing-migration-invariants",
		check.MigrationSingleAuthorityCheck.Judge(check.MigrationSingleAuthorityInput{Ops: r.history, TTL: leaseTTL, Slack: slack}),
		check.ObservedSingleAuthorityCheck.Judge(check.ObservedSingleAuthorityInput{Samples: r.samples, MinSamples: 20}),
		check.MigrationGenerationsCheck.Judge(r.history),
	)
}

func (r *staged) count(kind history.FencingOpKind, ok bool) int {
	n := 0
	for _, op := range r.history {
		if op.Kind == kind && op.OK == ok && !op.Unknown {
			n++
		}
	}
	return n
}
