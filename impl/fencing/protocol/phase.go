// Package protocol is the fencing protocol's vocabulary (spec 000 §The
// protocol, §Per-phase operation table, §Mechanized verification): phases,
// validate's verdicts, the key rules, and the names of the known-bad
// variants. Plain values that link no client, so the persisted history, the
// explicit-state model, the Deployment Gate and the checkers speak it
// without linking a client library; package fencing runs the scripts.
package protocol

// Phase is a script version of the fencing migration (spec 000 §The
// protocol). The fleet deploys them in order O → A → B → C; rollback walks
// back one adjacent phase at a time (§Deployment Gate rule 4).
type Phase string

const (
	O Phase = "O" // legacy: old keys only
	A Phase = "A" // union lease check, lease on the old key, max(old,new)+1 → old ctr
	B Phase = "B" // union lease check, lease on the new key, max(old,new)+1 → new ctr; renew migrates
	C Phase = "C" // new keys only; slot-clean
)

// Phases lists the phases in deploy order.
var Phases = []Phase{O, A, B, C}

// Index is the phase's position in deploy order (O=0 … C=3), also the value
// of the buzz_fencing_phase gauge; -1 for an unknown phase.
func (p Phase) Index() int {
	for i, q := range Phases {
		if q == p {
			return i
		}
	}
	return -1
}

// Next is the phase after p, and false after C.
func (p Phase) Next() (Phase, bool) {
	i := p.Index()
	if i < 0 || i+1 >= len(Phases) {
		return "", false
	}
	return Phases[i+1], true
}

// Prev is the phase before p, and false before O.
func (p Phase) Prev() (Phase, bool) {
	i := p.Index()
	if i <= 0 {
		return "", false
	}
	return Phases[i-1], true
}

// Dual says the phase's scripts declare both key pairs (old then new): the
// cross-slot A and B versions, legal only with cluster mode disabled (A2).
func (p Phase) Dual() bool { return p == A || p == B }

// PhaseFromIndex is the inverse of Index (the gauge's value back to a phase).
func PhaseFromIndex(i int) (Phase, bool) {
	if i < 0 || i >= len(Phases) {
		return "", false
	}
	return Phases[i], true
}

// MigrationMutant names one of the spec's nine mutations (spec 000
// §Mechanized verification), each a known-bad variant the conformance suite
// must kill. M1–M3 and M5 are script variants (fencing.ForPhaseMutant); M4 and M6–M9
// switch off a Deployment Gate rule (impl/gate).
type MigrationMutant string

const (
	MutantNone MigrationMutant = ""
	M1         MigrationMutant = "M1" // AcquireB drops the old-lease check → two owners
	M2         MigrationMutant = "M2" // AcquireA drops the new-lease check → two owners
	M3         MigrationMutant = "M3" // AcquireB issues newGen+1 without max-merge → generation reuse
	M4         MigrationMutant = "M4" // C-gate dropped (no backfill/drain requirement) → C acquires over a live old lease
	M5         MigrationMutant = "M5" // AcquireA drops the union max-merge read → reuse
	M6         MigrationMutant = "M6" // rollback into O drops the new-keyspace drain check → fork
	M7         MigrationMutant = "M7" // rollback into O drops the reverse max-merge → O re-issues B's generations
	M8         MigrationMutant = "M8" // rollback allowed past a running downgrade → skipped-phase coexistence
	M9         MigrationMutant = "M9" // compatible entered without the fleet fully on C → CROSSSLOT
)

// MigrationMutants lists M1–M9 in order.
var MigrationMutants = []MigrationMutant{M1, M2, M3, M4, M5, M6, M7, M8, M9}

// Script says the mutant is a script variant (the rest are gate variants).
func (m MigrationMutant) Script() bool { return m == M1 || m == M2 || m == M3 || m == M5 }

// ScriptPhase is the phase whose acquire script the mutant replaces — B for
// M1 and M3, A for M2 and M5 — and "" for the gate mutants. fencing.ForPhaseMutant
// (the real scripts) and the explicit-state model (model/) share this one
// switch, so a mutant means the same thing to both.
func (m MigrationMutant) ScriptPhase() Phase {
	switch m {
	case M1, M3:
		return B
	case M2, M5:
		return A
	}
	return ""
}

// Trips is the invariant the spec says the mutant violates.
func (m MigrationMutant) Trips() string {
	switch m {
	case M3, M5, M7:
		return "Inv_Monotonic"
	case M9:
		return "Inv_SlotRulesSafe"
	case MutantNone:
		return ""
	}
	return "Inv_SingleAuthority"
}

// PhaseGaugeName is the metric a pod exports its script phase under (spec
// 000 §Deployment Gate rule 2: the gate checks behaviour, not an image tag).
const PhaseGaugeName = "buzz_fencing_phase"
