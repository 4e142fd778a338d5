package harness

import (
	"github.com/slotgate/slotgate/report"
)

// The external provider (issue 8): endpoints slotgate did not start — a
// staging cluster, the compose/ topology — given by flags or the
// environment (fixtures.External, SLOTGATE_ENDPOINT …). Nothing there can be
// killed, paused, failed over, re-sharded or put behind a proxy, so a row
// whose scenarios need any of that cannot run, and says why; a row that
// only sends traffic and reads the nodes runs unchanged.
//
// A row is all or nothing: running only its control-free scenarios would
// score a cell from part of its evidence and read as a pass of the whole.
// A row missing from the table does not run: a new row must be classified
// before its faults can reach someone's staging cluster.

// externalNotRun maps each row that cannot run on an external target to the
// reason the report shows; a row mapped to "" runs unchanged.
var externalNotRun = map[report.RowID]string{
	report.RowProtocol: "",

	report.RowAxioms: "needs topologies it starts beside the cluster: a single-shard cluster-enabled node " +
		"(A2 is measured on every cluster mode)",
	report.RowFencingScripts: "restarts a primary (fault.RestartPrimary) and needs a single-shard cluster-enabled node " +
		"it starts itself",
	report.RowFencingMigration: "injects link faults at the per-node proxy (fault.Latency, fault.ResetPeer) " +
		"and needs a single-shard node it starts itself",
	report.RowPresenceMGet:   "migrates slots under load (fault.MoveSlot: CLUSTER SETSLOT / MIGRATE)",
	report.RowRegistry:       "fails primaries over (fault.FailoverGraceful) and injects latency at the per-node proxy",
	report.RowSubscriptions:  "fails over, restarts primaries, migrates slots and resets connections at the per-node proxy",
	report.RowRouting:        "migrates slots (fault.MoveSlot) to drive MOVED/ASK",
	report.RowFailureDrills:  "kills and fails over primaries (fault.FailoverKill, fault.FailoverGraceful)",
	report.RowTelemetry:      "migrates slots (fault.MoveSlot) to attribute redirects",
	report.RowMarconiRestart: "restarts the server process (spec 002 §6)",
}

// ExternalNotRunReason says why row cannot run against an external target,
// or "" when it runs there unchanged.
func ExternalNotRunReason(row report.RowID) string {
	reason, ok := externalNotRun[row]
	if !ok {
		return "not yet classified for external targets: its faults might need topology control"
	}
	return reason
}
