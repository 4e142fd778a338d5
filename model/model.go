// Package model is an explicit-state model of the fencing migration (spec 000
// §The Fencing Migration, §Mechanized verification): the Go counterpart of
// RedisClusterFencingMigration.tla — one session, a few pods, per-pod upgrade
// and downgrade toward a target phase, emergency rollback, lease loss,
// B's renew-migrate, backfill, the reverse max-merge and the three-position
// mode variable — checked exhaustively by breadth-first search (explore.go).
//
// Two things make it more than a transliteration of the TLA+ spec:
//
//   - The Deployment Gate is not re-encoded: every phase, merge and mode step
//     asks impl/gate's own decision functions (gate.Restore + Advance,
//     Rollback, RecordBackfill, RecordReverseMerge, EnterCompatible, Enable,
//     RevertMode) over an Observation built from the model state, so the model
//     checks the gate that the suites and the operator actually run.
//   - The mutants are the same switch as the real code: a
//     protocol.MigrationMutant picks the gate rule impl/gate drops (M4, M6–M9)
//     and, through MigrationMutant.ScriptPhase, the acquire script that
//     fencing.ForPhaseMutant swaps (M1–M3, M5).
//
// The model does no I/O. The acquire semantics mirror the Lua scripts under
// impl/fencing/lua exactly (which keys the union check reads, which counters
// the max+1 reads, which lease key and counter are written), and the
// migration suite replays model traces against those scripts on a real node
// to keep the mirror honest (rows/fencingmigration/trace_test.go).
//
// # State counts against TLC
//
// With the spec's bounds (3 pods, MaxGen 4) the correct model has 17,494
// states generated and 5,837 distinct states, all 28 BFS levels deep; the
// spec reports TLC's 12,636 generated / 3,637 distinct. The .tla source is
// not in this repository (docs/spec/RedisClusterFencingMigration.tla is
// cited, not vendored), so the encodings cannot be diffed variable by
// variable. What we can account for:
//
//   - The gate's reverse-merged fact is a state variable here because
//     impl/gate keeps it (RecordReverseMerge, then Rollback into O). Folding
//     it away leaves 4,117 distinct states; the TLA+ model presumably merges
//     inside the rollback step or checks the counters instead.
//   - The remaining ~480 distinct states we cannot attribute without the
//     .tla. Candidates: impl/gate's own bookkeeping (a backfill is
//     recordable at every full-B state and records the fact even when the
//     counters are already equal), and which pod-level interleavings exist
//     (a pod here is replaced straight onto the target phase, as
//     traffic.Fleet does; under the correct gate that is always one adjacent
//     phase, so it matches a step-wise up/downgrade).
//   - Generated counts the initial state plus every enabled, state-changing
//     successor; stutter steps (an acquire that finds the lease held, an
//     expiry of an absent lease) are disabled, as in TLA+ where each action
//     is guarded, but a TLA+ action that rewrites a variable to its old
//     value would still count for TLC.
//   - The history variables add no states in the correct model: LastIssued
//     equals max(OldCtr, NewCtr) in every reachable state, and MonoOK and
//     SlotOK stay true.
package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/fencing/protocol"
	"github.com/slotgate/slotgate/impl/gate"
)

// MaxPods bounds Config.Pods: the pod phases live in a fixed array so a
// State is comparable and can key the visited set.
const MaxPods = 6

// Defaults are the spec's TLC configuration: Pods = {p1,p2,p3}, MaxGen = 4.
const (
	DefaultPods   = 3
	DefaultMaxGen = 4
)

// ErrConfig marks a configuration the model cannot run.
var ErrConfig = errors.New("bad model configuration")

// Config sizes the model and picks the mutant.
type Config struct {
	// Pods is the fleet size; zero means DefaultPods.
	Pods int
	// MaxGen is the finiteness bound: an acquire that would issue a
	// generation above it is disabled. Zero means DefaultMaxGen.
	MaxGen int
	// Mutant is one of the spec's M1–M9 (protocol.MigrationMutants) or
	// protocol.MutantNone for the correct protocol.
	Mutant protocol.MigrationMutant
	// Read is a read-side mutant (protocol.ReadMutants) or protocol.ReadCorrect:
	// it changes only the read rules InvReadSide judges, never a transition.
	Read protocol.ReadMutant
}

