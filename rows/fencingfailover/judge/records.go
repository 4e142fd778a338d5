// Package judge holds the fencing-failover row's checker inputs and pure
// checkers (spec 000 §Safety theorems T1, T2 on the production topology,
// §Problem Statement: one primary + replica, automatic failover): a C-phase
// directory history or a staged deploy recorded across primary failovers,
// judged over its fault windows, each anomaly charged to the fault it fell
// in. The histories are history's shared records (FencingOp, MigrationOp,
// KeyspaceSample, FaultWindow); the lease model they are judged by is
// check's (MigrationLeases). Each checker is defined under a stable name
// (check.Define), so a scenario's judgement replays offline (`slotgate check
// --from`); the aliases are the names earlier histories stored it under.
package judge

import (
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// FailoverPremise is what FencingAcrossFailover needs of its input to give a
// verdict; a history that breaks it is Unknown, with the premise named.
type FailoverPremise struct {
	// LeaseTTL is the directory's lease TTL: the model does not expire
	// leases, so the history must end before the first lease could lapse.
	LeaseTTL time.Duration
	// MinCalledInside is how many calls each fault window must hold
	// (called between its start and end, whatever their outcome): the
	// fault met traffic, not only an idle directory. The history must also
	// hold answered calls before the first fault.
	MinCalledInside int
}

// MigrationFailoverPremise is what MigrationAcrossFailover needs of its
// input to give a verdict; a history that breaks it is Unknown, with the
// premise named.
type MigrationFailoverPremise struct {
	// TTL and Slack are the fleet's lease TTL and the clock slack of
	// check.MigrationSingleAuthority.
	TTL, Slack time.Duration
	// MinCalledInside is how many fleet calls each fault window must hold
	// (called between its start and end, whatever their outcome).
	MinCalledInside int
	// MinSamples is how many atomic keyspace observations the run needs.
	MinSamples int
	// Aims are the deploy steps the faults were injected inside, one per
	// fault window in start order: a window that does not overlap its step
	// left that step untried (the fault came too late or the step ended
	// before it).
	Aims []Aim
}

// Aim is one deploy step a fault was aimed at, on the scenario clock.
type Aim struct {
	Step       string
	Start, End time.Duration
}

// FailoverRun is a C-phase directory history across failovers, its fault
// windows and the premise a verdict needs (FencingAcrossFailover).
type FailoverRun struct {
	Ops     []history.FencingOp
	Windows []history.FaultWindow
	Premise FailoverPremise
}

// ResumeRun is a directory history across failovers, its fault windows and
// the halt budget each fault is judged against (DirectoryResumes).
type ResumeRun struct {
	Ops     []history.FencingOp
	Windows []history.FaultWindow
	Budget  time.Duration
}

// DeployRun is a staged deploy recorded across failovers: the fleet's calls
// (the audit's read-backs included), the observer's atomic samples, the
// fault windows and the premise a verdict needs (MigrationAcrossFailover).
type DeployRun struct {
	Ops     []history.MigrationOp
	Samples []history.KeyspaceSample
	Windows []history.FaultWindow
	Premise MigrationFailoverPremise
}

// LeaseRun is a fleet's history across failovers, its fault windows, and
// the fleet's lease TTL and clock slack (LeasesKeptAcrossFailover).
type LeaseRun struct {
	Ops     []history.MigrationOp
	Windows []history.FaultWindow
	TTL     time.Duration
	Slack   time.Duration
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	FencingAcrossFailover = check.Define("fencing-failover/fencing-across-failover", func(in FailoverRun) check.Result {
		return fencingAcrossFailover(in.Ops, in.Windows, in.Premise)
	}, "FencingAcrossFailover")
	DirectoryResumes = check.Define("fencing-failover/directory-resumes", func(in ResumeRun) check.Result {
		return directoryResumes(in.Ops, in.Windows, in.Budget)
	}, "DirectoryResumes")
	MigrationAcrossFailover = check.Define("fencing-failover/migration-across-failover", func(in DeployRun) check.Result {
		return migrationAcrossFailover(in.Ops, in.Samples, in.Windows, in.Premise)
	}, "MigrationAcrossFailover")
	LeasesKeptAcrossFailover = check.Define("fencing-failover/leases-kept-across-failover", func(in LeaseRun) check.Result {
		return leasesKeptAcrossFailover(in.Ops, in.Windows, in.TTL, in.Slack)
	}, "LeasesKeptAcrossFailover")
)
