package judge

import (
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// KeyspaceDrainedInput is the observer's atomic samples and the window
// [Since, By] a keyspace must drain in (OldKeyspaceDrained,
// NewKeyspaceDrained).
type KeyspaceDrainedInput struct {
	Samples   []history.KeyspaceSample
	Since, By time.Duration
}

// DrainBoundedInput is a gate step asked while the old keyspace could not
// drain, the observer's samples, the phase that must not run meanwhile,
// the operator's bound and its tolerance, and the fewest observations that
// make a verdict (DrainBounded).
type DrainBoundedInput struct {
	Attempt    DrainAttempt
	Samples    []history.KeyspaceSample
	Target     string
	Bound      time.Duration
	Tolerance  time.Duration
	MinSamples int
}

// GenerationsCarriedInput is a fleet's directory calls, the start Since of
// the phase that ran ahead, the counter-moving step At and that phase
// (GenerationsCarried).
type GenerationsCarriedInput struct {
	Ops   []history.MigrationOp
	Since time.Duration
	At    time.Duration
	Ahead string
}

// ReleaseHandoversInput is the release-handover probes' records, the phase
// pairs that must be judged ("A→B") and the fewest records per pair
// (ReleaseHandovers).
type ReleaseHandoversInput struct {
	Handovers []Handover
	Need      []string
	MinPer    int
}

// PodValidatesInput is a fleet's directory calls, the lease TTL and its
// slack, and the fewest judged validates that make a verdict
// (PodValidates).
type PodValidatesInput struct {
	Ops       []history.MigrationOp
	TTL       time.Duration
	Slack     time.Duration
	MinJudged int
}

// PodValidatesOnInput is PodValidatesInput over one lane's pods, named
// (PodValidatesOn).
type PodValidatesOnInput struct {
	Lane      string
	Ops       []history.MigrationOp
	TTL       time.Duration
	Slack     time.Duration
	MinJudged int
}

// StragglerIssuesCarriedInput is a fleet's directory calls, the rollout's
// stragglers and when the backfill began (StragglerIssuesCarried).
type StragglerIssuesCarriedInput struct {
	Ops        []history.MigrationOp
	Stragglers []history.Straggler
	BackfillAt time.Duration
}

// PhasesAdjacentInput is the observer's fleet samples and the fewest that
// make a verdict (PhasesAdjacent).
type PhasesAdjacentInput struct {
	Samples    []history.KeyspaceSample
	MinSamples int
}

// StragglersDrainedInput is a fleet's directory calls, its stragglers, the
// backfill (After), the C-gate's opening (GateAt), and the lease TTL and its
// slack (StragglersDrained).
type StragglersDrainedInput struct {
	Ops        []history.MigrationOp
	Stragglers []history.Straggler
	After      time.Duration
	GateAt     time.Duration
	TTL        time.Duration
	Slack      time.Duration
}

// ReadScriptsDivergeInput is one read mutant's replays and the name of the
// model's read-side invariant (ReadScriptsDiverge).
type ReadScriptsDivergeInput struct {
	Mutant    ReadMutantReplay
	Invariant string
}

// The row's checkers, by stable name. Each input struct lists the old
// reflective checker's arguments in order (a one-argument checker takes
// that argument itself), so histories stored under the old names, the
// aliases, replay.
var (
	OldKeyspaceDrained = check.Define("fencing-migration/old-keyspace-drained", func(in KeyspaceDrainedInput) check.Result {
		return oldKeyspaceDrained(in.Samples, in.Since, in.By)
	}, "OldKeyspaceDrained")
	NewKeyspaceDrained = check.Define("fencing-migration/new-keyspace-drained", func(in KeyspaceDrainedInput) check.Result {
		return newKeyspaceDrained(in.Samples, in.Since, in.By)
	}, "NewKeyspaceDrained")
	DrainBounded = check.Define("fencing-migration/drain-bounded", func(in DrainBoundedInput) check.Result {
		return drainBounded(in.Attempt, in.Samples, in.Target, in.Bound, in.Tolerance, in.MinSamples)
	}, "DrainBounded")
	GenerationsCarried = check.Define("fencing-migration/generations-carried", func(in GenerationsCarriedInput) check.Result {
		return generationsCarried(in.Ops, in.Since, in.At, in.Ahead)
	}, "GenerationsCarried")
	ReleaseHandovers = check.Define("fencing-migration/release-handovers", func(in ReleaseHandoversInput) check.Result {
		return releaseHandovers(in.Handovers, in.Need, in.MinPer)
	}, "ReleaseHandovers")
	PodValidates = check.Define("fencing-migration/pod-validates", func(in PodValidatesInput) check.Result {
		return podValidates(in.Ops, in.TTL, in.Slack, in.MinJudged)
	}, "PodValidates")
	PodValidatesOn = check.Define("fencing-migration/pod-validates-on", func(in PodValidatesOnInput) check.Result {
		return podValidatesOn(in.Lane, in.Ops, in.TTL, in.Slack, in.MinJudged)
	}, "PodValidatesOn")
	StragglerIssuesCarried = check.Define("fencing-migration/straggler-issues-carried", func(in StragglerIssuesCarriedInput) check.Result {
		return stragglerIssuesCarried(in.Ops, in.Stragglers, in.BackfillAt)
	}, "StragglerIssuesCarried")
	PhasesAdjacent = check.Define("fencing-migration/phases-adjacent", func(in PhasesAdjacentInput) check.Result {
		return phasesAdjacent(in.Samples, in.MinSamples)
	}, "PhasesAdjacent")
	StragglersDrained = check.Define("fencing-migration/stragglers-drained", func(in StragglersDrainedInput) check.Result {
		return stragglersDrained(in.Ops, in.Stragglers, in.After, in.GateAt, in.TTL, in.Slack)
	}, "StragglersDrained")
	GateModeDoors      = check.Define("fencing-migration/gate-mode-doors", gateModeDoors, "GateModeDoors")
	GateDoors          = check.Define("fencing-migration/gate-doors", gateDoors, "GateDoors")
	TraceConformance   = check.Define("fencing-migration/trace-conformance", traceConformance, "TraceConformance")
	ScriptsDiverge     = check.Define("fencing-migration/scripts-diverge", scriptsDiverge, "ScriptsDiverge")
	ReadConformance    = check.Define("fencing-migration/read-conformance", readConformance, "ReadConformance")
	ReadScriptsDiverge = check.Define("fencing-migration/read-scripts-diverge", func(in ReadScriptsDivergeInput) check.Result {
		return readScriptsDiverge(in.Mutant, in.Invariant)
	}, "ReadScriptsDiverge")
)
