package fencingmigration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

var _ = Describe("fencing-migration trace conformance", func() {
	harness.Emit(harness.Scenario{
		Name: "fencing-migration/trace-conformance", Row: row, Column: report.ColumnSilentlyWrong,
		Spec: "the explicit-state model (model/, the TLA+ model's Go counterpart) and the real O/A/B/C scripts, backfill and reverse merge agree step by step: both lease keys and both counters after every action; the read actions (lookup, known_generation, validate_fenced_header) of every phase on every reachable keyspace agree with the model's read rules, which tell the authority's truth in every reachable state (000 §Mechanized verification, §Per-phase operation table)",
		Run:  traceConformance,
	})
})

// traceSize is the replay's scale per profile.
type traceSize struct {
	depth        int // every action sequence of this length from Init
	walks, steps int // seeded random walks × steps each
	minSteps     int // below this the check is blind
}

func traceScale() traceSize {
	if cfg.Profile == harness.ProfileFull {
		return traceSize{depth: 6, walks: 40, steps: 250, minSteps: 10_000}
	}
	return traceSize{depth: 5, walks: 10, steps: 100, minSteps: 2_000}
}

// walkMaxGen lifts the model's finiteness bound for the long random walks;
// the real counters have none.
const walkMaxGen = 1 << 20

