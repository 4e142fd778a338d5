package fencing

import "fmt"

// Mutants of the O, A and B renew and release scripts (spec 000 §Per-phase
// operation table: renew and release are owner+generation guarded in every
// phase; B's renew migrates an old-key lease keeping its generation, B's
// release falls back to the old key). C's guards have their own mutants
// (PauseMutants, Mutants); these are the cross-slot versions, run only on a
// disabled-mode node by the fencing-migration row.
const (
	// MutantORenewIgnoresGeneration: O renew guarded by the owner only.
	MutantORenewIgnoresGeneration Mutant = "o-renew-ignores-generation"
	// MutantARenewIgnoresGeneration: A renew guarded by the owner only.
	MutantARenewIgnoresGeneration Mutant = "a-renew-ignores-generation"
	// MutantOReleaseIgnoresGeneration: O release guarded by the owner only.
	MutantOReleaseIgnoresGeneration Mutant = "o-release-ignores-generation"
	// MutantBRenewIgnoresGeneration: B renew's in-place branch guarded by
	// the owner only.
	MutantBRenewIgnoresGeneration Mutant = "b-renew-ignores-generation"
	// MutantBReleaseIgnoresGeneration: B release guarded by the owner only,
	// on both keys.
	MutantBReleaseIgnoresGeneration Mutant = "b-release-ignores-generation"
	// MutantBRenewMigrateReissues: B's renew-migrate issues a fresh
	// generation for the moved lease instead of keeping its own.
	MutantBRenewMigrateReissues Mutant = "b-renew-migrate-reissues"
	// MutantBRenewMigrateKeepsOld: B's renew-migrate copies the lease to the
	// new key and leaves it on the old one: two live leases.
	MutantBRenewMigrateKeepsOld Mutant = "b-renew-migrate-keeps-old"
	// MutantBReleaseNewKeyOnly: B's release never falls back to the old
	// key, so a lease taken under A lingers there until its TTL.
	MutantBReleaseNewKeyOnly Mutant = "b-release-new-key-only"
)

// LeaseMutants lists the O/A/B renew and release mutants.
var LeaseMutants = []Mutant{MutantORenewIgnoresGeneration, MutantARenewIgnoresGeneration, MutantOReleaseIgnoresGeneration, MutantBRenewIgnoresGeneration, MutantBReleaseIgnoresGeneration, MutantBRenewMigrateReissues, MutantBRenewMigrateKeepsOld, MutantBReleaseNewKeyOnly}

// leaseMutant is where a lease mutant sits: its phase, operation and file.
type leaseMutant struct {
	phase Phase
	op    Op
	file  string
}

var leaseMutants = map[Mutant]leaseMutant{
	MutantORenewIgnoresGeneration:   {O, OpRenew, "mutants/lease/o_renew_ignores_generation.lua"},
	MutantARenewIgnoresGeneration:   {A, OpRenew, "mutants/lease/a_renew_ignores_generation.lua"},
	MutantOReleaseIgnoresGeneration: {O, OpRelease, "mutants/lease/o_release_ignores_generation.lua"},
	MutantBRenewIgnoresGeneration:   {B, OpRenew, "mutants/lease/b_renew_ignores_generation.lua"},
	MutantBReleaseIgnoresGeneration: {B, OpRelease, "mutants/lease/b_release_ignores_generation.lua"},
	MutantBRenewMigrateReissues:     {B, OpRenew, "mutants/lease/b_renew_migrate_reissues.lua"},
	MutantBRenewMigrateKeepsOld:     {B, OpRenew, "mutants/lease/b_renew_migrate_keeps_old.lua"},
	MutantBReleaseNewKeyOnly:        {B, OpRelease, "mutants/lease/b_release_new_key_only.lua"},
}

// LeaseMutantPhase is the phase whose script lease mutant m replaces.
func LeaseMutantPhase(m Mutant) (Phase, error) {
	lm, ok := leaseMutants[m]
	if !ok {
		return "", fmt.Errorf("unknown lease mutant %q", m)
	}
	return lm.phase, nil
}

// WithLeaseMutant returns the set's scripts of m's phase with m's renew or
// release in place of the set's own; every other operation is the set's.
func (s *ScriptSet) WithLeaseMutant(m Mutant) (Scripts, error) {
	lm, ok := leaseMutants[m]
	if !ok {
		return Scripts{}, fmt.Errorf("unknown lease mutant %q", m)
	}
	sc := s.Phase(lm.phase)
	sc.Name = string(lm.phase) + "+" + string(m)
	switch lm.op {
	case OpRenew:
		sc.Renew = mustScript(lm.file)
	case OpRelease:
		sc.Release = mustScript(lm.file)
	}
	return sc, nil
}