// Model is the migration's transition system under one Config.
type Model struct {
	cfg     Config
	actions []Action
}

// New validates cfg and returns its model.
func New(cfg Config) (*Model, error) {
	if cfg.Pods == 0 {
		cfg.Pods = DefaultPods
	}
	if cfg.MaxGen == 0 {
		cfg.MaxGen = DefaultMaxGen
	}
	if cfg.Pods < 1 || cfg.Pods > MaxPods {
		return nil, fmt.Errorf("%w: %d pods (want 1..%d)", ErrConfig, cfg.Pods, MaxPods)
	}
	if cfg.MaxGen < 1 {
		return nil, fmt.Errorf("%w: max generation %d (want >= 1)", ErrConfig, cfg.MaxGen)
	}
	known := cfg.Mutant == protocol.MutantNone
	for _, m := range protocol.MigrationMutants {
		known = known || m == cfg.Mutant
	}
	if !known {
		return nil, fmt.Errorf("%w: unknown mutant %q (want M1..M9)", ErrConfig, cfg.Mutant)
	}
	if cfg.Read != protocol.ReadCorrect && len(cfg.Read.Phases()) == 0 {
		return nil, fmt.Errorf("%w: unknown read mutant %q", ErrConfig, cfg.Read)
	}
	m := &Model{cfg: cfg}
	for _, k := range []ActionKind{Advance, Rollback, Backfill, ReverseMerge, EnterCompatible, Enable, RevertMode, ExpireOld, ExpireNew} {
		m.actions = append(m.actions, Action{Kind: k})
	}
	for p := 1; p <= cfg.Pods; p++ {
		for _, k := range []ActionKind{Upgrade, Downgrade, Acquire, MigrateB} {
			m.actions = append(m.actions, Action{Kind: k, Pod: p})
		}
	}
	return m, nil
}

// Config returns the model's configuration with defaults filled in.
func (m *Model) Config() Config { return m.cfg }

// Actions lists every action instance (per-pod actions once per pod).
func (m *Model) Actions() []Action { return append([]Action(nil), m.actions...) }

// Lease is one lease key's content: Owner 0 means no live lease (absent or
// expired); otherwise pod Owner (1-based) holds it at generation Gen.
type Lease struct {
	Owner int
	Gen   int
}

// Live says a lease is held.
func (l Lease) Live() bool { return l.Owner != 0 }

// String is the lease as the scripts store it ("gen:owner"), or "-".
func (l Lease) String() string {
	if !l.Live() {
		return "-"
	}
	return strconv.Itoa(l.Gen) + ":" + PodName(l.Owner)
}

// PodName is pod i's owner string ("p1", "p2", …), the owner the replay
// writes into the real lease keys.
func PodName(i int) string { return "p" + strconv.Itoa(i) }

// State is one state of the migration: every variable of the spec's TLA+
// model. It is comparable; explore.go hashes it directly.
type State struct {
	// Pods is each pod's running script phase (only the first Config.Pods
	// entries are used).
	Pods [MaxPods]protocol.Phase
	// Gate is the deployment's target, mode and backfilled/reverse-merged
	// facts, exactly as impl/gate keeps them.
	Gate gate.State
	// Old and New are the two lease keys; OldCtr and NewCtr the two
	// generation counters (0 = absent).
	Old, New       Lease
	OldCtr, NewCtr int
	// LastIssued is the highest generation issued so far; MonoOK is false
	// once a generation was issued that is not above it (T2's history
	// variables, lastIssued and monoOk in the TLA+ model).
	LastIssued int
	MonoOK     bool
	// SlotOK is false once an A/B script ran outside disabled mode or a
	// mode door opened where the C-gate conditions did not hold (T3).
	SlotOK bool
}

