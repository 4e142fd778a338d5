package fencing

import (
	"embed"
	"fmt"

	"github.com/slotgate/slotgate/impl/client"
)

//go:embed lua
var luaFiles embed.FS

// Scripts is one script version's full operation set (§Per-phase operation
// table). lookup and known_generation share one script: both are reads of
// the same pair.
type Scripts struct {
	Name string
	// Phase is the script version's phase; zero means C. It fixes the
	// version-local key rule: O and C address one pair, A and B both.
	Phase    Phase
	Acquire  *client.Script
	Renew    *client.Script
	Release  *client.Script
	Lookup   *client.Script
	Validate *client.Script
}

func mustScript(path string) *client.Script {
	src, err := luaFiles.ReadFile("lua/" + path)
	if err != nil {
		panic(fmt.Sprintf("fencing: embedded script %s: %v", path, err))
	}
	return client.NewScript(path, string(src))
}

// PhaseC is the final, slot-clean script version: new keys only, no
// cross-slot access anywhere (§The protocol, C).
func PhaseC() Scripts { return Embedded().Phase(C) }

// Mutant names a known-bad variant of the C scripts. Mutants exist so the
// harness can prove its checkers fail: a checker that cannot fail is a defect.
type Mutant string

const (
	// MutantAcquireIgnoresLease: acquire skips the held-lease check (M1 class).
	MutantAcquireIgnoresLease Mutant = "acquire-ignores-lease"
	// MutantAcquireReusesGeneration: acquire never advances the counter (M3/M5 class).
	MutantAcquireReusesGeneration Mutant = "acquire-reuses-generation"
	// MutantRenewUnguarded: renew without the owner+generation guard.
	MutantRenewUnguarded Mutant = "renew-unguarded"
	// MutantReleaseUnguarded: release without the owner+generation guard.
	MutantReleaseUnguarded Mutant = "release-unguarded"
	// MutantAcquireHidesHolder: a refused acquire omits the holder's owner.
	MutantAcquireHidesHolder Mutant = "acquire-hides-holder"
)

// Mutants lists every script mutant.
var Mutants = []Mutant{MutantAcquireIgnoresLease, MutantAcquireReusesGeneration, MutantRenewUnguarded, MutantReleaseUnguarded, MutantAcquireHidesHolder}

// WithMutant returns the C scripts with one operation replaced by m.
func WithMutant(m Mutant) (Scripts, error) {
	s := PhaseC()
	s.Name = "C+" + string(m)
	switch m {
	case MutantAcquireIgnoresLease:
		s.Acquire = mustScript("mutants/acquire_ignores_lease.lua")
	case MutantAcquireReusesGeneration:
		s.Acquire = mustScript("mutants/acquire_reuses_generation.lua")
	case MutantRenewUnguarded:
		s.Renew = mustScript("mutants/renew_unguarded.lua")
	case MutantReleaseUnguarded:
		s.Release = mustScript("mutants/release_unguarded.lua")
	case MutantAcquireHidesHolder:
		s.Acquire = mustScript("mutants/acquire_hides_holder.lua")
	default:
		return Scripts{}, fmt.Errorf("unknown fencing mutant %q", m)
	}
	return s, nil
}