// traceConformance replays model behaviours against the real scripts on
// the standalone node (disabled mode, where A/B legally run) and compares
// the real keyspace with the model after every step:
//
//   - every action sequence of a small depth from Init;
//   - seeded random long walks (held acquires included);
//   - every distinct keyspace transition of the reachable state space, each
//     from the model state loaded into a fresh session (so a divergence
//     comes with a shortest trace, BFS order);
//   - for the script mutants M1–M3 and M5, the mutant model against the
//     mutant scripts (the model and fencing.ForPhaseMutant share one
//     switch, MigrationMutant.ScriptPhase).
//
// Negative controls: the correct model against each mutant script set must
// diverge.
func traceConformance(ctx SpecContext) report.Check {
	Expect(standalone.Reset(ctx)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(standalone.Reset(ctx)).To(Succeed()) })
	pool := harness.Pool(ctx, cfg.Backends[0], standalone)
	name := "fencing-migration/trace-conformance"
	rng := cfg.Rand(name)
	sz := traceScale()
	ev := harness.Evidence(cfg, standalone, pool)
	began := time.Now()

	correct, err := model.New(model.Config{})
	Expect(err).NotTo(HaveOccurred())
	walker, err := model.New(model.Config{MaxGen: walkMaxGen})
	Expect(err).NotTo(HaveOccurred())
	replay := newReplayer(pool, fencing.MutantNone, fmt.Sprintf("tc%x", rng.Uint32()))

	By(fmt.Sprintf("every action sequence of length %d from Init, compared after every step", sz.depth))
	seqs, seqDiv := replay.sequences(ctx, correct, sz.depth)
	seqSteps := replay.steps
	By(fmt.Sprintf("%d seeded random walks of %d steps", sz.walks, sz.steps))
	walkDiv := replay.walks(ctx, walker, rng, sz.walks, sz.steps)
	walkSteps := replay.steps - seqSteps
	By("every distinct keyspace transition of the reachable state space (BFS order)")
	reachable := correct.Reachable()
	edges, edgeDiv := replay.transitions(ctx, correct, reachable, true)

	var div *traceDivergence
	for _, d := range []*traceDivergence{edgeDiv, seqDiv, walkDiv} {
		if d != nil && (div == nil || len(d.trace.Steps) < len(div.trace.Steps)) {
			div = d
		}
	}
	divModel := correct
	if div == walkDiv && div != nil {
		divModel = walker
	}

	By("the mutant models against the mutant scripts (one mutant switch), and the controls")
	var controls []report.Control
	var sameSwitch []string
	for _, mu := range fencing.MigrationMutants {
		if !mu.Script() {
			continue
		}
		mm, err := model.New(model.Config{Mutant: mu})
		Expect(err).NotTo(HaveOccurred())
		bad := newReplayer(pool, mu, fmt.Sprintf("tc%s%x", mu, rng.Uint32()))
		n, d := bad.transitions(ctx, mm, mm.Reachable(), true)
		if d != nil && div == nil {
			div, divModel = d, mm
		}
		sameSwitch = append(sameSwitch, fmt.Sprintf("%s model = %s scripts over %d transitions (%s)", mu, mu, n, verdictOf(d)))

		_, d = bad.transitions(ctx, correct, reachable, false)
		sr := judge.ScriptReplay{Scripts: string(mu), Divergence: d.record(correct)}
		if mu == fencing.M3 {
			walkBad := newReplayer(pool, mu, fmt.Sprintf("tcw%x", rng.Uint32()))
			sr.Walked, sr.Walk = true, walkBad.walks(ctx, walker, cfg.Rand(name+"/M3"), sz.walks, sz.steps).record(nil)
		}
		r := judge.ScriptsDiverge.Judge(sr)
		ctl := harness.Variant(string(mu)+"-scripts", fmt.Sprintf("real scripts ForPhaseMutant(·, %s) against the correct model: the replay must diverge (the spec's %s)", mu, mu.Trips()), r)
		if r.Counterexample != "" {
			ctl.Observed += "; shortest divergent trace:\n" + r.Counterexample
		}
		controls = append(controls, ctl)
	}

	// The guard probes' own controls: C scripts whose renew or release
	// guard is broken change no key along any model action, so only the
	// probes can see them (regression of the slotgate mutate survivors).
	for _, gm := range []fencing.Mutant{fencing.MutantRenewIgnoresGeneration, fencing.MutantReleaseUnguarded} {
		scripts, err := fencing.WithPauseMutant(gm)
		if err != nil {
			scripts, err = fencing.WithMutant(gm)
		}
		Expect(err).NotTo(HaveOccurred())
		bad := newReplayer(pool, fencing.MutantNone, fmt.Sprintf("tg%s%x", gm, rng.Uint32()))
		bad.dirs[fencing.C] = fencing.New(pool, fencing.Options{Scripts: scripts, LeaseTTL: time.Hour})
		_, d := bad.transitions(ctx, correct, reachable, false)
		r := judge.ScriptsDiverge.Judge(judge.ScriptReplay{Scripts: string(gm) + " C", Divergence: d.record(nil)})
		controls = append(controls, harness.Variant(string(gm)+"-guard-probe", "C "+string(gm)+": the owner+generation guard of renew/release broken, no key written differently along any model action; the guard probes after each acquire must see it", r))
	}
	// The O/A/B renew and release mutants: a guard broken in a cross-slot phase
	// (the guard probes), and B's renew-migrate changing the lease it moves
	// (MigrateB's keyspace). B's release that never falls back to the old
	// key is release-handover's control: no model action releases.
	for _, lm := range traceLeaseMutants {
		p, err := fencing.LeaseMutantPhase(lm)
		Expect(err).NotTo(HaveOccurred())
		scripts, err := cfg.ScriptSet().WithLeaseMutant(lm)
		Expect(err).NotTo(HaveOccurred())
		bad := newReplayer(pool, fencing.MutantNone, fmt.Sprintf("tl%s%x", lm, rng.Uint32()))
		bad.dirs[p] = fencing.New(pool, fencing.Options{Scripts: scripts, LeaseTTL: time.Hour})
		_, d := bad.transitions(ctx, correct, reachable, false)
		r := judge.ScriptsDiverge.Judge(judge.ScriptReplay{Scripts: string(lm) + " " + string(p), Divergence: d.record(correct)})
		ctl := harness.Variant(string(lm), traceLeaseWhy[lm], r)
		if r.Counterexample != "" {
			ctl.Observed += "; shortest divergent trace:\n" + r.Counterexample
		}
		controls = append(controls, ctl)
	}

	total := seqSteps + walkSteps
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("%d action sequences of length %d (%d steps), %d random walks (%d steps), %d distinct keyspace transitions of %d reachable states", seqs, sz.depth, seqSteps, sz.walks, walkSteps, edges, len(reachable.States)),
		strings.Join(sameSwitch, "; "),
		fmt.Sprintf("replay wall time %v", time.Since(began).Round(time.Millisecond)))
	result := judge.TraceConformance.Judge(judge.TraceReplay{Steps: total, Transitions: edges, MinSteps: sz.minSteps, Divergence: div.record(divModel)})
	By("the read actions: every reachable keyspace × every phase's lookup and validate, against the model's read rules")
	readRes, readControls, readObserved := traceReads(ctx, pool, correct, reachable, fmt.Sprintf("tr%x", rng.Uint32()))
	ev.Observed = append(ev.Observed, readObserved...)
	controls = append(controls, readControls...)
	// The replay compares keyspaces, which no mode door changes: the gate's
	// own door decisions are judged over the same reachable state space.
	doors := judge.GateDoors.Judge(doorSteps(correct, reachable))
	ev.Observed = append(ev.Observed, "gate doors: "+doors.Message)
	result = check.All("fencing-migration/trace-conformance", result, readRes, doors)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

