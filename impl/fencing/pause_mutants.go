package fencing

import "fmt"

// Mutants of the write-side guards and the fence that a paused pod exposes
// (spec 000 §Safety theorems; the classic fencing fault: a pod frozen past
// its lease TTL resumes acting on what it believed). Each is a known-bad
// variant of one C script; the fencing-scripts and fencing-migration rows
// run them as negative controls of the paused-pod checker.
const (
	// MutantRenewIgnoresGeneration: renew guarded by the owner only — a
	// delayed renew of an old generation extends the owner's newer lease.
	MutantRenewIgnoresGeneration Mutant = "renew-ignores-generation"
	// MutantReleaseIgnoresGeneration: release guarded by the owner only — a
	// delayed release of an old generation frees the owner's newer lease.
	MutantReleaseIgnoresGeneration Mutant = "release-ignores-generation"
	// MutantFenceOffByOne: validate_fenced_header as a bare generation
	// comparison with its bound off by one — a superseded frame passes.
	MutantFenceOffByOne Mutant = "fence-off-by-one"
)

// PauseMutants lists the paused-pod mutants.
var PauseMutants = []Mutant{MutantRenewIgnoresGeneration, MutantReleaseIgnoresGeneration, MutantFenceOffByOne}

// WithPauseMutant returns the C scripts with one operation replaced by the
// paused-pod mutant m.
func WithPauseMutant(m Mutant) (Scripts, error) {
	s := PhaseC()
	s.Name = "C+" + string(m)
	switch m {
	case MutantRenewIgnoresGeneration:
		s.Renew = mustScript("mutants/pause/renew_ignores_generation.lua")
	case MutantReleaseIgnoresGeneration:
		s.Release = mustScript("mutants/pause/release_ignores_generation.lua")
	case MutantFenceOffByOne:
		s.Validate = mustScript("mutants/pause/validate_off_by_one.lua")
	default:
		return Scripts{}, fmt.Errorf("unknown paused-pod mutant %q", m)
	}
	return s, nil
}
