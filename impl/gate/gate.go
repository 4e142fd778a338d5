// Package gate is the Deployment Gate as code (spec 000 §Deployment Gate,
// rules 2–5): pure decisions over observations, discharging environment
// assumption E1 — the fleet chases one target phase, a phase advances only
// when every pod runs it, rollback never skips a phase or overlaps a running
// downgrade — which Kubernetes' RollingUpdate does not give.
//
// The gate does no I/O. A caller observes the fleet (each pod's
// buzz_fencing_phase gauge, the old/new keyspace lease counts by direct
// observation) and asks the gate before every step; a refused step comes
// back as a *Refusal with a typed Reason. Mutants M4 and M6–M9 switch off the
// rule whose absence they model.
package gate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/impl/fencing/protocol"
)

// Mode is the cluster-mode door position (spec 000 §The protocol, G3/G4).
type Mode string

const (
	Disabled   Mode = "disabled"   // cluster mode off: the only mode where A/B run
	Compatible Mode = "compatible" // slot rules enforced; revert to disabled still possible
	Enabled    Mode = "enabled"    // the one-way door (A3)
)

// Observation is what the gate is shown before a step: facts read from the
// fleet and the node, never from a timer or an image tag.
type Observation struct {
	// Pods is each live pod's exported phase (the buzz_fencing_phase gauge),
	// including pods of older ReplicaSets still running.
	Pods map[string]protocol.Phase
	// Terminating is every pod of an older ReplicaSet still terminating (in
	// its grace period: gone from the gauges, not yet gone from the
	// rollout), with the phase it last ran. Rule 2(b) ("all older
	// ReplicaSets at zero") is this map being empty: such a pod still
	// serves with its old scripts.
	Terminating map[string]protocol.Phase
	// OldLeases and NewLeases are the live lease counts of each keyspace by
	// direct observation; negative means not observed.
	OldLeases, NewLeases int
}

// Reason says why a step was refused.
type Reason string

const (
	ReasonNotAdjacent      Reason = "not-adjacent"           // advance/rollback must move exactly one phase
	ReasonFleetNotAtTarget Reason = "fleet-not-at-target"    // a live pod reports another phase (rule 2, rule 4)
	ReasonNoPods           Reason = "no-pods"                // nothing observed: the gate cannot check behaviour
	ReasonNotBackfilled    Reason = "not-backfilled"         // C-gate: backfill has not run since the last rollback (rule 3)
	ReasonOldLeasesLive    Reason = "old-leases-live"        // C-gate: observed old-keyspace lease count > 0 (rule 3)
	ReasonNotObserved      Reason = "lease-count-unobserved" // a lease count was required but not observed
	ReasonNewLeasesLive    Reason = "new-leases-live"        // rollback into O: new keyspace not drained (rule 4)
	ReasonNotReverseMerged Reason = "not-reverse-merged"     // rollback into O: reverse max-merge not run (rule 4)
	ReasonModeNotDisabled  Reason = "mode-not-disabled"      // no phase move outside disabled mode (rule 4)
	ReasonFleetNotC        Reason = "fleet-not-c"            // mode door needs the whole fleet on C (T3)
	ReasonWrongPhase       Reason = "wrong-phase"            // the step is not legal at the current target
	ReasonOneWayDoor       Reason = "one-way-door"           // enabled is never left (A3)
	ReasonWrongMode        Reason = "wrong-mode"             // the mode door is not adjacent to the current mode
	ReasonDrainTimer       Reason = "drain-timer-running"    // the DrainTimer variant: its wait since the backfill has not elapsed
	ReasonOlderPodsLive    Reason = "older-pods-live"        // a pod of an older ReplicaSet is still terminating (rule 2(b))
)

// ErrRefused is the sentinel every Refusal matches with errors.Is.
var ErrRefused = errors.New("deployment gate refused")

// Refusal is a refused step with its typed reason.
type Refusal struct {
	Step   string
	Reason Reason
	Detail string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("deployment gate refused %s: %s (%s)", r.Step, r.Reason, r.Detail)
}

