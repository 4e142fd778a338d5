package traffic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
)

// Lane is one of the relay's two tunnel lanes; both run the same renewer
// against the same directory (spec 000 §The protocol: reliable.rs and
// audio/join.rs, 10 s renew against a 30 s TTL).
type Lane string

const (
	LaneReliable Lane = "reliable"
	LaneHuddle   Lane = "huddle"
)

// FleetOptions configures a relay pod fleet.
type FleetOptions struct {
	// Addr is the standalone node every pod's pool talks to (ModeSingle).
	Addr    string
	Backend client.Backend
	// Cluster, when set, are the seeds of a cluster every pod's pool
	// talks to instead (ModeCluster; C scripts only: A and B are
	// cross-slot).
	Cluster []string
	// Pool, when set, is what every pod's pool opens with instead of Addr
	// and Cluster (a primary behind Sentinels: ModeSentinel); Backend and
	// each pod's ClientName are set over it.
	Pool *client.Options
	// Durability puts every pod's directory in the durability mode
	// (fencing.Options.Durability): each script confirmed by WAIT.
	Durability fencing.Durability
	// Pods is the fleet size (the relay runs 15, HPA to 25).
	Pods int
	// Reliable and Huddle are each lane's session population; every pod
	// contends for every session of a lane.
	Reliable, Huddle []fencing.Session
	// TTL is the lease TTL; pods renew every TTL/3 (production 30 s / 10 s,
	// time-scaled keeping the ratio).
	TTL time.Duration
	// Acquires is how many random sessions a lane tries to take per tick.
	Acquires int
	// ReleaseP is the chance per tick that a lane releases one held session.
	ReleaseP float64
	// RenewRetry, when set, keeps a lease whose renew failed without an
	// answer (an error: the store failing over) and tries again every
	// RenewRetry until a renew is answered or the TTL since the last
	// acknowledged renew has run out — the point of a TTL of three renew
	// intervals. Zero drops the lease at the first failed renew.
	RenewRetry time.Duration
	// Cap bounds the sessions one lane of one pod holds; zero sizes it so
	// the fleet can hold the whole population.
	Cap int
	// Mutant is applied to every pod's scripts (script mutants only).
	Mutant fencing.MigrationMutant
	// ReadMutant is applied to every pod's read scripts (a read-side control).
	ReadMutant fencing.ReadMutant
	// Scripts, when set, gives each phase's scripts instead (a negative
	// control's known-bad variant of one phase); Mutant is then ignored.
	Scripts func(fencing.Phase) fencing.Scripts
	// Set is the script set the pods run (nil: impl's embedded set);
	// Mutant and ReadMutant are applied over it.
	Set  *fencing.ScriptSet
	Seed uint64
}

// Fleet is a set of simulated relay pods running the fencing directory
// under the phase each was rolled to, recording every call.
type Fleet struct {
	opts  FleetOptions
	clock *Clock

	mu      sync.Mutex
	pods    map[string]*Pod
	slots   []string // slot i's current pod name (a Deployment's replica)
	history []history.MigrationOp
	seq     int
	kills   int
	// startFailures counts replacement pods that could not reach the node
	// at first (a cut link) and retried.
	startFailures int
	pauses        []history.PodPause
	stragglers    []history.Straggler
	lingering     []*Pod // stragglers' pods, stopped by Stop if still lingering

	template   fencing.Phase // the Deployment's current pod template
	rollMu     sync.Mutex
	rollCancel context.CancelFunc
	rollDone   chan struct{}
	ctx        context.Context
}

// Pod is one relay pod: its own command pool, its current script phase
// (exported as the buzz_fencing_phase gauge) and two lanes of sessions.
type Pod struct {
	Name     string
	Metrics  *fencing.PodMetrics
	pool     client.Pool
	dir      atomic.Pointer[fencing.Directory]
	ctx      context.Context
	cancel   context.CancelFunc
	dead     atomic.Bool
	wg       sync.WaitGroup
	stopOnce sync.Once
	// freeze is non-nil while the pod is paused (pause.go): every worker
	// blocks on it before its next call.
	freezeMu  sync.Mutex
	freeze    chan struct{}
	frozenAt  time.Duration
	frozenDir *fencing.Directory
	// terminating: the pod left its Deployment and lingers in its grace
	// period (straggler.go): it takes no new session.
	terminating atomic.Bool
}