// traceLeaseMutants are the O/A/B renew and release mutants the replay must see, each
// in place of its own phase's renew (fencing.WithLeaseMutant).
var traceLeaseMutants = []fencing.Mutant{fencing.MutantORenewIgnoresGeneration, fencing.MutantARenewIgnoresGeneration, fencing.MutantOReleaseIgnoresGeneration, fencing.MutantBRenewIgnoresGeneration, fencing.MutantBReleaseIgnoresGeneration, fencing.MutantBRenewMigrateReissues, fencing.MutantBRenewMigrateKeepsOld}

var traceLeaseWhy = map[fencing.Mutant]string{
	fencing.MutantORenewIgnoresGeneration:   "real O renew guarded by the owner only (lua/mutants/lease): a renew naming the owner's other generation extends the lease; the guard probes after each O acquire must see it (000 §Per-phase operation table, renew owner+generation guarded)",
	fencing.MutantARenewIgnoresGeneration:   "real A renew guarded by the owner only: as O's, probed after each A acquire",
	fencing.MutantOReleaseIgnoresGeneration: "real O release guarded by the owner only: a release naming the owner's other generation frees the lease; probed after each O acquire",
	fencing.MutantBRenewIgnoresGeneration:   "real B renew whose in-place branch is guarded by the owner only: probed after each B acquire (the lease on the new key)",
	fencing.MutantBReleaseIgnoresGeneration: "real B release guarded by the owner only, on both keys: probed after each B acquire",
	fencing.MutantBRenewMigrateReissues:     "real B renew whose migrate issues max(old,new)+1 for the moved lease instead of keeping its generation: MigrateB's new lease and counter must diverge from the model's (000 §The protocol, B: same owner, same generation, no issuance)",
	fencing.MutantBRenewMigrateKeepsOld:     "real B renew whose migrate copies the lease to the new key and never deletes the old one (two live leases): MigrateB's old key must diverge from the model's (000 §The protocol, B: one atomic move)",
}

// doorSteps lists every mode change impl/gate allows in the model's
// reachable state space (the model asks the real gate for each decision).
func doorSteps(m *model.Model, g *model.Graph) []judge.DoorStep {
	var out []judge.DoorStep
	for _, s := range g.States {
		fleetC := true
		for i := range m.Config().Pods {
			fleetC = fleetC && s.Pods[i] == fencing.C
		}
		for _, t := range m.Successors(s) {
			if t.Next.Gate.Mode != s.Gate.Mode {
				out = append(out, judge.DoorStep{Action: string(t.Action.Kind), From: string(s.Gate.Mode), To: string(t.Next.Gate.Mode), FleetC: fleetC})
			}
		}
	}
	return out
}

func verdictOf(d *traceDivergence) string {
	if d == nil {
		return "agree"
	}
	return "DIVERGED: " + d.summary()
}

