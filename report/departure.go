package report

import "slices"

// Departure is one place where an implementation departs from the spec it
// is scored against, with the reason: plain data, listed in one "Departures
// from the spec" section of results.json and report.html whenever a row it
// concerns is in the run — so a pass is read against what was actually
// built, and every resolution of a contradiction in the spec is in the open.
type Departure struct {
	// Rows are the rows whose verdicts the departure qualifies.
	Rows []RowID `json:"rows"`
	// Spec cites the clause departed from.
	Spec string `json:"spec"`
	// Departure says what the implementation does instead.
	Departure string `json:"departure"`
	// Reason says why.
	Reason string `json:"reason"`
}

// marconiRows are the rows that judge impl/marconi (spec 002).
var marconiRows = []RowID{RowMarconiHotPath, RowMarconiAuditCompleteness, RowMarconiLossBudget,
	RowMarconiCacheLifecycle, RowMarconiRestart, RowMarconiStageFlags}

// spec000Rows are the rows that judge spec 000's relay parts through impl.
var spec000Rows = []RowID{RowAxioms, RowFencingScripts, RowFencingMigration, RowFencingFailover, RowLocality,
	RowPresenceMGet, RowRegistry, RowSubscriptions, RowRouting, RowFailureDrills, RowProtocol, RowClientSurface, RowTelemetry}

