// Package report is slotgate's verdict model and its renderers.
//
// Spec 000 §Conformance: every surface is scored in two columns — errors
// (something failed loudly) and silently-wrong (an invariant broke and nobody
// was told) — "because three of our bugs would pass an error-only harness".
// A check records what it observed and which negative controls it caught; a
// cell whose negative control went uncaught is blind, never pass.
package report

// RowID names one row of the conformance scorecard. It is also the Ginkgo
// label of every spec that scores the row, so `ginkgo --label-filter=registry`
// runs exactly that row.
type RowID string

// The G2 rows of spec 000 §Conformance, the axioms they stand on, and the
// Marconi rows of spec 002 (SPEC-101 v0.4).
const (
	RowRouting          RowID = "routing"           // MOVED/ASK under slot migration; TLS/auth
	RowLocality         RowID = "locality"          // multi-key work shares a slot or is an explicit per-key pipeline
	RowFencingScripts   RowID = "fencing-scripts"   // hash-tagged pairs atomic; CROSSSLOT for un-tagged; NOSCRIPT
	RowFencingMigration RowID = "fencing-migration" // O→A→B→backfill→drain→C on a standalone node under chaos
	RowFencingFailover  RowID = "fencing-failover"  // T1/T2 across primary failovers on topologies with replicas
	RowPresenceMGet     RowID = "presence-mget"     // nil/order preservation when split per node
	RowRegistry         RowID = "registry"          // completeness against a known population
	RowSubscriptions    RowID = "subscriptions"     // RESP3 push, forced disconnect, resubscribe
	RowFailureDrills    RowID = "failure-drills"    // replica repair under load, primary failover
	RowProtocol         RowID = "protocol"          // command pool admitted under its chosen protocol
	RowTelemetry        RowID = "telemetry"         // per-shard/slot/channel metrics, phase gauge
	RowAxioms           RowID = "axioms"            // A1, A2, A4 measured on the real server
	RowClientSurface    RowID = "client-surface"    // pipelines, transactions, RESP3 pushes, dial timeouts, connection accounting per client
	RowPreflight        RowID = "preflight"         // the pre-G3 checklist's gatherer and checkers against real nodes and real bad variants
	RowGuards           RowID = "guards"            // replay guard and rate limiter per-key atomic across slot migration

	RowMarconiHotPath           RowID = "marconi-hot-path"           // SPEC-101 §2: send touches no I/O before 200
	RowMarconiAuditCompleteness RowID = "marconi-audit-completeness" // §4: queue → stream → PG exactly once
	RowMarconiLossBudget        RowID = "marconi-loss-budget"        // §3.6: every loss counted
	RowMarconiStream            RowID = "marconi-stream"             // §4.1/§4.2: COUNT 1, resume, trim, lag alert, SIGKILLed archiver
	RowMarconiCacheLifecycle    RowID = "marconi-cache-lifecycle"    // §5, Stage 2 hooks
	RowMarconiRestart           RowID = "marconi-restart"            // §6 process-restart recovery
	RowMarconiMetrics           RowID = "marconi-metrics"            // §9 every metric against an independent count
	RowMarconiStageFlags        RowID = "marconi-stage-flags"        // §8 flags: every stage forward and back under traffic, forbidden combinations refused
	RowMarconiObligations       RowID = "marconi-obligations"        // §3.4 obligation index + SLA sweepers, §9 obligation counters
)

// Column is one of the two verdict columns.
type Column string

const (
	// ColumnErrors scores loud failures: an operation that should succeed
	// failed, or one that must be refused was not refused loudly.
	ColumnErrors Column = "errors"
	// ColumnSilentlyWrong scores invariants: state that is wrong while every
	// operation reported success.
	ColumnSilentlyWrong Column = "silently-wrong"
)

// Columns lists both columns in scorecard order.
var Columns = []Column{ColumnErrors, ColumnSilentlyWrong}

