package check

import (
	"time"

	"github.com/slotgate/slotgate/history"
)

// The checkers several rows share, each defined under a stable name (the
// name its result carries) so a scenario judges through it — a wrong input
// is a compile error — and `slotgate check --from` replays the stored call.
// The alias is the Go function name histories written before these were
// typed stored the call under, one JSON input per argument: each input
// struct lists those arguments in order, so such a call replays into its
// fields positionally. A checker of one argument takes it bare, as it was
// stored. The plain functions stay for the checkers that compose them.

// FencingLinearizableInput is FencingLinearizable's arguments.
type FencingLinearizableInput struct {
	Ops     []history.FencingOp
	Timeout time.Duration
}

// GenerationsIncreaseInput is GenerationsIncrease's arguments.
type GenerationsIncreaseInput struct {
	Ops     []history.FencingOp
	StepOne bool
}

// MigrationSingleAuthorityInput is MigrationSingleAuthority's arguments.
type MigrationSingleAuthorityInput struct {
	Ops        []history.MigrationOp
	TTL, Slack time.Duration
}

// ObservedSingleAuthorityInput is ObservedSingleAuthority's arguments.
type ObservedSingleAuthorityInput struct {
	Samples    []history.KeyspaceSample
	MinSamples int
}

// MigrationErrorsInput is MigrationErrors' arguments.
type MigrationErrorsInput struct {
	Ops    []history.MigrationOp
	MinOps int
}

// MigrationErrorsAroundInput is MigrationErrorsAround's arguments.
type MigrationErrorsAroundInput struct {
	Ops    []history.MigrationOp
	Faults []Span
	Settle time.Duration
	MinOps int
}

// NoErrorsInput is NoErrors' arguments.
type NoErrorsInput struct {
	Outcomes []history.OpOutcome
	MinOps   int
}

// RefusedWithInput is RefusedWith's arguments.
type RefusedWithInput struct {
	Outcomes []history.OpOutcome
	Want     string
}

// LoudRefusalInput is LoudRefusal's arguments.
type LoudRefusalInput struct {
	Outcomes []history.OpOutcome
	Want     string
}

// PausedPodsFencedInput is PausedPodsFenced's arguments.
type PausedPodsFencedInput struct {
	Ops        []history.MigrationOp
	Pauses     []history.PodPause
	TTL, Slack time.Duration
}

// ReadSideInput is ReadSide's arguments.
type ReadSideInput struct {
	Ops    []history.ReadOp
	Issued []history.FencingOp
	Opts   ReadSideOptions
}

// HappenedInput is Happened's arguments.
type HappenedInput struct {
	Name  string
	Count int
	None  string
}

// The shared checkers, by stable name.
var (
	FencingLinearizableCheck = Define("fencing-linearizable", func(in FencingLinearizableInput) Result {
		return FencingLinearizable(in.Ops, in.Timeout)
	}, "FencingLinearizable")
	SingleAuthorityCheck     = Define("single-authority", SingleAuthority, "SingleAuthority")
	GenerationsIncreaseCheck = Define("generations-increase", func(in GenerationsIncreaseInput) Result {
		return GenerationsIncrease(in.Ops, in.StepOne)
	}, "GenerationsIncrease")
	GuardsHoldCheck        = Define("guards-hold", GuardsHold, "GuardsHold")
	FencingInvariantsCheck = Define("fencing-invariants", FencingInvariants, "FencingInvariants")

	MigrationSingleAuthorityCheck = Define("migration-single-authority", func(in MigrationSingleAuthorityInput) Result {
		return MigrationSingleAuthority(in.Ops, in.TTL, in.Slack)
	}, "MigrationSingleAuthority")
	MigrationGenerationsCheck    = Define("migration-generations", MigrationGenerations, "MigrationGenerations")
	ObservedSingleAuthorityCheck = Define("observed-single-authority", func(in ObservedSingleAuthorityInput) Result {
		return ObservedSingleAuthority(in.Samples, in.MinSamples)
	}, "ObservedSingleAuthority")
	MigrationErrorsCheck = Define("migration-errors", func(in MigrationErrorsInput) Result {
		return MigrationErrors(in.Ops, in.MinOps)
	}, "MigrationErrors")
	MigrationErrorsAroundCheck = Define("migration-errors-around", func(in MigrationErrorsAroundInput) Result {
		return MigrationErrorsAround(in.Ops, in.Faults, in.Settle, in.MinOps)
	}, "MigrationErrorsAround")

	NoErrorsCheck = Define("no-errors", func(in NoErrorsInput) Result {
		return NoErrors(in.Outcomes, in.MinOps)
	}, "NoErrors")
	RefusedWithCheck = Define("refused-with", func(in RefusedWithInput) Result {
		return RefusedWith(in.Outcomes, in.Want)
	}, "RefusedWith")
	LoudRefusalCheck = Define("loud-refusal", func(in LoudRefusalInput) Result {
		return LoudRefusal(in.Outcomes, in.Want)
	}, "LoudRefusal")
	HappenedCheck = Define("happened", func(in HappenedInput) Result {
		return Happened(in.Name, in.Count, in.None)
	}, "Happened")

	PausedPodsFencedCheck = Define("paused-pods-fenced", func(in PausedPodsFencedInput) Result {
		return PausedPodsFenced(in.Ops, in.Pauses, in.TTL, in.Slack)
	}, "PausedPodsFenced")
	ReadSideCheck = Define("read-side", func(in ReadSideInput) Result {
		return ReadSide(in.Ops, in.Issued, in.Opts)
	}, "ReadSide")
	PairsShareSlotCheck = Define("pairs-share-slot", PairsShareSlot, "PairsShareSlot")
)
