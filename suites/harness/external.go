package harness

import (
	"strings"

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
// reason the report shows; a row mapped to "" runs unchanged (given the
// endpoints externalNeeds names).
var externalNotRun = map[report.RowID]string{
	report.RowProtocol: "",
	report.RowLocality: "",
	// Spec 002 §6 restarts the Marconi process, not a server: the drill
	// stops one in-process instance and starts another on the same Redis.
	report.RowMarconiRestart:           "",
	report.RowMarconiAuditCompleteness: "",

	report.RowAxioms: "needs topologies it starts beside the cluster: a single-shard cluster-enabled node " +
		"(A2 is measured on every cluster mode)",
	report.RowFencingScripts: "restarts a primary (fault.RestartPrimary) and needs a single-shard cluster-enabled node " +
		"it starts itself",
	report.RowFencingMigration: "injects link faults at the per-node proxy (fault.Latency, fault.ResetPeer) " +
		"and needs a single-shard node it starts itself",
	report.RowPresenceMGet:  "migrates slots under load (fault.MoveSlot: CLUSTER SETSLOT / MIGRATE)",
	report.RowRegistry:      "fails primaries over (fault.FailoverGraceful) and injects latency at the per-node proxy",
	report.RowSubscriptions: "fails over, restarts primaries, migrates slots and resets connections at the per-node proxy",
	report.RowRouting:       "migrates slots (fault.MoveSlot) to drive MOVED/ASK",
	report.RowFailureDrills: "kills and fails over primaries (fault.FailoverKill, fault.FailoverGraceful)",
	report.RowTelemetry:     "migrates slots (fault.MoveSlot) to attribute redirects",
	report.RowMarconiHotPath: "cuts the cluster's and PostgreSQL's proxies to prove a send does no I/O, and counts " +
		"every command the servers ran (INFO commandstats), which a shared target's own traffic would add to",
	report.RowMarconiCacheLifecycle: "sets notify-keyspace-events on every primary (CONFIG SET, the Stage 2 expiry hooks): " +
		"a server setting slotgate does not change on a target it did not start",
	report.RowMarconiLossBudget: "cuts a primary's and PostgreSQL's proxies to cause the losses it counts",
	report.RowMarconiStream: "injects latency at PostgreSQL's proxy to make the archiver lag, and runs the archiver " +
		"as a child process of the suite that it SIGKILLs",
}

// ExternalNotRunReason says why row cannot run against an external target,
// or "" when it runs there unchanged (given the endpoints it needs; see
// ExternalReason).
func ExternalNotRunReason(row report.RowID) string {
	reason, ok := externalNotRun[row]
	if !ok {
		return "not yet classified for external targets: its faults might need topology control"
	}
	return reason
}

// ExternalTarget is what an external target offers, as the command line
// found it: which endpoints were given and answered, and whether reaching
// them takes credentials or TLS.
type ExternalTarget struct {
	Cluster    bool // --endpoint: a cluster-enabled endpoint
	Standalone bool // --standalone: a disabled-mode primary
	Postgres   bool // --postgres: a PostgreSQL DSN
	// Secured means the endpoints need a user, a password or TLS.
	Secured bool
}

// externalEndpoint is one kind of endpoint a row needs on an external
// target, with the flag that provides it.
type externalEndpoint string

const (
	needCluster    externalEndpoint = "a cluster endpoint (--endpoint host:port)"
	needStandalone externalEndpoint = "a standalone node (--standalone host:port)"
	needPostgres   externalEndpoint = "PostgreSQL (--postgres DSN)"
)

// externalNeeds lists, for each row that can run on an external target, the
// endpoints its suite starts (harness.Start, fixtures.RunPostgres), which
// the target must provide instead.
var externalNeeds = map[report.RowID][]externalEndpoint{
	report.RowProtocol:                 {needCluster},
	report.RowLocality:                 {needStandalone},
	report.RowMarconiRestart:           {needCluster, needPostgres},
	report.RowMarconiAuditCompleteness: {needCluster, needPostgres},
}

// externalSecured lists the rows whose suites hand the target's credentials
// and TLS to every client they open (harness.Pool and harness.Secure do,
// from fixtures.Topology.Credentials). A row not listed would fail on a
// secured target with NOAUTH or a TLS error that says nothing about the row.
var externalSecured = map[report.RowID]bool{
	report.RowLocality:                 true,
	report.RowProtocol:                 true, // harness.Secure
	report.RowMarconiRestart:           true, // harness.Secure
	report.RowMarconiAuditCompleteness: true, // harness.Secure
}

// ExternalReason says why row cannot run against target — it needs control
// of the topology, an endpoint that was not given, or credentials its suite
// does not pass — or "" when it runs there.
func ExternalReason(row report.RowID, target ExternalTarget) string {
	if reason := ExternalNotRunReason(row); reason != "" {
		return reason
	}
	var missing []string
	for _, need := range externalNeeds[row] {
		given := map[externalEndpoint]bool{needCluster: target.Cluster, needStandalone: target.Standalone, needPostgres: target.Postgres}[need]
		if !given {
			missing = append(missing, string(need))
		}
	}
	if len(missing) > 0 {
		return "needs " + strings.Join(missing, " and ") + "; not given"
	}
	if target.Secured && !externalSecured[row] {
		return "its suite opens its client pools without the target's credentials and TLS (client.NewPool, not harness.Pool), so it would fail on NOAUTH or TLS, not on the row"
	}
	return ""
}
