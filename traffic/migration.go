package traffic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/gate"
)

// observeScript reads the lease of every session on BOTH keyspaces in one
// atomic step (legal: one standalone node). KEYS are pairs (old lease, new
// lease). Returns {old count, new count, {fork key, old value, new value}...}.
var observeScript = client.NewScript("migration/observe", `
local old, new, forks = 0, 0, {}
for i = 1, #KEYS, 2 do
  local o = redis.call('GET', KEYS[i])
  local n = redis.call('GET', KEYS[i + 1])
  if o then old = old + 1 end
  if n then new = new + 1 end
  if o and n then
    forks[#forks + 1] = KEYS[i + 1] .. ' old=' .. o .. ' new=' .. n
  end
end
return {old, new, forks}
`)

// Observer samples both keyspaces atomically at a high rate, independent of
// the pods' own histories: the T1 witness a history cannot give (a fork
// between two recorded calls), and the drain curve.
type Observer struct {
	pool     client.Pool
	fleet    *Fleet
	clock    *Clock
	keys     []string
	mu       sync.Mutex
	samples  []history.KeyspaceSample
	errs     int
	stop     context.CancelFunc
	finished chan struct{}
}

// StartObserver starts sampling sessions every interval until Stop.
func StartObserver(ctx context.Context, pool client.Pool, fleet *Fleet, clock *Clock, sessions []fencing.Session, interval time.Duration) *Observer {
	o := &Observer{pool: pool, fleet: fleet, clock: clock, finished: make(chan struct{})}
	for _, s := range sessions {
		o.keys = append(o.keys, fencing.OldKeys(s).Lease, fencing.NewKeys(s).Lease)
	}
	ctx, o.stop = context.WithCancel(ctx)
	go func() {
		defer close(o.finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			o.Sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return o
}

// Sample takes one observation now and returns it.
func (o *Observer) Sample(ctx context.Context) (history.KeyspaceSample, error) {
	at := o.clock.Now()
	reply, _, err := client.RunScript(ctx, o.pool, observeScript, o.keys)
	if err != nil {
		if ctx.Err() == nil {
			o.mu.Lock()
			o.errs++
			o.mu.Unlock()
		}
		return history.KeyspaceSample{}, fmt.Errorf("observe keyspaces: %w", err)
	}
	vals, _ := reply.([]any)
	if len(vals) != 3 {
		return history.KeyspaceSample{}, fmt.Errorf("observe keyspaces: %w: %v", fencing.ErrBadReply, reply)
	}
	oldN, _ := client.AsInt64(vals[0])
	newN, _ := client.AsInt64(vals[1])
	forks, _, _ := client.AsStrings(vals[2])
	s := history.KeyspaceSample{At: at, OldLeases: int(oldN), NewLeases: int(newN), Forks: forks}
	if o.fleet != nil {
		s.Pods = o.fleet.PhaseCounts()
	}
	o.mu.Lock()
	o.samples = append(o.samples, s)
	o.mu.Unlock()
	return s, nil
}

// Stop ends sampling and returns the samples and how many observations failed.
func (o *Observer) Stop() ([]history.KeyspaceSample, int) {
	o.stop()
	<-o.finished
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]history.KeyspaceSample(nil), o.samples...), o.errs
}