// Row is the catalogue entry of one scorecard row: plain data.
type Row struct {
	ID RowID `json:"id"`
	// Title is the surface as the spec names it.
	Title string `json:"title"`
	// Spec is the section the row enforces, cited by heading.
	Spec string `json:"spec"`
	// Topology is the topology the row runs on by default.
	Topology string `json:"topology"`
	// Needs lists the binaries the row needs beyond valkey-server.
	Needs []string `json:"needs,omitempty"`
	// Suite is the Go package that scores the row (`slotgate run` runs it);
	// "" means the row is known but not yet implemented: it shows as
	// not-run and is never counted as passed.
	Suite string `json:"-"`
	// External says whether the row runs against a target slotgate did not
	// start (external.go); nil means not yet classified, and an
	// unclassified row does not run there: a new row must be classified
	// before its faults can reach someone's staging cluster.
	External *External `json:"-"`
}

// Catalogue is every row slotgate knows, in scorecard order: the one table
// the CLI (which rows exist, which suite runs each, which can run against an
// external target), the report and the suites read. Adding a row is one
// entry here (and its RowID constant).
var Catalogue = []Row{
	{ID: RowAxioms, Title: "Axioms A1, A2, A4", Spec: "000 §Axioms", Topology: "cluster:3x1",
		Suite: "./rows/axioms", External: NotOnExternal("needs topologies it starts beside the cluster: a single-shard cluster-enabled node (A2 is measured on every cluster mode)")},
	{ID: RowFencingScripts, Title: "Fencing scripts", Spec: "000 §Conformance, Fencing scripts; §The Fencing Migration", Topology: "cluster:3x1",
		Suite: "./rows/fencingscripts", External: NotOnExternal("restarts a primary (fault.RestartPrimary) and needs a single-shard cluster-enabled node it starts itself")},
	{ID: RowFencingMigration, Title: "Fencing migration", Spec: "000 §The Fencing Migration; §Deployment Gate", Topology: "standalone",
		Suite: "./rows/fencingmigration", External: NotOnExternal("injects link faults at the per-node proxy (fault.Latency, fault.ResetPeer) and needs a single-shard node it starts itself")},
	{ID: RowFencingFailover, Title: "Fencing across failover", Spec: "000 §Safety theorems T1, T2; §The Fencing Migration; §Problem Statement (primary + replica, automatic failover)", Topology: "replicated, cluster:3x1",
		Suite: "./rows/fencingfailover", External: NotOnExternal("kills, pauses and partitions primaries to fail them over mid-run, and starts its own Sentinel-watched primary + replica")},
	{ID: RowLocality, Title: "Locality contract", Spec: "000 §Conformance, Locality contract", Topology: "standalone",
		Suite: "./rows/locality", External: OnExternal(NeedStandalone)},
	{ID: RowPresenceMGet, Title: "Presence MGET", Spec: "000 §Conformance, Presence MGET", Topology: "cluster:3x1",
		Suite: "./rows/presence", External: NotOnExternal("migrates slots under load (fault.MoveSlot: CLUSTER SETSLOT / MIGRATE)")},
	{ID: RowRegistry, Title: "Registry index", Spec: "000 §Mesh Registry Discovery", Topology: "cluster:3x1",
		Suite: "./rows/registry", External: NotOnExternal("fails primaries over (fault.FailoverGraceful) and injects latency at the per-node proxy")},
	{ID: RowSubscriptions, Title: "Subscriptions", Spec: "000 §Sharded Pub/Sub Conversion; §Client Architecture", Topology: "cluster:3x1",
		Suite: "./rows/subscriptions", External: NotOnExternal("fails over, restarts primaries, migrates slots and resets connections at the per-node proxy")},
	{ID: RowRouting, Title: "Routing", Spec: "000 §Conformance, Routing", Topology: "cluster:3x1",
		Suite: "./rows/routing", External: NotOnExternal("migrates slots (fault.MoveSlot) to drive MOVED/ASK")},
	{ID: RowFailureDrills, Title: "Failure drills", Spec: "000 §Conformance, Failure drills", Topology: "cluster:3x1",
		Suite: "./rows/failuredrills", External: NotOnExternal("kills and fails over primaries (fault.FailoverKill, fault.FailoverGraceful)")},
	{ID: RowProtocol, Title: "Protocol choice", Spec: "000 §Conformance, Protocol choice; D3", Topology: "cluster:3x1",
		Suite: "./rows/protocol", External: OnExternal(NeedCluster)},
	{ID: RowClientSurface, Title: "Client surface", Spec: "000 §Client Architecture; §Conformance, Routing, Locality contract", Topology: "cluster:3x1",
		Suite: "./rows/clientsurface", External: NotOnExternal("migrates slots, fails primaries over and blackholes nodes at the per-node proxy")},
	{ID: RowPreflight, Title: "Pre-G3 checklist", Spec: "000 §Deployment Gate rule 5; §Migration path G3, G4, G5; §Axioms A3", Topology: "cluster:3x1, standalone",
		Suite: "./rows/preflight", External: NotOnExternal("writes a key above the size limit and keeps a primary's engine busy with Lua loops, and needs a cluster-disabled node it starts itself")},
	{ID: RowGuards, Title: "Replay guard and rate limit", Spec: "000 §System Model, Replay guard / rate limit", Topology: "cluster:3x1",
		Suite: "./rows/guards", External: NotOnExternal("migrates slots (fault.MoveSlot) under the contended guard keys")},
	{ID: RowTelemetry, Title: "Telemetry", Spec: "000 §Conformance, Telemetry", Topology: "cluster:3x1",
		Suite: "./rows/telemetry", External: NotOnExternal("migrates slots (fault.MoveSlot) to attribute redirects")},
	{ID: RowMarconiHotPath, Title: "Marconi hot path", Spec: "002 §2 Hot path", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: NotOnExternal("cuts the cluster's and PostgreSQL's proxies to prove a send does no I/O, and counts every command the servers ran (INFO commandstats), which a shared target's own traffic would add to")},
	{ID: RowMarconiAuditCompleteness, Title: "Marconi audit completeness", Spec: "002 §4 Audit fan-out", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconiaudit", External: OnExternal(NeedCluster, NeedPostgres)},
	{ID: RowMarconiLossBudget, Title: "Marconi loss budget", Spec: "002 §3.6 In-memory audit queue", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconiaudit", External: NotOnExternal("cuts a primary's and PostgreSQL's proxies to cause the losses it counts")},
	{ID: RowMarconiCacheLifecycle, Title: "Marconi cache lifecycle", Spec: "002 §5 Cache invalidation; Stage 2", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: NotOnExternal("sets notify-keyspace-events on every primary (CONFIG SET, the Stage 2 expiry hooks): a server setting slotgate does not change on a target it did not start")},
	{ID: RowMarconiRestart, Title: "Marconi restart", Spec: "002 §6 Process-restart recovery", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: OnExternal(NeedCluster, NeedPostgres)},
	{ID: RowMarconiMetrics, Title: "Marconi metrics", Spec: "002 §9 Counters / observability", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: NotOnExternal("sets notify-keyspace-events on every node (CONFIG SET) so the sessions it lets expire reach on_session_expired: a server setting slotgate does not change on a target it did not start")},
	{ID: RowMarconiStageFlags, Title: "Marconi stage flags", Spec: "002 §8 Migration path, fine-grain feature flags", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: NotOnExternal("not yet tried on a target slotgate did not start: its walk runs a second SessionStore writer and flips the archiver between shadow and primary tables")},
	{ID: RowMarconiObligations, Title: "Marconi obligations", Spec: "002 §3.4 Obligation index; §9 Obligation counters", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconi", External: NotOnExternal("cuts the cluster's and PostgreSQL's proxies to cause the outages its obligations must survive")},
	{ID: RowMarconiStream, Title: "Marconi stream and archiver semantics", Spec: "002 §4.1 Redis Stream writer; §4.2 PG archiver; Stages 3–4", Topology: "cluster:3x1", Needs: []string{"postgres"},
		Suite: "./rows/marconiaudit", External: NotOnExternal("slows PostgreSQL at its proxy to raise the archiver-lag alert and SIGKILLs an archiver process it starts")},
}

// Lookup returns the catalogue entry of id.
func Lookup(id RowID) (Row, bool) {
	for _, r := range Catalogue {
		if r.ID == id {
			return r, true
		}
	}
	return Row{}, false
}