// replayer runs model actions against the real scripts of one script
// mutant (MutantNone: the correct scripts), one fresh session per behaviour.
type replayer struct {
	pool   client.Pool
	dirs   map[fencing.Phase]*fencing.Directory
	prefix string
	n      int
	steps  int
}

func newReplayer(pool client.Pool, mu fencing.MigrationMutant, prefix string) *replayer {
	r := &replayer{pool: pool, dirs: map[fencing.Phase]*fencing.Directory{}, prefix: prefix}
	for _, p := range fencing.Phases {
		// An hour-long TTL: expiry is the model's explicit Expire (a DEL),
		// never the clock, so the replay is deterministic.
		r.dirs[p] = fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().PhaseMutant(p, mu), LeaseTTL: time.Hour})
	}
	return r
}

func (r *replayer) fresh() fencing.Session {
	r.n++
	return fencing.Session{Community: "trace", ID: r.prefix + "-" + strconv.Itoa(r.n)}
}

// traceDivergence is the first step where the real node and the model
// disagree, with the model's trace up to and including that step.
type traceDivergence struct {
	trace     model.Trace
	want, got model.Keyspace
	wantEff   model.Effect
	gotEff    model.Effect
	err       error
}

func (d *traceDivergence) summary() string {
	last := d.trace.Steps[len(d.trace.Steps)-1]
	if d.err != nil {
		return fmt.Sprintf("%s failed: %v", last.Action, d.err)
	}
	if d.want != d.got {
		return fmt.Sprintf("after %s the model has %s, the node %s", last.Action, d.want, d.got)
	}
	return fmt.Sprintf("%s replied %+v, the model %+v", last.Action, d.gotEff, d.wantEff)
}

func (d *traceDivergence) format(m *model.Model) string {
	return m.FormatTrace(d.trace) + "diverged: " + d.summary() + "\n"
}

// record is the divergence as the checkers judge it (judge.TraceDivergence),
// its trace rendered by m (nil: not shown); nil for no divergence.
func (d *traceDivergence) record(m *model.Model) *judge.TraceDivergence {
	if d == nil {
		return nil
	}
	r := &judge.TraceDivergence{Steps: len(d.trace.Steps), What: d.summary()}
	if m != nil {
		r.Trace = d.format(m)
	}
	return r
}

// step replays one model transition on session s and compares.
func (r *replayer) step(ctx context.Context, s fencing.Session, pre model.State, a model.Action) (model.Effect, model.Keyspace, error) {
	r.steps++
	got, err := r.apply(ctx, s, pre, a)
	if err != nil {
		return got, model.Keyspace{}, err
	}
	ks, err := r.read(ctx, s)
	return got, ks, err
}

func sameEffect(a model.Action, want, got model.Effect) bool {
	switch a.Kind {
	case model.Acquire:
		return want.Acquired == got.Acquired && want.Held == got.Held && want.Gen == got.Gen
	case model.MigrateB:
		return want.Migrated == got.Migrated
	}
	return true
}

// behaviour replays transitions one after another on a fresh session and
// returns the first divergence.
func (r *replayer) behaviour(ctx context.Context, init model.State, ts []model.Transition) *traceDivergence {
	s := r.fresh()
	pre := init
	for i, t := range ts {
		eff, ks, err := r.step(ctx, s, pre, t.Action)
		if err != nil || ks != t.Next.Keyspace() || !sameEffect(t.Action, t.Effect, eff) {
			return &traceDivergence{trace: traceOf(init, ts[:i+1]), want: t.Next.Keyspace(), got: ks, wantEff: t.Effect, gotEff: eff, err: err}
		}
		pre = t.Next
	}
	return nil
}

func traceOf(init model.State, ts []model.Transition) model.Trace {
	tr := model.Trace{Init: init}
	for _, t := range ts {
		tr.Steps = append(tr.Steps, model.Step{Action: t.Action, Effect: t.Effect, State: t.Next})
	}
	return tr
}