// Phase is the phase the pod's gauge reports.
func (p *Pod) Phase() fencing.Phase {
	ph, _ := p.Metrics.ReadPhase()
	return ph
}

// NewFleet starts opts.Pods pods at phase; clock is the scenario clock.
func NewFleet(ctx context.Context, opts FleetOptions, clock *Clock, phase fencing.Phase) (*Fleet, error) {
	f := &Fleet{opts: opts, clock: clock, pods: map[string]*Pod{}, ctx: ctx, template: phase}
	f.slots = make([]string, opts.Pods)
	for i := range f.slots {
		f.slots[i] = fmt.Sprintf("pod%d.none", i)
	}
	for i := range opts.Pods {
		if err := f.start(i, phase); err != nil {
			f.Stop()
			return nil, err
		}
	}
	return f, nil
}

func (f *Fleet) set() *fencing.ScriptSet {
	if f.opts.Set == nil {
		return fencing.Embedded()
	}
	return f.opts.Set
}

func (f *Fleet) directory(p *Pod, phase fencing.Phase) *fencing.Directory {
	scripts := f.set().PhaseMutant(phase, f.opts.Mutant)
	if f.opts.Scripts != nil {
		scripts = f.opts.Scripts(phase)
	}
	scripts = fencing.WithReadMutant(scripts, f.opts.ReadMutant)
	return fencing.New(p.pool, fencing.Options{Scripts: scripts, LeaseTTL: f.opts.TTL, Durability: f.opts.Durability})
}

// start launches a fresh pod into slot i at phase; an empty phase is the
// Deployment's template at the moment the pod comes up. A pod that cannot
// reach the node (its link is cut) is not ready: its slot is left empty —
// the dead pod it replaces no longer reports a gauge — and it retries until
// the link is back, as a crash-looping pod does.
func (f *Fleet) start(i int, phase fencing.Phase) error {
	f.mu.Lock()
	f.seq++
	name := fmt.Sprintf("pod%d.%d", i, f.seq)
	f.mu.Unlock()
	var pool client.Pool
	giveUp := time.Now().Add(startTimeout)
	for {
		var err error
		opts := client.Options{Backend: f.opts.Backend, Mode: client.ModeSingle, Addrs: []string{f.opts.Addr}, ClientName: "relay-" + name}
		if len(f.opts.Cluster) > 0 {
			opts.Mode, opts.Addrs = client.ModeCluster, f.opts.Cluster
		}
		if f.opts.Pool != nil {
			opts = *f.opts.Pool
			opts.Backend, opts.ClientName = f.opts.Backend, "relay-"+name
		}
		pool, err = client.NewPool(f.ctx, opts)
		if err == nil {
			break
		}
		if time.Now().After(giveUp) {
			return fmt.Errorf("start pod %s: %w", name, err)
		}
		f.mu.Lock()
		f.startFailures++
		delete(f.pods, f.slots[i]) // the replaced pod is gone; this one is not ready
		f.mu.Unlock()
		select {
		case <-f.ctx.Done():
			return fmt.Errorf("start pod %s: %w", name, err)
		case <-time.After(startRetry):
		}
	}
	ctx, cancel := context.WithCancel(f.ctx)
	p := &Pod{Name: name, pool: pool, ctx: ctx, cancel: cancel}
	f.mu.Lock()
	if phase == "" {
		phase = f.template
	}
	f.mu.Unlock()
	p.Metrics = fencing.NewPodMetrics(name)
	p.dir.Store(f.directory(p, phase))
	p.Metrics.SetPhase(phase)
	f.mu.Lock()
	delete(f.pods, f.slots[i])
	f.pods[name] = p
	f.slots[i] = name
	seed := f.opts.Seed + uint64(f.seq)*7919
	f.mu.Unlock()
	for li, lane := range []Lane{LaneReliable, LaneHuddle} {
		sessions := f.opts.Reliable
		if lane == LaneHuddle {
			sessions = f.opts.Huddle
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			f.runLane(ctx, p, lane, sessions, rand.New(rand.NewPCG(seed, uint64(li))))
		}()
	}
	return nil
}