// Operator drives a staged deployment through the Deployment Gate: before
// every step it observes the fleet (gauges) and the node (lease counts by
// SCAN) and asks the gate; it rolls the fleet only when the gate allows. A
// refused step is asked again only once an observation shows the refused
// condition gone (the fleet at the target, a keyspace drained) — never
// after a fixed wait; a refusal no observation can clear (backfill or
// reverse merge not run, a non-adjacent step) is returned at once, for the
// operator to act on.
type Operator struct {
	Fleet *Fleet
	Gate  *gate.Gate
	// Admin is a pool on the standalone node for SCAN counts, backfill and
	// reverse merge (the operator's own path, not a pod link).
	Admin client.Pool
	// Scripts is the set whose backfill and reverse merge run (nil: the
	// fleet's set).
	Scripts *fencing.ScriptSet
	// Durability confirms every backfill and reverse-merge script by WAIT
	// (fencing.Durability), as the pods' directories do in that mode.
	Durability fencing.Durability
	// Retry re-runs an observation or a merge that failed, every Poll
	// until Timeout, as an operator re-runs a step when the store fails
	// over under it (merges are idempotent max-merges). Off, the first
	// error ends the step: on a node that never fails over an error is
	// the harness's.
	Retry bool
	// Roll is the per-pod interval of a rolling update; Poll how often the
	// fleet and node are observed while a refused condition persists;
	// Timeout bounds a wait for the condition.
	Roll, Poll, Timeout time.Duration
	// Drain bounds a wait for a keyspace to drain (refusals old-leases-live
	// and new-leases-live), from the step's first such refusal: a lease
	// renewed by a stuck pod never leaves the keyspace (spec 000 §The
	// protocol: renew is PEXPIRE), so the step ends with ErrDrainStuck
	// rather than wait on it (DrainBound derives it from the lease TTL).
	// Zero is the known-bad unbounded drain, kept as a negative control:
	// only Timeout or the caller's context ends the wait.
	Drain time.Duration
	Clock *Clock
	// Log narrates steps (may be nil).
	Log func(format string, args ...any)
	// OnAllowed, when set, runs right after the gate allows a step and
	// before the step acts (the fleet rolls, the merge runs): an independent
	// observer's witness of the state the gate decided on.
	OnAllowed func(step string)

	// Marks records when each step was last taken, by step name.
	Marks map[string]time.Duration
	// Refusals counts refusals, by reason.
	Refusals map[gate.Reason]int
	// Steps is every step asked of the gate, in order, with its refusals.
	Steps []Step
	// Merges records each session's backfill and reverse-merge call
	// (history.OpMerge, pod "operator", phase the step's name).
	Merges []history.MigrationOp
}

// ErrDrainStuck marks a step whose keyspace did not drain within the
// operator's Drain bound: a pod still renews leases there (spec 000 §The
// protocol, C-gate; §Deployment Gate rules 3 and 4). The gate did not admit
// the step; the operator must find the pod, not wait longer.
var ErrDrainStuck = errors.New("keyspace drain stuck")

// DrainBound is the longest a correct fleet's keyspace takes to drain once
// the gate refuses on live leases (spec 000 §The protocol, C-gate: "Full-B
// therefore implies drain within bounded time"): a lease leaves at its
// holder's next renew tick (B renew-migrates; A's B-era leases are never
// renewed) or one TTL after its holder stopped renewing, and a pod replaced
// by a rollout renews for at most its termination grace. Two more TTLs cover
// observation, and drainSlack a host whose CPUs are contended: a pod's renew
// goroutine late by a second does not scale with a shrunk TTL.
func DrainBound(ttl, grace time.Duration) time.Duration { return grace + 3*ttl + drainSlack }

// drainSlack is DrainBound's allowance for scheduling on a contended host.
const drainSlack = 2 * time.Second

// Step is one step the operator asked the gate for, as data for the
// report: when it was first asked, when (if ever) it was allowed, and the
// refusals seen on the way.
type Step struct {
	Name    string
	Asked   time.Duration
	At      time.Duration // when allowed; zero when never allowed
	Allowed bool
	// Ended is when the operator stopped asking (allowed, or gave up).
	Ended time.Duration
	// Err is why the step was not taken ("" when allowed).
	Err string
	// Stuck says the step ended with ErrDrainStuck.
	Stuck bool
	// Refused lists the refusal reasons in order (one per gate answer).
	Refused []gate.Reason
}

func (s Step) String() string {
	out := fmt.Sprintf("%s@%v", s.Name, s.At.Round(time.Millisecond))
	if !s.Allowed {
		out = fmt.Sprintf("%s@%v NOT allowed", s.Name, s.Asked.Round(time.Millisecond))
	}
	if len(s.Refused) > 0 {
		counts := map[gate.Reason]int{}
		var order []gate.Reason
		for _, r := range s.Refused {
			if counts[r] == 0 {
				order = append(order, r)
			}
			counts[r]++
		}
		parts := make([]string, len(order))
		for i, r := range order {
			parts[i] = fmt.Sprintf("%d×%s", counts[r], r)
		}
		out += " (refused " + strings.Join(parts, ", ") + ")"
	}
	return out
}

// Observe builds the gate's observation.
func (o *Operator) Observe(ctx context.Context) (gate.Observation, error) {
	obs := gate.Observation{Pods: o.Fleet.Phases(), Terminating: o.Fleet.Terminating(), OldLeases: -1, NewLeases: -1}
	var err error
	if obs.OldLeases, err = fencing.CountLeases(ctx, o.Admin, fencing.KeyspaceOld); err != nil {
		return obs, err
	}
	if obs.NewLeases, err = fencing.CountLeases(ctx, o.Admin, fencing.KeyspaceNew); err != nil {
		return obs, err
	}
	return obs, nil
}