// sequences replays every behaviour of exactly depth actions from Init (or
// shorter where nothing is enabled), keeping the shortest divergence.
func (r *replayer) sequences(ctx context.Context, m *model.Model, depth int) (int, *traceDivergence) {
	var best *traceDivergence
	n := 0
	var walk func(s model.State, path []model.Transition)
	walk = func(s model.State, path []model.Transition) {
		succ := m.Successors(s)
		if len(path) == depth || len(succ) == 0 {
			n++
			if d := r.behaviour(ctx, m.Init(), path); d != nil && (best == nil || len(d.trace.Steps) < len(best.trace.Steps)) {
				best = d
			}
			return
		}
		for _, t := range succ {
			walk(t.Next, append(path[:len(path):len(path)], t))
		}
	}
	walk(m.Init(), nil)
	return n, best
}

// walks replays seeded random behaviours; one in eight steps is an acquire
// by a random pod whatever the lease (so the scripts' "held" reply is
// compared too). It returns the first divergence.
func (r *replayer) walks(ctx context.Context, m *model.Model, rng *rand.Rand, walks, steps int) *traceDivergence {
	for w := 0; w < walks; w++ {
		s := m.Init()
		var path []model.Transition
		for len(path) < steps {
			var t model.Transition
			if rng.IntN(8) == 0 {
				a := model.Action{Kind: model.Acquire, Pod: 1 + rng.IntN(m.Config().Pods)}
				next, eff, ok := m.Apply(s, a)
				if !ok {
					continue
				}
				t = model.Transition{Action: a, Effect: eff, Next: next}
			} else {
				succ := m.Successors(s)
				if len(succ) == 0 {
					break
				}
				t = succ[rng.IntN(len(succ))]
			}
			path = append(path, t)
			s = t.Next
		}
		if d := r.behaviour(ctx, m.Init(), path); d != nil {
			return d
		}
	}
	return nil
}