// startRetry is how often a pod that cannot reach the node retries, and
// startTimeout when it gives up (the node is gone, not a link blip).
const (
	startRetry   = 20 * time.Millisecond
	startTimeout = 10 * time.Second
)

// Upgrade switches pod name's script phase in place (the pod keeps its
// leases and identity: the spec model's per-pod upgrade) and its gauge.
func (f *Fleet) Upgrade(name string, phase fencing.Phase) {
	f.mu.Lock()
	p := f.pods[name]
	f.mu.Unlock()
	if p == nil {
		return
	}
	p.dir.Store(f.directory(p, phase))
	p.Metrics.SetPhase(phase)
}

// Kill kills slot i's pod abruptly — no release, pool closed, in-flight
// calls abandoned — and its Deployment replaces it with a fresh pod (new
// identity, no leases) from the current template phase (the last RollTo)
// once the replacement can reach the node.
func (f *Fleet) Kill(i int) error {
	f.mu.Lock()
	old := f.pods[f.slots[i]]
	f.kills++
	f.mu.Unlock()
	if old != nil {
		old.dead.Store(true)
		old.cancel()
		_ = old.pool.Close()
	}
	err := f.start(i, "") // swaps the slot's pod atomically when the link is up
	if old != nil {
		old.wg.Wait()
	}
	return err
}

func (p *Pod) stop() {
	p.stopOnce.Do(func() {
		p.dead.Store(true)
		p.cancel()
		_ = p.pool.Close()
	})
	p.wg.Wait()
}

// Kills is how many pods were killed.
func (f *Fleet) Kills() int { f.mu.Lock(); defer f.mu.Unlock(); return f.kills }

// StartFailures is how many pod starts failed to reach the node and retried.
func (f *Fleet) StartFailures() int { f.mu.Lock(); defer f.mu.Unlock(); return f.startFailures }

// Size is the number of pod slots.
func (f *Fleet) Size() int { return len(f.slots) }

// Phases scrapes every live pod's gauge: the gate's observation of the
// fleet's behaviour (spec 000 §Deployment Gate rule 2).
func (f *Fleet) Phases() map[string]fencing.Phase {
	f.mu.Lock()
	pods := make([]*Pod, 0, len(f.pods))
	for _, p := range f.pods {
		pods = append(pods, p)
	}
	f.mu.Unlock()
	out := map[string]fencing.Phase{}
	for _, p := range pods {
		out[p.Name] = p.Phase()
	}
	return out
}

// LivePod is one live pod of a Fleet as a caller beside the fleet drives it
// (a row's read probe): its name, its own command pool and the directory of
// the phase it runs now.
type LivePod struct {
	Name string
	Pool client.Pool
	Dir  *fencing.Directory
}

// LivePods lists the live pods in slot order and the fleet's phase mix
// ("AB": the phases they run, in protocol order), from one instant.
func (f *Fleet) LivePods() ([]LivePod, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var pods []LivePod
	var mix []string
	for _, name := range f.slots {
		p := f.pods[name]
		if p == nil || p.dead.Load() {
			continue
		}
		dir := p.dir.Load()
		pods = append(pods, LivePod{Name: p.Name, Pool: p.pool, Dir: dir})
		if ph := string(dir.Phase()); !slices.Contains(mix, ph) {
			mix = append(mix, ph)
		}
	}
	slices.SortFunc(mix, func(a, b string) int { return fencing.Phase(a).Index() - fencing.Phase(b).Index() })
	return pods, strings.Join(mix, "")
}

// ScriptSet is the script set the fleet's pods run (FleetOptions.Set, else
// impl's embedded scripts).
func (f *Fleet) ScriptSet() *fencing.ScriptSet { return f.set() }

// LeaseTTL is the lease TTL of the fleet's directories (FleetOptions.TTL).
func (f *Fleet) LeaseTTL() time.Duration { return f.opts.TTL }

// PhaseCounts is Phases as counts per phase.
func (f *Fleet) PhaseCounts() map[string]int {
	out := map[string]int{}
	for _, ph := range f.Phases() {
		out[string(ph)]++
	}
	return out
}