func (o *Operator) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// cleared says whether obs shows the condition behind a refusal gone, and
// false for a refusal no observation can clear.
func (o *Operator) cleared(reason gate.Reason, obs gate.Observation) (ok, observable bool) {
	fleetAt := func(p fencing.Phase) bool {
		if len(obs.Pods) == 0 {
			return false
		}
		for _, q := range obs.Pods {
			if q != p {
				return false
			}
		}
		return true
	}
	switch reason {
	case gate.ReasonFleetNotAtTarget, gate.ReasonNoPods:
		return fleetAt(o.Gate.Target()), true
	case gate.ReasonFleetNotC:
		return fleetAt(fencing.C), true
	case gate.ReasonOlderPodsLive:
		return len(obs.Terminating) == 0, true
	case gate.ReasonOldLeasesLive:
		return obs.OldLeases == 0, true
	case gate.ReasonNewLeasesLive:
		return obs.NewLeases == 0, true
	case gate.ReasonNotObserved:
		return obs.OldLeases >= 0 && obs.NewLeases >= 0, true
	}
	return false, false
}

// await asks the gate for step; after a refusal it observes until the
// refused condition is gone, then asks again. It records the step.
func (o *Operator) await(ctx context.Context, step string, ask func(gate.Observation) error) (err error) {
	if o.Marks == nil {
		o.Marks = map[string]time.Duration{}
		o.Refusals = map[gate.Reason]int{}
	}
	rec := Step{Name: step, Asked: o.Clock.Now()}
	defer func() {
		rec.Ended = o.Clock.Now()
		if err != nil {
			rec.Err, rec.Stuck = err.Error(), errors.Is(err, ErrDrainStuck)
		}
		o.Steps = append(o.Steps, rec)
	}()
	deadline := time.Now().Add(o.Timeout)
	var drainSince time.Time // the first drain refusal of this step
	for {
		obs, err := o.observe(ctx, deadline)
		if err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		err = ask(obs)
		if err == nil {
			rec.At, rec.Allowed = o.Clock.Now(), true
			o.Marks[step] = rec.At
			o.logf("gate allowed %s at %v (old=%d new=%d pods=%v)", step, rec.At.Round(time.Millisecond), obs.OldLeases, obs.NewLeases, o.Fleet.PhaseCounts())
			if o.OnAllowed != nil {
				o.OnAllowed(step)
			}
			return nil
		}
		reason := gate.ReasonOf(err)
		o.Refusals[reason]++
		rec.Refused = append(rec.Refused, reason)
		if _, observable := o.cleared(reason, obs); !observable {
			o.logf("gate refused %s at %v: %v", step, o.Clock.Now().Round(time.Millisecond), err)
			return fmt.Errorf("%s: %w", step, err)
		}
		drain := reason == gate.ReasonOldLeasesLive || reason == gate.ReasonNewLeasesLive
		if drain && drainSince.IsZero() {
			drainSince = time.Now()
		}
		// Observe until the refused condition is gone, then ask again.
		for {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: still refused after %v: %w", step, o.Timeout, err)
			}
			if drain && o.Drain > 0 && time.Since(drainSince) > o.Drain {
				o.logf("gate refused %s at %v: drain stuck past %v (old=%d new=%d)", step, o.Clock.Now().Round(time.Millisecond), o.Drain, obs.OldLeases, obs.NewLeases)
				return fmt.Errorf("%s: %w: old=%d new=%d live leases %v after the first drain refusal (bound %v): %w", step, ErrDrainStuck, obs.OldLeases, obs.NewLeases, time.Since(drainSince).Round(time.Millisecond), o.Drain, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(o.Poll):
			}
			var oerr error
			obs, oerr = o.observe(ctx, deadline)
			if oerr != nil {
				return fmt.Errorf("%s: %w", step, oerr)
			}
			if ok, _ := o.cleared(reason, obs); ok {
				break
			}
		}
	}
}

// observe is Observe, retried every Poll until deadline when o.Retry.
func (o *Operator) observe(ctx context.Context, deadline time.Time) (gate.Observation, error) {
	var obs gate.Observation
	err := o.retry(ctx, deadline, "observe", func() (err error) { obs, err = o.Observe(ctx); return err })
	return obs, err
}