// Keyspace is the part of a State the real node holds: both lease keys and
// both counters. Trace conformance compares it with the real keyspace.
type Keyspace struct {
	Old, New       Lease
	OldCtr, NewCtr int
}

// Keyspace projects s onto the real keyspace.
func (s State) Keyspace() Keyspace {
	return Keyspace{Old: s.Old, New: s.New, OldCtr: s.OldCtr, NewCtr: s.NewCtr}
}

func (k Keyspace) String() string {
	return fmt.Sprintf("old=%s new=%s oldCtr=%d newCtr=%d", k.Old, k.New, k.OldCtr, k.NewCtr)
}

// Init is the initial state: every pod on O, the gate at O in disabled mode,
// no lease, both counters absent.
func (m *Model) Init() State {
	s := State{Gate: gate.New(gate.Options{Mutant: m.cfg.Mutant}).State(), MonoOK: true, SlotOK: true}
	for i := 0; i < m.cfg.Pods; i++ {
		s.Pods[i] = protocol.O
	}
	return s
}

// Format renders s on one line: pod phases, gate, keyspace.
func (m *Model) Format(s State) string {
	var b strings.Builder
	b.WriteString("pods=")
	for i := 0; i < m.cfg.Pods; i++ {
		b.WriteString(string(s.Pods[i]))
	}
	fmt.Fprintf(&b, " target=%s mode=%s", s.Gate.Target, s.Gate.Mode)
	if s.Gate.Backfilled {
		b.WriteString(" backfilled")
	}
	if s.Gate.ReverseMerged {
		b.WriteString(" reverse-merged")
	}
	fmt.Fprintf(&b, " %s lastIssued=%d", s.Keyspace(), s.LastIssued)
	if !s.MonoOK {
		b.WriteString(" !monoOk")
	}
	if !s.SlotOK {
		b.WriteString(" !slotOk")
	}
	return b.String()
}

// ActionKind names one transition of the model.
type ActionKind string

const (
	Upgrade         ActionKind = "Upgrade"         // a pod below the target is replaced by one running the target
	Downgrade       ActionKind = "Downgrade"       // a pod above the target is replaced by one running the target
	Advance         ActionKind = "Advance"         // the gate's advance to the next phase (rules 2, 3)
	Rollback        ActionKind = "RollbackPhase"   // the gate's emergency rollback one phase (rule 4)
	Acquire         ActionKind = "Acquire"         // a pod runs its phase's acquire script
	MigrateB        ActionKind = "MigrateB"        // a B pod's renew moves its own old-key lease to the new key
	ExpireOld       ActionKind = "ExpireOld"       // the old-key lease is lost (TTL expiry or release)
	ExpireNew       ActionKind = "ExpireNew"       // the new-key lease is lost (TTL expiry or release)
	Backfill        ActionKind = "Backfill"        // max-merge the old counter into the new (after full-B)
	ReverseMerge    ActionKind = "ReverseMerge"    // max-merge the new counter into the old (full-A, before O)
	EnterCompatible ActionKind = "EnterCompatible" // the G3 door
	Enable          ActionKind = "Enable"          // the G4 one-way door
	RevertMode      ActionKind = "RevertToDisabled"
)

// Action is one action instance; Pod (1-based) is set for per-pod actions.
type Action struct {
	Kind ActionKind
	Pod  int
}

func (a Action) String() string {
	if a.Pod == 0 {
		return string(a.Kind)
	}
	return string(a.Kind) + "(" + PodName(a.Pod) + ")"
}

// Writes says the action changes the real keyspace (the rest only move the
// fleet, the gate or the mode).
func (a Action) Writes() bool {
	switch a.Kind {
	case Acquire, MigrateB, ExpireOld, ExpireNew, Backfill, ReverseMerge:
		return true
	}
	return false
}