// transitions checks every distinct keyspace transition of m's reachable
// state space: what the real node sees is the keyspace, the script (the
// actor's phase) and the owner, so one check per distinct (keyspace,
// action, actor phase) covers every state sharing them. Each is run from
// the model state loaded into a fresh session; BFS order makes the first
// divergence a shortest one. With all false it stops at the first.
func (r *replayer) transitions(ctx context.Context, m *model.Model, reachable *model.Graph, all bool) (int, *traceDivergence) {
	type key struct {
		ks    model.Keyspace
		a     model.Action
		phase fencing.Phase
	}
	seen := map[key]bool{}
	var first *traceDivergence
	for i, pre := range reachable.States {
		for _, a := range m.Actions() {
			if !a.Writes() {
				continue
			}
			next, eff, ok := m.Apply(pre, a)
			if !ok {
				continue
			}
			k := key{ks: pre.Keyspace(), a: a}
			if a.Pod > 0 {
				k.phase = pre.Pods[a.Pod-1]
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			s := r.fresh()
			err := r.load(ctx, s, pre.Keyspace())
			var got model.Effect
			var ks model.Keyspace
			if err == nil {
				got, ks, err = r.step(ctx, s, pre, a)
			}
			if err != nil || ks != next.Keyspace() || !sameEffect(a, eff, got) {
				d := &traceDivergence{trace: reachable.Trace(i), want: next.Keyspace(), got: ks, wantEff: eff, gotEff: got, err: err}
				d.trace.Steps = append(d.trace.Steps, model.Step{Action: a, Effect: eff, State: next})
				if first == nil {
					first = d
				}
				if !all {
					return len(seen), first
				}
			}
		}
	}
	return len(seen), first
}

// guardProbe probes the owner+generation guards of phase's renew and
// release (spec 000 §Per-phase operation table: "owner+generation
// guarded") right after owner acquired at gen: a renew or release naming
// another owner or another generation is a no-op; the owner's own renew
// succeeds and its release frees the lease, which is then restored as it
// was, so the step's keyspace comparison is unchanged. The model has no
// renew or release action (neither issues anything; a lease ends by Expire),
// so without these probes a renew that never renews, or a release that frees
// whatever it finds, replays in step with the model — `slotgate mutate`
// found exactly those survivors (docs/MUTATION.md).
func (r *replayer) guardProbe(ctx context.Context, phase fencing.Phase, s fencing.Session, pre model.State, pod int, gen int64) error {
	d, owner := r.dirs[phase], model.PodName(pod)
	lease := fencing.NewKeys(s).Lease
	if phase == fencing.O || phase == fencing.A { // O and A hold the lease on the old key
		lease = fencing.OldKeys(s).Lease
	}
	// The lease TTL the scripts were given (the replayer's hour): a lease
	// just set or renewed has more than half of it left and never more —
	// a TTL scaled, or dropped (PTTL -1), breaks the lease's expiry, which
	// the model takes as given (Expire).
	ttl := func(after string) error {
		reply, err := r.pool.Do(ctx, client.NewCmd("PTTL", []string{lease}))
		ms, cerr := client.AsInt64(reply)
		if full := time.Hour.Milliseconds(); err != nil || cerr != nil || ms <= full/2 || ms > full {
			return fmt.Errorf("guard probe (%s): after %s, %s has PTTL %v ms, want within (%d, %d] (err %v)", phase, after, lease, reply, full/2, full, errors.Join(err, cerr))
		}
		return nil
	}
	if err := ttl("the acquire"); err != nil {
		return err
	}
	for _, bad := range []struct {
		owner string
		gen   int64
	}{{owner + "-other", gen}, {owner, gen + 1}, {owner, gen - 1}} {
		if bad.owner == owner && (pre.Old == model.Lease{Owner: pod, Gen: int(bad.gen)} || pre.New == model.Lease{Owner: pod, Gen: int(bad.gen)}) {
			continue // the pod's own older lease in the other keyspace: not a wrong name
		}
		if ok, err := d.Renew(ctx, s, bad.owner, bad.gen); err != nil || ok {
			return fmt.Errorf("guard probe (%s): renew as %s at gen %d of %s's lease at gen %d: renewed=%v, err=%v", phase, bad.owner, bad.gen, owner, gen, ok, err)
		}
		if ok, err := d.Release(ctx, s, bad.owner, bad.gen); err != nil || ok {
			return fmt.Errorf("guard probe (%s): release as %s at gen %d of %s's lease at gen %d: released=%v, err=%v", phase, bad.owner, bad.gen, owner, gen, ok, err)
		}
	}
	if ok, err := d.Renew(ctx, s, owner, gen); err != nil || !ok {
		return fmt.Errorf("guard probe (%s): %s's renew of its own live lease at gen %d: renewed=%v, err=%v", phase, owner, gen, ok, err)
	}
	if err := ttl("the owner's renew"); err != nil {
		return err
	}
	if ok, err := d.Release(ctx, s, owner, gen); err != nil || !ok {
		return fmt.Errorf("guard probe (%s): %s's release of its own live lease at gen %d: released=%v, err=%v", phase, owner, gen, ok, err)
	}
	reply, err := r.pool.Do(ctx, client.NewCmd("EXISTS", []string{lease}))
	if n, cerr := client.AsInt64(reply); err != nil || cerr != nil || n != 0 {
		return fmt.Errorf("guard probe (%s): %s still exists (%v) after its owner released it, err=%v", phase, lease, reply, errors.Join(err, cerr))
	}
	_, err = r.pool.Do(ctx, client.Cmd{Prefix: []string{"SET"}, Keys: []string{lease}, Args: []string{strconv.FormatInt(gen, 10) + ":" + owner, "PX", strconv.FormatInt(time.Hour.Milliseconds(), 10)}})
	return err
}

// apply runs action a of the model on the real node: the actor's phase
// script for Acquire, B's renew for MigrateB, a DEL for lease loss, the
// real backfill and reverse merge. Fleet, gate and mode steps touch no key.
func (r *replayer) apply(ctx context.Context, s fencing.Session, pre model.State, a model.Action) (model.Effect, error) {
	owner := model.PodName(a.Pod)
	switch a.Kind {
	case model.Acquire:
		phase := pre.Pods[a.Pod-1]
		got, err := r.dirs[phase].Acquire(ctx, s, owner)
		if err != nil {
			return model.Effect{}, err
		}
		if got.OK {
			return model.Effect{Acquired: true, Gen: int(got.Generation)}, r.guardProbe(ctx, phase, s, pre, a.Pod, got.Generation)
		}
		return model.Effect{Held: true, Gen: int(got.Holder.Generation)}, nil
	case model.MigrateB:
		d := r.dirs[fencing.B]
		before := d.Stats().Migrations.Load()
		ok, err := d.Renew(ctx, s, owner, int64(pre.Old.Gen))
		return model.Effect{Migrated: ok && d.Stats().Migrations.Load() > before, Gen: pre.Old.Gen}, err
	case model.ExpireOld:
		_, err := r.pool.Do(ctx, client.NewCmd("DEL", []string{fencing.OldKeys(s).Lease}))
		return model.Effect{}, err
	case model.ExpireNew:
		_, err := r.pool.Do(ctx, client.NewCmd("DEL", []string{fencing.NewKeys(s).Lease}))
		return model.Effect{}, err
	case model.Backfill:
		_, err := cfg.ScriptSet().Backfill(ctx, r.pool, []fencing.Session{s})
		return model.Effect{}, err
	case model.ReverseMerge:
		_, err := cfg.ScriptSet().ReverseMerge(ctx, r.pool, []fencing.Session{s})
		return model.Effect{}, err
	}
	return model.Effect{}, nil
}

func traceKeys(s fencing.Session) []string {
	o, n := fencing.OldKeys(s), fencing.NewKeys(s)
	return []string{o.Lease, o.Generation, n.Lease, n.Generation}
}

// load writes a model keyspace into a fresh session (one MSET; the
// session's keys are all absent before).
func (r *replayer) load(ctx context.Context, s fencing.Session, ks model.Keyspace) error {
	keys := traceKeys(s)
	vals := []string{leaseValue(ks.Old), strconv.Itoa(ks.OldCtr), leaseValue(ks.New), strconv.Itoa(ks.NewCtr)}
	var args []string
	for i, v := range vals {
		if v != "" && v != "0" {
			args = append(args, keys[i], v)
		}
	}
	if len(args) == 0 {
		return nil
	}
	_, err := r.pool.Do(ctx, client.Cmd{Prefix: append([]string{"MSET"}, args...)})
	return err
}

func leaseValue(l model.Lease) string {
	if !l.Live() {
		return ""
	}
	return l.String()
}

var errTraceValue = errors.New("unexpected value in a fencing key")

// read returns the session's real keyspace (one MGET of all four keys).
func (r *replayer) read(ctx context.Context, s fencing.Session) (model.Keyspace, error) {
	reply, err := r.pool.Do(ctx, client.NewCmd("MGET", traceKeys(s)))
	if err != nil {
		return model.Keyspace{}, err
	}
	vals, isNil, err := client.AsStrings(reply)
	if err != nil || len(vals) != 4 {
		return model.Keyspace{}, fmt.Errorf("read keyspace of %s: %w: %v", s, errTraceValue, reply)
	}
	lease := func(i int) (model.Lease, error) {
		if isNil[i] {
			return model.Lease{}, nil
		}
		gen, owner, ok := strings.Cut(vals[i], ":")
		g, err1 := strconv.Atoi(gen)
		p, err2 := strconv.Atoi(strings.TrimPrefix(owner, "p"))
		if !ok || err1 != nil || err2 != nil || !strings.HasPrefix(owner, "p") || p < 1 {
			return model.Lease{}, fmt.Errorf("%w: lease %q", errTraceValue, vals[i])
		}
		return model.Lease{Owner: p, Gen: g}, nil
	}
	ctr := func(i int) (int, error) {
		if isNil[i] {
			return 0, nil
		}
		return strconv.Atoi(vals[i])
	}
	var ks model.Keyspace
	var e [4]error
	ks.Old, e[0] = lease(0)
	ks.OldCtr, e[1] = ctr(1)
	ks.New, e[2] = lease(2)
	ks.NewCtr, e[3] = ctr(3)
	return ks, errors.Join(e[:]...)
}