// retry runs act once, or with o.Retry until it succeeds or deadline.
func (o *Operator) retry(ctx context.Context, deadline time.Time, what string, act func() error) error {
	for {
		err := act()
		if err == nil || !o.Retry || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		o.logf("%s failed at %v, retrying: %v", what, o.Clock.Now().Round(time.Millisecond), err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

// merge discovers keyspace k's sessions and merges each, recording every
// call (Merges); the whole pass runs again after a failure when o.Retry.
func (o *Operator) merge(ctx context.Context, what string, k fencing.Keyspace, run func(context.Context, client.Pool, []fencing.Session, fencing.Durability) (int, error)) (int, error) {
	n := 0
	err := o.retry(ctx, time.Now().Add(o.Timeout), what, func() error {
		sessions, err := fencing.Sessions(ctx, o.Admin, k)
		if err != nil {
			return err
		}
		n = 0
		for _, s := range sessions {
			op := history.MigrationOp{FencingOp: history.FencingOp{Session: s.String(), Kind: history.OpMerge, Owner: "operator"}, Pod: "operator", Phase: what}
			var err error
			op = timed(o.Clock, op, func(op *history.MigrationOp) error {
				_, err = run(ctx, o.Admin, []fencing.Session{s}, o.Durability)
				op.OK = err == nil
				return err
			})
			o.Merges = append(o.Merges, op)
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// Advance waits for the gate to allow advancing to to, then starts rolling.
func (o *Operator) Advance(ctx context.Context, to fencing.Phase) (<-chan struct{}, error) {
	if err := o.await(ctx, "advance to "+string(to), func(obs gate.Observation) error { return o.Gate.Advance(obs, to) }); err != nil {
		return nil, err
	}
	return o.Fleet.RollTo(to, o.Roll), nil
}

// Rollback waits for the gate to allow rolling back to to, then starts rolling.
func (o *Operator) Rollback(ctx context.Context, to fencing.Phase) (<-chan struct{}, error) {
	if err := o.await(ctx, "rollback to "+string(to), func(obs gate.Observation) error { return o.Gate.Rollback(obs, to) }); err != nil {
		return nil, err
	}
	return o.Fleet.RollTo(to, o.Roll), nil
}

// Backfill waits for the gate to allow the backfill, then max-merges every
// old counter into the new one.
func (o *Operator) Backfill(ctx context.Context) (int, error) {
	if err := o.await(ctx, "backfill", o.Gate.RecordBackfill); err != nil {
		return 0, err
	}
	return o.merge(ctx, "backfill", fencing.KeyspaceOld, o.scripts().BackfillDurable)
}

// ReverseMerge waits for the gate to allow the reverse max-merge, then
// folds every new counter into the old one.
func (o *Operator) ReverseMerge(ctx context.Context) (int, error) {
	if err := o.await(ctx, "reverse merge", o.Gate.RecordReverseMerge); err != nil {
		return 0, err
	}
	return o.merge(ctx, "reverse merge", fencing.KeyspaceNew, o.scripts().ReverseMergeDurable)
}

func (o *Operator) scripts() *fencing.ScriptSet {
	if o.Scripts != nil {
		return o.Scripts
	}
	return o.Fleet.set()
}

// EnterCompatible waits for the gate to open the G3 door.
func (o *Operator) EnterCompatible(ctx context.Context) error {
	return o.await(ctx, "enter compatible", o.Gate.EnterCompatible)
}

// ReadBackGenerations reads every session's known generation through dir
// (the phase the deploy ended in), recording each read as the pod "audit":
// the counter the next acquire issues from, which must be at least every
// generation the directory ever acknowledged (T2 across the backfill and
// the failovers, spec 000 §Safety theorems).
func ReadBackGenerations(ctx context.Context, dir *fencing.Directory, clock *Clock, sessions []fencing.Session) []history.MigrationOp {
	out := make([]history.MigrationOp, 0, len(sessions))
	for _, s := range sessions {
		op := history.MigrationOp{FencingOp: history.FencingOp{Session: s.String(), Kind: history.OpKnown, Owner: "audit"}, Pod: "audit", Phase: string(dir.Phase()), Lane: "audit"}
		out = append(out, timed(clock, op, func(op *history.MigrationOp) (err error) {
			op.Gen, err = dir.KnownGeneration(ctx, s)
			op.OK = err == nil
			return err
		}))
	}
	return out
}

// timed runs do as op's call on clock, stamping its call and return, and
// marks op unknown with the error's kind when do fails (its outcome is
// then not known, whatever do set).
func timed(clock *Clock, op history.MigrationOp, do func(op *history.MigrationOp) error) history.MigrationOp {
	call := clock.Now()
	err := do(&op)
	op.Call, op.Return = call, clock.Now() // after do, which may set the whole FencingOp
	if err != nil {
		op.Unknown, op.OK = true, false
		op.ErrKind, op.Err = ErrKind(err), err.Error()
	}
	return op
}