// Departures is every known departure of impl from its specs, and every
// requirement a run here cannot judge (with the reason).
var Departures = []Departure{
	{Rows: spec000Rows,
		Spec:      "000 §Problem Statement, §Client Architecture (the relay: Rust, redis-rs / deadpool-redis, presence.rs, registry.rs, reliable.rs, audio/join.rs)",
		Departure: "The relay's own code does not run here: impl/ is a Go stand-in of every Redis-touching part the spec describes — the same keys, hash tags, Lua scripts, command shapes, phases and gate rules — on go-redis v9 and valkey-go behind one client seam (a command pool and a separate subscription client, as the spec's split architecture). The relay's own fencing scripts can be judged without a rebuild (--scripts). redis-rs is not admitted here: the admission table speaks of the Go libraries only.",
		Reason:    "What the gate decides is protocol- and server-level (key layout, script atomicity, slot rules, redirects, pub/sub semantics, failover windows), which does not depend on the language of the caller; client-library behaviour (redirects, resubscribe, halts) is judged per library in the admission table, and the relay's client must earn its own entries by the same rows."},
	{Rows: []RowID{RowFencingScripts, RowFencingMigration, RowRegistry},
		Spec:      "000 §The Fencing Migration (lease TTL 30 s, renew every 10 s); §Mesh Registry Discovery (heartbeat 15 s, TTL 45 s)",
		Departure: "Time is scaled: the staged deploy holds leases with a 600 ms TTL renewed every 200 ms, the registry heartbeats every 300 ms against a 900 ms TTL; rollouts, kills and holds shrink with them (and further in the smoke profile).",
		Reason:    "The 1:3 ratios the protocols rely on are kept, so a lease or a registration lapses in the same places relative to its renewals; a run of production's seconds would take hours per row. The checkers judge order and ownership, never wall-clock bounds."},
	{Rows: []RowID{RowFailureDrills, RowFencingFailover, RowSubscriptions},
		Spec:      "000 §Client Architecture (\"dead primary halts dispatch pending topology refresh\"; halt window characterised per client)",
		Departure: "The halt budget (default 10 s, one renew cadence) is judged at the fixtures' failure detection — cluster-node-timeout 2 s, Sentinel down-after 1 s — not at the managed service's, unless the run is started with --timing production (cluster-node-timeout 15 s, Sentinel down-after 30 s).",
		Reason:    "A halt is failure detection plus the client's own recovery; the scaled timing isolates the client's part, which is what admits or refuses a client. At production timing the detection alone can exceed the budget by design, which --timing production shows instead of hiding."},
	{Rows: []RowID{RowFencingMigration},
		Spec:      "000 §Deployment Gate (stragglers of a rollout; all older ReplicaSets at zero)",
		Departure: "A straggler is a pod of the fleet model (traffic.Fleet) replaced during a rollout and left serving for a grace period with no phase gauge; there is no Kubernetes. Rule 2(b) (all older ReplicaSets at zero) is read from the fleet model's list of pods still terminating (gate.Observation.Terminating), not from the Kubernetes API. A straggler the rollout no longer lists (force-deleted while its process runs on) is invisible to rule 2(b) by construction; for it the C-gate's observed old-keyspace drain is the only guard, and the straggler and drain-bound scenarios judge exactly that.",
		Reason:    "The hazards are a pod the gate no longer sees that still renews or issues; the model produces both on real servers without a cluster scheduler. The listed case is judged by its consequence (generations issued behind the backfill), the unlisted one by the observed drain the spec's T3 argument needs."},
	{Rows: []RowID{RowFencingMigration, RowFencingFailover},
		Spec:      "000 §Conformance, Fencing migration (\"both tunnel lanes — reliable and huddle\"); §Implementation map (audio/join.rs mirrors the reliable lane)",
		Departure: "Both lanes run in every pod with their own session populations, but through the same lease code (traffic.Fleet runs one lane loop per lane); a bug only the huddle lane's own renewer has cannot show here.",
		Reason:    "The spec says the huddle renewer mirrors the reliable lane; the rows judge the shared protocol under both populations, and a divergent huddle implementation would need its own stand-in."},
	{Rows: []RowID{RowFencingScripts, RowAxioms, RowTelemetry},
		Spec:      "000 §G3–G5 (ElastiCache cluster-mode compatible/enabled, the AWS compatible-mode cross-slot probe, online resharding under <80% CPU, CloudWatch metrics), §Problem Statement (Multi-AZ)",
		Departure: "Not judged here: the managed service's mode switches, its cross-slot probe, its resharding and its metrics exist only on AWS. The rows judge what those gates rest on against Valkey 8 itself — slot rules and CROSSSLOT on a cluster-enabled node, KEYSLOT equality of tagged pairs, per-shard/slot metrics from the servers' own counters — and slotgate preflight runs the read-only pre-G3 checks against any endpoint.",
		Reason:    "No AWS account is reachable from a run; ElastiCache's compatible mode is not a Valkey server setting. The gate's own decisions at G3–G5 stay organisational (a reviewer's sign-off), which this report informs but cannot take."},
	{Rows: []RowID{RowFencingFailover},
		Spec:      "000 §Safety theorems (T1, T2 assume one linearizable store) vs §Problem Statement (buzz-001: one primary + one replica, asynchronous replication, automatic failover)",
		Departure: "The row's check runs the directory in a durability mode the spec does not have (fencing.Options.Durability): every script is followed, on the same connection, by a barrier write and WAIT <replicas> <timeout>; a call fewer replicas acknowledged is reported as an unknown outcome (client.ErrNotReplicated), never as held. The spec's scripts as written run beside it through the same failovers as the variant durability-off, with their forks counted per fault.",
		Reason:    "A reply from an asynchronously replicated primary means it applied the write, not that the replica has it: a failover that promotes the replica loses it, the generation INCR is issued again and two pods own one session. WAIT is not consensus either (a replica that acknowledged need not be the one promoted, and a restarted empty primary can still wipe its replica), so the mode is judged under failovers here, not assumed; its cost is measured by BenchmarkDurabilityCost."},
	{Rows: []RowID{RowFencingFailover},
		Spec:      "000 §The Fencing Migration (DEFAULT_LEASE_TTL 30 s, renew every 10 s); §Problem Statement (Multi-AZ automatic failover)",
		Departure: "The row's contention workload holds leases with a 10 min TTL and releases them itself, so no lease lapses inside a run (the linearizability model does not expire leases; the checker refuses a history longer than the TTL as unknown); its staged deploy keeps production's 1:3 renew ratio at a 600 ms TTL, which every scaled failover outlasts. Failovers run at the fixtures' scaled timing (cluster-node-timeout 2 s, Sentinel down-after 1 s) unless the run is started with --timing production, which also adds lease-survival at production's 30 s / 10 s; failovers come by Valkey Sentinel, where production's come from the managed service.",
		Reason:    "The row asks whether acknowledged authority survives a failover, which lease expiry would hide; whether a failover costs live leases depends on the store's real failure detection, which does not scale with the lease (an election takes its own seconds), so it is asked at the servers' own timing only."},
	{Rows: []RowID{RowFencingFailover},
		Spec:      "000 §The Fencing Migration; §Deployment Gate (the operator observes, then steps)",
		Departure: "The staged deploy across failovers is scored in this row, not in fencing-migration, and its operator retries an observation or a merge that failed (traffic.Operator.Retry) every poll until its timeout, merging in the durability mode too; the pods retry nothing themselves beyond their lanes' next tick.",
		Reason:    "A failover under the operator makes its SCAN counts and merges fail for seconds; an operator that gives up at the first error never finishes a deploy on a replicated store, and one that retried non-idempotent steps would be unsafe — the merges are idempotent max-merges and the observations read-only."},
	{Rows: []RowID{RowMarconiCacheLifecycle, RowMarconiStageFlags, RowMarconiHotPath},
		Spec:      "002 §5 hook table (KeyspaceReaper) vs §8 Stage 2 (\"No pubsub subscriber anywhere\") and §5 (\"zero pubsub round-trips\")",
		Departure: "Contradiction resolved for Stage 2: on_session_expired comes by default from an in-process sweeper — registrations past their TTL in the table, confirmed against the SessionStore's scored index and record (a record that still lives was heartbeated elsewhere: refreshed, not expired). The keyspace-notification listener (SUBSCRIBE __keyevent@0__:expired on every primary, CONFIG SET notify-keyspace-events Ex on every node) is an option (Options.Notify / MARCONI_SESSION_EXPIRY=keyspace); the cache-lifecycle row scores it across a failover.",
		Reason:    "The listener is a pubsub subscriber on every node and rewrites server config, which Stage 2 forbids outright, and keyspace notifications are fire-and-forget (a dropped subscription or a failover loses expiries silently). The sweeper needs no subscriber and no CONFIG SET, does no I/O while no session is past its TTL, and acts at the instant the hot path already stops routing to a lapsed session."},
	{Rows: []RowID{RowMarconiStageFlags},
		Spec:      "002 §8 Stage 2 (hooks \"Required before MARCONI_ROUTING_TABLE_READS / MARCONI_REGISTRATION_TABLE_READS flips ON\"); fine-grain flags",
		Departure: "A switch the spec does not list, MARCONI_SESSION_EXPIRY=sweeper|keyspace|off, names the on_session_expired source; off leaves the Stage 2 hook list incomplete, so the table-read flags are refused with it (rule table-reads-need-stage2-hooks). The other six hooks are code and always wired.",
		Reason:    "Stage 2 has no flag of its own, so \"table reads before Stage 2\" could not be expressed, refused or tested; the expiry hook is the one hook that depends on deployment (a subscriber or a sweeper)."},
	{Rows: []RowID{RowMarconiStageFlags},
		Spec:      "002 §8 Stage 4 flags MARCONI_PG_ARCHIVER_SHADOW / MARCONI_PG_ARCHIVER_PRIMARY",
		Departure: "Both on together is refused (rule archiver-shadow-xor-primary); the rollout flips shadow→primary in one step. audit.Targets can still write both table sets in one transaction, for the audit rows' own tests.",
		Reason:    "The spec does not forbid the pair in so many words; it runs shadow \"first … for byte-for-byte comparison against the legacy synchronous PG path\", then \"flip[s] to primary\", which makes the archiver \"the only writer to canonical PG signal tables\" and the legacy write it is compared against redundant. We read that as one mode at a time."},
	{Rows: []RowID{RowMarconiStageFlags},
		Spec:      "002 §8 Stage 3 (the Stage 5 cutover \"cannot remove the legacy PG write until the new audit pipeline is proven downstream-equivalent\")",
		Departure: "MARCONI_HOT_PATH_SEND without MARCONI_AUDIT_QUEUE_WRITE and MARCONI_REDIS_STREAM_WRITER is refused (rule stage5-needs-audit-pipeline), beside the spec's own Stage 5 rule (archiver primary).",
		Reason:    "This mesh has no legacy synchronous PG write outside a negative control, so the hot path without the audit pipeline would deliver signals that nothing records — the outcome the Stage 5 rule exists to prevent."},
	{Rows: []RowID{RowMarconiStageFlags, RowMarconiHotPath},
		Spec:      "002 §2.2 legacy path; §8 Stage 5 (\"WS handler … no longer subscribes to Redis pubsub when Marconi-attached\")",
		Departure: "With MARCONI_HOT_PATH_SEND off the send PUBLISHes the envelope on the session's legacy channel before its 200 (the legacy Redis round-trip), but delivery is still the direct push: the WebSocket handler never SUBSCRIBEs. The legacy synchronous PG INSERT exists only as a negative control (MutantSyncPGWrite).",
		Reason:    "The harness scores the flag's I/O contract (Redis on the send path when off, none when on) and the ledger (delivery exactly once in every stage); a second, pubsub delivery path would only duplicate what the direct push already delivers."},
	{Rows: []RowID{RowMarconiStageFlags},
		Spec:      "002 §8 fine-grain flags: MARCONI_ROUTING_TABLE_READS / MARCONI_REGISTRATION_TABLE_READS off = \"SessionStore fallback\"",
		Departure: "The fallback routes by a per-identity ZSET in the SessionStore (<prefix>:ident:{tenant}:<project>:<identity>, score registered_at) and confirms the record exists (MGET / EXISTS): two Redis reads on every send. WS handles stay in process whatever the flags. The tables are kept by the hooks from start even while unread, so a flip to ON finds them warm.",
		Reason:    "Stage 1's fallback code is not in the spec; this is the smallest store read that answers what the table answers (the newest live registration of an identity, or the master flag's holder). A WebSocket cannot live in Redis."},
	{Rows: []RowID{RowMarconiAuditCompleteness, RowMarconiStageFlags},
		Spec:      "002 §4.2 / Stage 4 \"XREADGROUP COUNT 1 BLOCK 0\"",
		Departure: "The archiver reads XREADGROUP COUNT 1 (no batching, as specified) but with a finite BLOCK (500 ms default; 200 ms in the suites).",
		Reason:    "BLOCK 0 never returns on an idle stream, so the loop could never claim stale entries of a dead consumer (XAUTOCLAIM) or stop cleanly; a finite block costs at most one extra empty read per block time."},
	{Rows: []RowID{RowMarconiAuditCompleteness, RowMarconiLossBudget},
		Spec:      "002 §0.2 / §4.1 Marconi Cache \"MAXLEN ~7d\"",
		Departure: "The writer trims by time with XADD … MINID ~ (now − 7 d), in the same script as the append; the Stream writer appends in batches of up to 64 entries per script.",
		Reason:    "MAXLEN counts entries, not time; MINID on the time-based stream id is the trim by time the spec describes. Batching the append (not the archiver) keeps one round trip per batch while the archiver stays COUNT 1."},
	{Rows: marconiRows,
		Spec:      "002 §2.1 5 ms p99, §6 ~1–2 s restart window, SessionStore TTL, §3.5 pending TTL",
		Departure: "Time is scaled in the suites: session TTL 2 s (default 45 s, not set by the spec), pending TTL 10 min (not set by the spec), sweepers every 1 s (50 ms in unit tests); churn and drill lengths shrink in the smoke profile. Latency targets are shown as figures, never asserted.",
		Reason:    "The smoke profile must stay within ~2 min on 2 cores; ratios between the clocks (TTL vs heartbeat vs sweep) are kept, and house rules forbid timed assertions."},
}

// departuresFor lists the departures that concern any of rows.
func departuresFor(rows []RowID) []Departure {
	var out []Departure
	for _, d := range Departures {
		if slices.ContainsFunc(d.Rows, func(r RowID) bool { return slices.Contains(rows, r) }) {
			out = append(out, d)
		}
	}
	return out
}