// RollTo starts a rolling update of the fleet to phase, one pod per
// interval (maxSurge 1). A new RollTo supersedes a running one, as a new
// Deployment spec supersedes the rollout in progress — which is exactly how
// two rollouts overlap when nothing gates them. done is closed when every
// pod runs phase.
func (f *Fleet) RollTo(phase fencing.Phase, interval time.Duration) (done <-chan struct{}) {
	f.rollMu.Lock()
	defer f.rollMu.Unlock()
	if f.rollCancel != nil {
		f.rollCancel()
		<-f.rollDone
	}
	ctx, cancel := context.WithCancel(f.ctx)
	ch := make(chan struct{})
	f.rollCancel, f.rollDone = cancel, ch
	f.mu.Lock()
	f.template = phase
	f.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			var next *Pod
			f.mu.Lock()
			for _, name := range f.slots {
				if p := f.pods[name]; p != nil && p.Phase() != phase {
					next = p
					break
				}
			}
			f.mu.Unlock()
			if next == nil {
				close(finished)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
			f.Upgrade(next.Name, phase)
		}
	}()
	return finished
}

// Stop stops every pod (as a scenario ends: abandoned, not released).
func (f *Fleet) Stop() {
	f.rollMu.Lock()
	if f.rollCancel != nil {
		f.rollCancel()
		<-f.rollDone
	}
	f.rollMu.Unlock()
	f.mu.Lock()
	pods := make([]*Pod, 0, len(f.pods))
	for _, p := range f.pods {
		pods = append(pods, p)
	}
	pods = append(pods, f.lingering...)
	f.mu.Unlock()
	for _, p := range pods {
		p.stop()
	}
}

// History returns every recorded call, sorted by call time.
func (f *Fleet) History() []history.MigrationOp {
	f.mu.Lock()
	out := append([]history.MigrationOp(nil), f.history...)
	f.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Call < out[j].Call })
	return out
}

func (f *Fleet) record(op history.MigrationOp) {
	if rec := history.From(f.ctx); rec != nil {
		h := history.Op{Start: op.Call, End: op.Return, Client: op.Pod, Slot: -1, Kind: string(op.Kind), Outcome: outcomeOfKind(op.ErrKind), ErrKind: op.ErrKind, Err: op.Err}
		rec.Op(h)
	}
	f.mu.Lock()
	f.history = append(f.history, op)
	f.mu.Unlock()
}

// call runs one directory call and records it with its loud outcome. The
// call is composed with the pod's current scripts; a paused pod delivers
// it only once resumed (an in-flight call held past the pause).
//
// An acquire held by a pod that a rollout moved to another phase while it
// was frozen is composed again with the new phase's scripts. Under the
// Deployment Gate (spec 000 rule 1, one image per phase; rule 2(b), older
// ReplicaSets at zero) the process that composed it was replaced before
// the rollout completed, and an unsent call dies with it; the held
// renews, releases and frames stay as composed (the fence must refuse
// them). An old-image acquire delivered after the C-gate is outside E1:
// it writes the old key, which no C script consults, and forks authority
// (docs/FINDINGS.md, a late old-image acquire).
func (f *Fleet) call(p *Pod, lane Lane, kind history.FencingOpKind, s fencing.Session, owner string, gen int64, do func(*fencing.Directory) (history.FencingOp, error)) history.MigrationOp {
	d := p.dir.Load()
	p.awaitThaw()
	if now := p.dir.Load(); kind == history.OpAcquire && now.Phase() != d.Phase() {
		d = now
	}
	return f.deliver(p, d, lane, kind, s, owner, gen, do)
}

// deliver sends one call composed with d and records it.
func (f *Fleet) deliver(p *Pod, d *fencing.Directory, lane Lane, kind history.FencingOpKind, s fencing.Session, owner string, gen int64, do func(*fencing.Directory) (history.FencingOp, error)) history.MigrationOp {
	op := timed(f.clock, history.MigrationOp{Pod: p.Name, Phase: string(d.Phase()), Lane: string(lane)}, func(op *history.MigrationOp) error {
		res, err := do(d)
		op.FencingOp = res
		op.Session, op.Kind, op.Owner = s.String(), kind, owner
		if op.Gen == 0 {
			op.Gen = gen
		}
		if err != nil {
			op.Abandoned = p.dead.Load() || errors.Is(err, context.Canceled)
		}
		return err
	})
	f.record(op)
	return op
}

