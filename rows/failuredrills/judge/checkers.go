// Package judge holds the failure-drills row's records and pure checkers
// (spec 000 §Conformance, Failure drills; §Client Architecture: "a dead
// primary halts dispatch pending topology refresh"): the drill workload's
// writes and read-backs, the failovers, partitions and replica kills on the
// scenario clock, what each did to dispatch (DrillHalts, PartitionHalts,
// SubscriptionHalts, ReplicaStats), the known-bad variants the controls
// judge, and the seven checkers. The subscription client's recorded history
// (history.SubscriptionHistory) stays in history: the subscriptions row
// records it too. Each checker is defined under a stable name
// (check.Define); the aliases are the names earlier histories stored it
// under.
package judge

import (
	"time"

	"github.com/slotgate/slotgate/check"
)

// DispatchInput is every drill's measured halts and the healthy shards'
// tolerances (drillDispatch).
type DispatchInput struct {
	Halts      []DrillHalt
	MaxGap     time.Duration
	MaxFailPct float64
}

// AccountedInput is the drill workload's writes and read-backs, the drills,
// how long before a kill an acknowledged write may be lost, and the fewest
// acknowledged writes that make a verdict (drillAccounted).
type AccountedInput struct {
	Ops    []DrillOp
	Drills []Drill
	Window time.Duration
	MinOps int
}

// HaltBudgetInput is every role's halt in every drill and the budget they
// must end within (haltsWithin).
type HaltBudgetInput struct {
	Halts  []RoleHalt
	Budget time.Duration
}

// PartitionDispatchInput is one client's partition runs and the healthy
// shards' tolerances (partitionDispatch).
type PartitionDispatchInput struct {
	Runs       []PartitionRun
	MaxGap     time.Duration
	MaxFailPct float64
}

// PartitionAccountedInput is one client's partition runs and the fewest
// acknowledged writes that make a verdict (partitionAccounted).
type PartitionAccountedInput struct {
	Runs   []PartitionRun
	MinOps int
}

// ReplicaReadsInput is the replica-repair workload's operations, the replica
// kill, the drilled shard's tolerances and the fewest reads and writes that
// make a verdict (replicaReadsKept).
type ReplicaReadsInput struct {
	Ops        []ReplicaOp
	Drill      ReplicaDrill
	MaxGap     time.Duration
	MaxFailPct float64
	MinOps     int
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay. ReplicaResynced took one argument, its ReplicaSync, which
// is its input as it was.
var (
	DrillDispatch = check.Define("failure-drills/dispatch", func(in DispatchInput) check.Result {
		return drillDispatch(in.Halts, in.MaxGap, in.MaxFailPct)
	}, "DrillDispatch")
	DrillAccounted = check.Define("failure-drills/accounted", func(in AccountedInput) check.Result {
		return drillAccounted(in.Ops, in.Drills, in.Window, in.MinOps)
	}, "DrillAccounted")
	HaltsWithin = check.Define("failure-drills/halt-budget", func(in HaltBudgetInput) check.Result {
		return haltsWithin(in.Halts, in.Budget)
	}, "HaltsWithin")
	PartitionDispatch = check.Define("failure-drills/partition-dispatch", func(in PartitionDispatchInput) check.Result {
		return partitionDispatch(in.Runs, in.MaxGap, in.MaxFailPct)
	}, "PartitionDispatch")
	PartitionAccounted = check.Define("failure-drills/partition-accounted", func(in PartitionAccountedInput) check.Result {
		return partitionAccounted(in.Runs, in.MinOps)
	}, "PartitionAccounted")
	ReplicaReadsKept = check.Define("failure-drills/replica-reads-kept", func(in ReplicaReadsInput) check.Result {
		return replicaReadsKept(in.Ops, in.Drill, in.MaxGap, in.MaxFailPct, in.MinOps)
	}, "ReplicaReadsKept")
	ReplicaResynced = check.Define("failure-drills/replica-resynced", replicaResynced, "ReplicaResynced")
)