// Effect is what a keyspace action reported, for comparison with a real
// script's reply.
type Effect struct {
	// Acquired: the acquire won at Gen; Held: it found a live lease (Gen is
	// then the holder's generation).
	Acquired, Held bool
	Gen            int
	// Migrated: MigrateB moved the lease.
	Migrated bool
}

// acquireRule is one acquire script as data (spec 000 §Per-phase operation
// table): which lease keys the held-check reads, which counters the max+1
// reads, and which keyspace it writes (lease and counter).
type acquireRule struct {
	checkOld, checkNew bool
	readOld, readNew   bool
	writeNew           bool
}

// ruleFor mirrors impl/fencing/lua/{o,a,b,c}/acquire.lua and, for the
// phase protocol.MigrationMutant.ScriptPhase names, the mutant script under
// lua/mutants/migration.
func ruleFor(p protocol.Phase, mut protocol.MigrationMutant) acquireRule {
	var r acquireRule
	switch p {
	case protocol.O: // old key; INCR old ctr
		r = acquireRule{checkOld: true, readOld: true}
	case protocol.A: // union check; max(old,new)+1 → old ctr; write old key
		r = acquireRule{checkOld: true, checkNew: true, readOld: true, readNew: true}
	case protocol.B: // union check; max(old,new)+1 → new ctr; write new key
		r = acquireRule{checkOld: true, checkNew: true, readOld: true, readNew: true, writeNew: true}
	case protocol.C: // new key; INCR new ctr
		r = acquireRule{checkNew: true, readNew: true, writeNew: true}
	}
	if mut.ScriptPhase() != p {
		return r
	}
	switch mut {
	case protocol.M1: // m1_acquire_b.lua: checks the new lease only
		r.checkOld = false
	case protocol.M2: // m2_acquire_a.lua: checks the old lease only
		r.checkNew = false
	case protocol.M3: // m3_acquire_b.lua: INCR new ctr
		r.readOld = false
	case protocol.M5: // m5_acquire_a.lua: INCR old ctr
		r.readNew = false
	}
	return r
}

func (s State) observation(pods int) gate.Observation {
	obs := gate.Observation{Pods: make(map[string]protocol.Phase, pods)}
	for i := 0; i < pods; i++ {
		obs.Pods[PodName(i+1)] = s.Pods[i]
	}
	if s.Old.Live() {
		obs.OldLeases = 1
	}
	if s.New.Live() {
		obs.NewLeases = 1
	}
	return obs
}

// allAt says every pod runs p.
func (s State) allAt(pods int, p protocol.Phase) bool {
	for i := 0; i < pods; i++ {
		if s.Pods[i] != p {
			return false
		}
	}
	return true
}