func (f *Fleet) runLane(ctx context.Context, p *Pod, lane Lane, sessions []fencing.Session, rng *rand.Rand) {
	if len(sessions) == 0 {
		return
	}
	renewEvery := f.opts.TTL / 3
	held := map[fencing.Session]int64{}
	// lastAck is when each held lease's last acknowledged acquire or renew
	// was called (its TTL runs from no earlier); retrying are the leases
	// whose last renew failed unanswered (RenewRetry).
	lastAck := map[fencing.Session]time.Time{}
	retrying := map[fencing.Session]bool{}
	capHeld := max(2, len(sessions)*5/(4*max(1, f.opts.Pods)))
	if f.opts.Cap > 0 {
		capHeld = f.opts.Cap
	}
	owner := p.Name
	// stagger the pods' ticks.
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(rng.Int64N(int64(renewEvery)))):
	}
	tickEvery := renewEvery
	if f.opts.RenewRetry > 0 {
		tickEvery = min(renewEvery, f.opts.RenewRetry)
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var nextRound time.Time
	drop := func(s fencing.Session) {
		delete(held, s)
		delete(lastAck, s)
		delete(retrying, s)
	}
	renew := func(s fencing.Session, gen int64) {
		called := time.Now()
		op := f.call(p, lane, history.OpRenew, s, owner, gen, func(d *fencing.Directory) (history.FencingOp, error) {
			ok, err := d.Renew(ctx, s, owner, gen)
			return history.FencingOp{OK: ok}, err
		})
		switch {
		case op.OK:
			lastAck[s] = called
			delete(retrying, s)
		case op.Unknown && f.opts.RenewRetry > 0 && time.Since(lastAck[s]) < f.opts.TTL:
			retrying[s] = true
		default:
			drop(s)
		}
	}
	for {
		// Between rounds (RenewRetry), only the failed renews are retried.
		if f.opts.RenewRetry > 0 && time.Now().Before(nextRound) {
			for s := range retrying {
				if ctx.Err() != nil {
					return
				}
				if time.Since(lastAck[s]) >= f.opts.TTL { // expired while unanswered
					drop(s)
					continue
				}
				renew(s, held[s])
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			continue
		}
		nextRound = time.Now().Add(renewEvery - tickEvery/2)
		for s, gen := range held {
			if ctx.Err() != nil {
				return
			}
			renew(s, gen)
		}
		if len(held) > 0 && rng.Float64() < f.opts.ReleaseP {
			for s, gen := range held {
				if ctx.Err() != nil {
					return
				}
				f.call(p, lane, history.OpRelease, s, owner, gen, func(d *fencing.Directory) (history.FencingOp, error) {
					ok, err := d.Release(ctx, s, owner, gen)
					return history.FencingOp{OK: ok}, err
				})
				drop(s)
				break
			}
		}
		for range f.opts.Acquires {
			if ctx.Err() != nil || len(held) >= capHeld || p.terminating.Load() {
				break
			}
			s := sessions[rng.IntN(len(sessions))]
			if _, mine := held[s]; mine {
				continue
			}
			called := time.Now()
			op := f.call(p, lane, history.OpAcquire, s, owner, 0, func(d *fencing.Directory) (history.FencingOp, error) {
				res, err := d.Acquire(ctx, s, owner)
				return history.FencingOp{OK: res.OK, Gen: res.Generation, HolderGen: res.Holder.Generation, HolderOwner: res.Holder.Owner}, err
			})
			if op.OK {
				held[s] = op.Gen
				lastAck[s] = called
			}
		}
		for s, gen := range held { // the hop-by-hop fence on one own frame
			if ctx.Err() != nil {
				return
			}
			f.call(p, lane, history.OpValidate, s, owner, gen, func(d *fencing.Directory) (history.FencingOp, error) {
				v, err := d.ValidateFencedHeader(ctx, s, owner, gen)
				return history.FencingOp{Verdict: int(v)}, err
			})
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