// Is makes errors.Is(err, ErrRefused) true.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// ReasonOf returns the refusal reason of err, or "".
func ReasonOf(err error) Reason {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// Options configures a Gate.
type Options struct {
	// Start is the phase the fleet runs when the gate takes over; zero is O.
	Start protocol.Phase
	// Mutant switches off one rule (M4, M6, M7, M8, M9); script mutants
	// and MutantNone leave the gate correct.
	Mutant protocol.MigrationMutant
	// DrainTimer, when positive, makes a known-bad gate (a negative
	// control): the C-gate trusts that DrainTimer has elapsed since the
	// backfill instead of the observed old-keyspace lease count — "wait one
	// TTL", which spec 000 §The protocol calls wrong on its face (renew is
	// PEXPIRE; a lingering pod's renewed lease never expires). Now is its
	// clock and is required with it.
	DrainTimer time.Duration
	Now        func() time.Duration
	// KeepBackfill, when set, makes a known-bad gate (a negative control):
	// a rollback leaves the backfill counted as done, against rule 4 ("any
	// rollback invalidates the backfill"). After a rollback into A, A pods
	// issue generations into the old counter only, so a C admitted on the
	// stale backfill issues from a new counter that is behind them (T2).
	KeepBackfill bool
	// IgnoreTerminating, when set, makes a known-bad gate (a negative
	// control): rule 2(b) is not checked, so a pod still terminating with
	// older scripts is invisible once it left the gauges — the backfill and
	// C are admitted while it can still issue into the old counter.
	IgnoreTerminating bool
	// AdvanceMajority, when set, makes a known-bad gate (a negative
	// control): rule 2(a) is weakened to "most live pods report the
	// target", so the next phase starts while the previous rollout still
	// has stragglers — O and B pods coexist and fork authority.
	AdvanceMajority bool
	// Door, when set, makes a known-bad gate (a negative control) that
	// opens one mode door it must keep shut (spec 000 §Deployment Gate
	// rule 4, §Safety theorems T3, A3).
	Door DoorVariant
}

// DoorVariant names a known-bad mode door.
type DoorVariant string

const (
	// DoorRevertEnabled lets enabled be reverted to disabled: A3 makes
	// enabled one-way, so the gate's mode no longer says what the store
	// enforces.
	DoorRevertEnabled DoorVariant = "revert-enabled"
	// DoorRollbackCompatible allows a phase rollback while the mode is
	// compatible: A/B scripts come back under live slot rules.
	DoorRollbackCompatible DoorVariant = "rollback-in-compatible"
	// DoorPhaseWithMode lets a rollback in compatible revert the mode in
	// the same step: the pods downgrade while the store still enforces
	// slot rules (a mode change is not instantaneous).
	DoorPhaseWithMode DoorVariant = "phase-with-mode"
)

// Gate is the deployment state machine: the target phase, the mode, and
// the facts that must be re-established after a rollback. Not safe for
// concurrent use; one operator drives it.
type Gate struct {
	mutant        protocol.MigrationMutant
	keepBackfill  bool
	ignoreTerm    bool
	majority      bool
	door          DoorVariant
	drainTimer    time.Duration
	now           func() time.Duration
	backfilledAt  time.Duration
	target        protocol.Phase
	mode          Mode
	backfilled    bool
	reverseMerged bool
	log           []Decision
}

// Decision is one step the gate was asked about, as data for the report.
type Decision struct {
	Step string
	From protocol.Phase
	Mode Mode
	// To and ModeAfter are the target and the mode after the decision.
	To        protocol.Phase
	ModeAfter Mode
	Allowed   bool
	Reason    Reason
	// Facts the decision saw.
	Backfilled bool
	OldLeases  int
	NewLeases  int
	FleetC     bool
}

// New returns a gate at opts.Start in disabled mode.
func New(opts Options) *Gate {
	start := opts.Start
	if start == "" {
		start = protocol.O
	}
	g := &Gate{mutant: opts.Mutant, keepBackfill: opts.KeepBackfill, ignoreTerm: opts.IgnoreTerminating,
		majority: opts.AdvanceMajority, door: opts.Door, target: start, mode: Disabled}
	if opts.DrainTimer > 0 && opts.Now != nil {
		g.drainTimer, g.now = opts.DrainTimer, opts.Now
	}
	return g
}

// State is the gate's decision-relevant state as a value: the target, the
// mode, and the facts a rollback invalidates. It exists so the explicit-state
// model (model/) can explore the gate's own decisions exhaustively instead of
// re-encoding its rules; it is comparable, so a model checker can hash it.
type State struct {
	Target        protocol.Phase
	Mode          Mode
	Backfilled    bool
	ReverseMerged bool
}

// State returns the gate's current state (the decision log is not part of it).
func (g *Gate) State() State {
	return State{Target: g.target, Mode: g.mode, Backfilled: g.backfilled, ReverseMerged: g.reverseMerged}
}

// Restore returns a gate in state s with opts.Mutant, opts.Door and an
// empty decision log (opts.Start and the other variants are ignored:
// s.Target is the target). A zero s.Target is O
// and a zero s.Mode is disabled, as for New.
func Restore(opts Options, s State) *Gate {
	g := New(Options{Start: s.Target, Mutant: opts.Mutant, Door: opts.Door})
	if s.Mode != "" {
		g.mode = s.Mode
	}
	g.backfilled, g.reverseMerged = s.Backfilled, s.ReverseMerged
	return g
}

// Target is the phase the fleet is chasing.
func (g *Gate) Target() protocol.Phase { return g.target }

// Mode is the current mode door position.
func (g *Gate) Mode() Mode { return g.mode }

// Backfilled says whether a backfill has run since the last rollback.
func (g *Gate) Backfilled() bool { return g.backfilled }

// Log returns every decision taken so far.
func (g *Gate) Log() []Decision { return append([]Decision(nil), g.log...) }

// decide records a decision; from and mode are the target and mode before
// the step (the step has already moved g when it was allowed).
func (g *Gate) decide(step string, obs Observation, r *Refusal) error {
	return g.decideFrom(step, g.target, g.mode, obs, r)
}

func (g *Gate) decideFrom(step string, from protocol.Phase, mode Mode, obs Observation, r *Refusal) error {
	d := Decision{Step: step, From: from, Mode: mode, To: g.target, ModeAfter: g.mode, Allowed: r == nil, Backfilled: g.backfilled,
		OldLeases: obs.OldLeases, NewLeases: obs.NewLeases, FleetC: fleetAt(obs, protocol.C) == ""}
	if r != nil {
		r.Step = step
		d.Reason = r.Reason
		g.log = append(g.log, d)
		return r
	}
	g.log = append(g.log, d)
	return nil
}

func refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// fleetAt returns "" when every observed pod reports p, else why not.
func fleetAt(obs Observation, p protocol.Phase) string {
	if len(obs.Pods) == 0 {
		return "no pods observed"
	}
	var off []string
	for name, q := range obs.Pods {
		if q != p {
			off = append(off, name+"="+string(q))
		}
	}
	for name, q := range obs.Terminating { // still serving with its scripts (T3)
		if q != p {
			off = append(off, name+"="+string(q)+" (terminating)")
		}
	}
	if len(off) > 0 {
		if len(off) > 3 {
			off = append(off[:3], "…")
		}
		return fmt.Sprintf("pods not on %s: %s", p, strings.Join(off, ", "))
	}
	return ""
}

// fleetRefusal is rule 2: (a) every live pod reports p and (b) no pod of
// an older ReplicaSet is still terminating.
func (g *Gate) fleetRefusal(obs Observation, p protocol.Phase) *Refusal {
	if len(obs.Pods) == 0 {
		return refuse(ReasonNoPods, "no pod reports %s", protocol.PhaseGaugeName)
	}
	if g.majority {
		if on := countAt(obs, p); 2*on <= len(obs.Pods) {
			return refuse(ReasonFleetNotAtTarget, "%d of %d pods on %s", on, len(obs.Pods), p)
		}
	} else {
		live := Observation{Pods: obs.Pods}
		if why := fleetAt(live, p); why != "" {
			return refuse(ReasonFleetNotAtTarget, "%s", why)
		}
	}
	if !g.ignoreTerm && len(obs.Terminating) > 0 {
		var names []string
		for name, q := range obs.Terminating {
			names = append(names, name+"="+string(q))
		}
		if len(names) > 3 {
			names = append(names[:3], "…")
		}
		return refuse(ReasonOlderPodsLive, "%d pods of older ReplicaSets still terminating: %s", len(obs.Terminating), strings.Join(names, ", "))
	}
	return nil
}

func countAt(obs Observation, p protocol.Phase) int {
	n := 0
	for _, q := range obs.Pods {
		if q == p {
			n++
		}
	}
	return n
}

// Advance asks to start rolling the fleet to the next phase (rule 2: every
// live pod reports the current target and no older pod is left; rule 3 for
// C: backfill complete and observed old-keyspace lease count 0). On success
// the target moves to to.
func (g *Gate) Advance(obs Observation, to protocol.Phase) error {
	step := "advance to " + string(to)
	from := g.target
	if g.mode != Disabled {
		return g.decide(step, obs, refuse(ReasonModeNotDisabled, "mode is %s", g.mode))
	}
	if next, ok := g.target.Next(); !ok || next != to {
		return g.decide(step, obs, refuse(ReasonNotAdjacent, "target is %s", g.target))
	}
	if r := g.fleetRefusal(obs, g.target); r != nil {
		return g.decide(step, obs, r)
	}
	if to == protocol.C && g.mutant != protocol.M4 {
		if !g.backfilled {
			return g.decide(step, obs, refuse(ReasonNotBackfilled, "backfill has not run since the fleet reached B"))
		}
		if g.drainTimer > 0 { // the known-bad timer C-gate: elapsed time, not observation
			if waited := g.now() - g.backfilledAt; waited < g.drainTimer {
				return g.decide(step, obs, refuse(ReasonDrainTimer, "%v of %v since the backfill", waited, g.drainTimer))
			}
			g.target = to
			return g.decideFrom(step, from, g.mode, obs, nil)
		}
		if obs.OldLeases < 0 {
			return g.decide(step, obs, refuse(ReasonNotObserved, "old-keyspace lease count not observed"))
		}
		if obs.OldLeases > 0 {
			return g.decide(step, obs, refuse(ReasonOldLeasesLive, "%d live old-keyspace leases", obs.OldLeases))
		}
	}
	g.target = to
	return g.decideFrom(step, from, g.mode, obs, nil)
}

// RecordBackfill asks to run the backfill: only once the whole fleet runs B
// (an A pod could still write the old counter afterwards). On success the
// caller runs fencing.Backfill and the gate counts it done.
func (g *Gate) RecordBackfill(obs Observation) error {
	const step = "backfill"
	if g.target != protocol.B {
		return g.decide(step, obs, refuse(ReasonWrongPhase, "backfill runs after full-B; target is %s", g.target))
	}
	if r := g.fleetRefusal(obs, protocol.B); r != nil {
		return g.decide(step, obs, r)
	}
	g.backfilled = true
	if g.now != nil {
		g.backfilledAt = g.now()
	}
	return g.decide(step, obs, nil)
}

// RecordReverseMerge asks to run the reverse max-merge before a rollback
// into O: only with the whole fleet on A (no B writer of the new counter).
func (g *Gate) RecordReverseMerge(obs Observation) error {
	const step = "reverse merge"
	if g.target != protocol.A {
		return g.decide(step, obs, refuse(ReasonWrongPhase, "reverse merge runs at full-A; target is %s", g.target))
	}
	if r := g.fleetRefusal(obs, protocol.A); r != nil {
		return g.decide(step, obs, r)
	}
	g.reverseMerged = true
	return g.decide(step, obs, nil)
}

// Rollback asks to start rolling the fleet back one adjacent phase (rule 4):
// never past a running downgrade (every pod must report the current target —
// mutant M8 drops this), never outside disabled mode; it invalidates the
// backfill; into O it needs the new keyspace drained (M6) and the reverse
// max-merge run (M7).
func (g *Gate) Rollback(obs Observation, to protocol.Phase) error {
	step := "rollback to " + string(to)
	from, mode := g.target, g.mode
	if g.mode != Disabled && !(g.mode == Compatible && (g.door == DoorRollbackCompatible || g.door == DoorPhaseWithMode)) {
		return g.decide(step, obs, refuse(ReasonModeNotDisabled, "revert the mode to disabled first; mode is %s", g.mode))
	}
	if prev, ok := g.target.Prev(); !ok || prev != to {
		return g.decide(step, obs, refuse(ReasonNotAdjacent, "target is %s", g.target))
	}
	if g.mutant != protocol.M8 {
		if r := g.fleetRefusal(obs, g.target); r != nil {
			return g.decide(step, obs, r)
		}
	}
	if to == protocol.O {
		if g.mutant != protocol.M6 {
			if obs.NewLeases < 0 {
				return g.decide(step, obs, refuse(ReasonNotObserved, "new-keyspace lease count not observed"))
			}
			if obs.NewLeases > 0 {
				return g.decide(step, obs, refuse(ReasonNewLeasesLive, "%d live new-keyspace leases", obs.NewLeases))
			}
		}
		if g.mutant != protocol.M7 && !g.reverseMerged {
			return g.decide(step, obs, refuse(ReasonNotReverseMerged, "run the reverse max-merge at full-A first"))
		}
	}
	g.target = to
	if !g.keepBackfill {
		g.backfilled = false
	}
	g.reverseMerged = false
	if g.door == DoorPhaseWithMode && g.mode == Compatible {
		g.mode = Disabled // the known-bad variant: door and phase in one step
	}
	return g.decideFrom(step, from, mode, obs, nil)
}

// EnterCompatible opens the G3 door (T3): only with the whole fleet on C,
// backfilled, and no live old-keyspace lease. Mutant M9 drops the
// fleet-fully-C requirement.
func (g *Gate) EnterCompatible(obs Observation) error {
	const step = "enter compatible"
	if g.mode != Disabled {
		return g.decide(step, obs, refuse(ReasonWrongMode, "mode is %s", g.mode))
	}
	if g.mutant != protocol.M9 {
		if g.target != protocol.C {
			return g.decide(step, obs, refuse(ReasonFleetNotC, "target is %s", g.target))
		}
		if why := fleetAt(obs, protocol.C); why != "" {
			return g.decide(step, obs, refuse(ReasonFleetNotC, "%s", why))
		}
		if !g.backfilled {
			return g.decide(step, obs, refuse(ReasonNotBackfilled, "backfill has not run since the last rollback"))
		}
		if obs.OldLeases != 0 {
			return g.decide(step, obs, refuse(ReasonOldLeasesLive, "old-keyspace lease count %d", obs.OldLeases))
		}
	}
	g.mode = Compatible
	return g.decideFrom(step, g.target, Disabled, obs, nil)
}

// RevertMode goes back from compatible to disabled; enabled is one-way.
func (g *Gate) RevertMode(obs Observation) error {
	const step = "revert mode"
	switch g.mode {
	case Enabled:
		if g.door != DoorRevertEnabled {
			return g.decide(step, obs, refuse(ReasonOneWayDoor, "enabled is the one-way door (A3)"))
		}
	case Disabled:
		return g.decide(step, obs, refuse(ReasonWrongMode, "mode is already disabled"))
	}
	from := g.mode
	g.mode = Disabled
	return g.decideFrom(step, g.target, from, obs, nil)
}

// Enable walks through the one-way door compatible → enabled (G4).
func (g *Gate) Enable(obs Observation) error {
	const step = "enable"
	if g.mode != Compatible {
		return g.decide(step, obs, refuse(ReasonWrongMode, "enable needs compatible; mode is %s", g.mode))
	}
	if g.mutant != protocol.M9 {
		if why := fleetAt(obs, protocol.C); why != "" {
			return g.decide(step, obs, refuse(ReasonFleetNotC, "%s", why))
		}
	}
	g.mode = Enabled
	return g.decideFrom(step, g.target, Compatible, obs, nil)
}
