package gomut

import "github.com/slotgate/slotgate/report"

// DefaultTargets is what `slotgate mutate` mutates in Go when no target is
// named: the guard and filter code of the rows' packages, function
// by function, so the mutant count — and a smoke run — stays bounded.
// Left out on purpose: constructors' option defaulting (New, withDefaults:
// a default that is never zero in the rows), the legacy SCAN discovery and
// the decoders and switches that exist only for a negative control
// (ScanReady, decodeTrusting, ForPhaseMutant, WithReadMutant: mutating them
// tests the controls, not the implementation), metrics and String methods.
// Rows are the rows whose suites reach the functions; each mutant runs only
// those.
var DefaultTargets = []Target{
	{
		// Spec 000 §Per-phase operation table: how the Go side reads the
		// scripts' replies (won/gen, renew's 0/1/2, the verdict) and which
		// keys the migration counts.
		Package: "impl/fencing",
		Funcs: []string{"Directory.Acquire", "Directory.Renew", "Directory.Release",
			"Directory.Lookup", "Directory.ValidateFencedHeader",
			"parseSession", "scanAll"},
		Rows: []report.RowID{report.RowFencingScripts, report.RowFencingMigration},
	},
	{
		// Spec 000 §The protocol: the deploy order the gate walks, one
		// adjacent phase at a time.
		Package: "impl/fencing/protocol",
		Funcs:   []string{"Phase.Next", "Phase.Prev"},
		Rows:    []report.RowID{report.RowFencingScripts, report.RowFencingMigration},
	},
	{
		// Spec 000 §Deployment Gate, rules 2–5: every refusal.
		Package: "impl/gate",
		Funcs: []string{"Gate.Advance", "Gate.Rollback", "Gate.EnterCompatible", "Gate.Enable", "Gate.RevertMode",
			"Gate.RecordBackfill", "Gate.RecordReverseMerge", "fleetAt", "Gate.fleetRefusal", "countAt"},
		Rows: []report.RowID{report.RowFencingMigration},
		// DrainTimer (and its clock, now) is the known-bad timer C-gate;
		// the others select the known-bad gates of rules 2(a), 2(b), 4
		// and the mode doors.
		Controls: []string{"drainTimer", "now", "keepBackfill", "ignoreTerm", "majority", "door"},
	},
	{
		// Spec 000 §Mesh Registry Discovery: the live-score range, the
		// record TTL and index score, the attestation filter.
		Package: "impl/registry",
		Funcs:   []string{"Registry.Heartbeat", "Registry.Discover", "Registry.fetch", "Decode"},
		Rows:    []report.RowID{report.RowRegistry},
	},
	{
		// Spec 000 §Conformance, Presence MGET: the per-slot split, the
		// scatter back to positions, the TRYAGAIN retry budget.
		Package:  "impl/presence",
		Funcs:    []string{"Read", "readPart", "values", "bySlot"},
		Rows:     []report.RowID{report.RowPresenceMGet},
		Controls: []string{"ReadSingleMGet", "ReadNilOnFailure", "ReadConcatenated", "ReadNoRetry"},
	},
	{
		// Spec 000 §Client Architecture (subscriptions): routing a message
		// to the subscriptions that want it, delivery, resubscribe.
		Package: "impl/pubsub",
		Funcs: []string{"Relay.deliver", "Relay.routeLocked", "Relay.recover", "Relay.current",
			"Relay.dropped", "Relay.resubscribed", "Relay.updateHealthLocked"},
		Rows: []report.RowID{report.RowSubscriptions},
	},
	{
		// Spec 002 §3.6 and §4: the audit queue's caps, eviction, age
		// ejection, take/requeue and the resume discard.
		Package: "impl/marconi/audit",
		Funcs: []string{"Queue.Offer", "Queue.Take", "Queue.Requeue", "Queue.DiscardThrough",
			"tenantQueue.offer", "tenantQueue.fitsLocked", "tenantQueue.expireLocked",
			"tenantQueue.signalReadyLocked", "ring.pushFront", "ring.popFront"},
		Rows: []report.RowID{report.RowMarconiAuditCompleteness, report.RowMarconiLossBudget},
	},
}