// Apply takes action a in s. ok is false when a is disabled: the gate
// refused it, the pod is in the wrong phase, there is nothing to expire or
// migrate, or an acquire would exceed MaxGen. An acquire that finds a live
// lease is enabled and changes nothing (Effect.Held) — the scripts' "held"
// reply; Successors drops such stutter steps.
func (m *Model) Apply(s State, a Action) (next State, eff Effect, ok bool) {
	next = s
	g := gate.Restore(gate.Options{Mutant: m.cfg.Mutant}, s.Gate)
	obs := s.observation(m.cfg.Pods)
	pod := a.Pod - 1
	if a.Pod != 0 && (pod < 0 || pod >= m.cfg.Pods) {
		return s, eff, false
	}
	switch a.Kind {
	case Upgrade, Downgrade:
		cur, tgt := s.Pods[pod].Index(), s.Gate.Target.Index()
		if (a.Kind == Upgrade && cur >= tgt) || (a.Kind == Downgrade && cur <= tgt) {
			return s, eff, false
		}
		next.Pods[pod] = s.Gate.Target
		return next, eff, true
	case Advance:
		to, more := s.Gate.Target.Next()
		if !more || g.Advance(obs, to) != nil {
			return s, eff, false
		}
	case Rollback:
		to, more := s.Gate.Target.Prev()
		if !more || g.Rollback(obs, to) != nil {
			return s, eff, false
		}
	case Backfill:
		if g.RecordBackfill(obs) != nil {
			return s, eff, false
		}
		next.NewCtr = max(s.OldCtr, s.NewCtr)
	case ReverseMerge:
		if g.RecordReverseMerge(obs) != nil {
			return s, eff, false
		}
		next.OldCtr = max(s.OldCtr, s.NewCtr)
	case EnterCompatible:
		if g.EnterCompatible(obs) != nil {
			return s, eff, false
		}
		// T3: the door opens only where old-keyspace authority is drained
		// (backfilled, the new counter dominating, no old lease) and the
		// whole fleet runs C.
		if !(s.Gate.Backfilled && s.NewCtr >= s.OldCtr && !s.Old.Live() && s.allAt(m.cfg.Pods, protocol.C)) {
			next.SlotOK = false
		}
	case Enable:
		if g.Enable(obs) != nil {
			return s, eff, false
		}
		if !s.allAt(m.cfg.Pods, protocol.C) {
			next.SlotOK = false
		}
	case RevertMode:
		if g.RevertMode(obs) != nil {
			return s, eff, false
		}
	case ExpireOld:
		if !s.Old.Live() {
			return s, eff, false
		}
		next.Old = Lease{}
		return next, eff, true
	case ExpireNew:
		if !s.New.Live() {
			return s, eff, false
		}
		next.New = Lease{}
		return next, eff, true
	case MigrateB:
		// lua/b/renew.lua: own lease on the old key and the new key free →
		// DEL old, SET new, same generation.
		if s.Pods[pod] != protocol.B || s.Old.Owner != a.Pod || s.New.Live() {
			return s, eff, false
		}
		next.New, next.Old = s.Old, Lease{}
		if s.Gate.Mode != gate.Disabled { // a cross-slot script under slot rules
			next.SlotOK = false
		}
		return next, Effect{Migrated: true, Gen: s.Old.Gen}, true
	case Acquire:
		return m.acquire(s, a.Pod)
	default:
		return s, eff, false
	}
	next.Gate = g.State()
	return next, eff, true
}

func (m *Model) acquire(s State, owner int) (State, Effect, bool) {
	next := s
	p := s.Pods[owner-1]
	r := ruleFor(p, m.cfg.Mutant)
	if r.checkOld && s.Old.Live() { // the scripts return the first held key they read
		if p == protocol.B && r.checkNew && s.New.Live() {
			return s, Effect{Held: true, Gen: s.New.Gen}, true
		}
		return s, Effect{Held: true, Gen: s.Old.Gen}, true
	}
	if r.checkNew && s.New.Live() {
		return s, Effect{Held: true, Gen: s.New.Gen}, true
	}
	gen := 0
	if r.readOld {
		gen = s.OldCtr
	}
	if r.readNew {
		gen = max(gen, s.NewCtr)
	}
	gen++
	if gen > m.cfg.MaxGen {
		return s, Effect{}, false
	}
	if r.writeNew {
		next.NewCtr, next.New = gen, Lease{Owner: owner, Gen: gen}
	} else {
		next.OldCtr, next.Old = gen, Lease{Owner: owner, Gen: gen}
	}
	next.MonoOK = s.MonoOK && gen > s.LastIssued
	next.LastIssued = max(s.LastIssued, gen)
	if p.Dual() && s.Gate.Mode != gate.Disabled {
		next.SlotOK = false
	}
	return next, Effect{Acquired: true, Gen: gen}, true
}

// Transition is one enabled, state-changing step.
type Transition struct {
	Action Action
	Effect Effect
	Next   State
}

// Successors lists the enabled actions of s that change the state, in the
// fixed order of Actions (so BFS and the replays are deterministic).
func (m *Model) Successors(s State) []Transition {
	var out []Transition
	for _, a := range m.actions {
		next, eff, ok := m.Apply(s, a)
		if ok && next != s {
			out = append(out, Transition{Action: a, Effect: eff, Next: next})
		}
	}
	return out
}
