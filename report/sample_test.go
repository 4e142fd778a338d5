package report_test

import (
	"os"
	"testing"
	"time"

	"github.com/slotgate/slotgate/report"
)

var t0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func ms(n int) report.Duration { return report.Duration(time.Duration(n) * time.Millisecond) }

func caught(name, why, observed string) report.Control {
	return report.Control{Name: name, Kind: report.ControlVariant, Why: why, Caught: true, Exercised: true, Observed: observed}
}

// SampleScorecard is a realistic run holding every status: passes, a
// failure with a counterexample and fault windows, blind cells for each
// reason (uncaught control, no control, undecided), and a requested cell
// nobody scored. It feeds the renderer tests and the sample report.
func SampleScorecard() *report.Scorecard {
	ev := func(seed int64, topo, client string, d report.Duration) report.Evidence {
		return report.Evidence{Seed: seed, Topology: topo, Server: "valkey 8.1.1", Client: client, Profile: "smoke", Duration: d}
	}
	checks := []report.Check{
		{
			Row: report.RowAxioms, Column: report.ColumnErrors, Scenario: "axioms/a2-crossslot-refused",
			Status: report.StatusPass, Message: "EVAL over keys in two slots refused with CROSSSLOT on every node",
			Controls: []report.Control{caught("untagged-pair", "A2: script keys in different slots", "CROSSSLOT from 3/3 primaries")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(840)),
		},
		{
			Row: report.RowAxioms, Column: report.ColumnSilentlyWrong, Scenario: "axioms/a4-spublish-shard-local",
			Status: report.StatusPass, Message: "SPUBLISH delivered only to subscribers on the owning shard",
			Controls: []report.Control{caught("classic-publish", "A4: classic PUBLISH broadcasts cluster-wide", "delivered on 3/3 shards")},
			Evidence: ev(1337, "cluster:3x1", "valkey-go v1.0.79", ms(1210)),
		},
		{
			Row: report.RowFencingScripts, Column: report.ColumnErrors, Scenario: "fencing-scripts/crossslot/untagged-pair",
			Status: report.StatusPass, Message: "un-tagged acquire refused with CROSSSLOT; tagged pairs share a slot (CLUSTER KEYSLOT)",
			Controls: []report.Control{
				caught("untagged", "fencing keys without the {session} tag", "CROSSSLOT on acquire"),
				caught("noscript", "script cache flushed on one node", "NOSCRIPT retried with EVAL"),
			},
			Evidence: report.Evidence{
				Seed: 1337, Topology: "cluster:3x1", Server: "valkey 8.1.1", Client: "go-redis v9.23.0", Profile: "smoke", Duration: ms(2310),
				Metrics: map[string]float64{"pairs": 512, "crossslot_errors": 512},
			},
		},
		{
			Row: report.RowFencingScripts, Column: report.ColumnSilentlyWrong, Scenario: "fencing-scripts/contention/go-redis",
			Status: report.StatusPass, Message: "no two holders of one session lease in 4,812 contended acquires",
			Controls: []report.Control{
				{Name: "M1", Kind: report.ControlVariant, Why: "renew skips the generation compare", Caught: false, Exercised: true, Observed: "0 violations in 4,812 ops — mutant survived"},
				caught("M3", "release deletes without owner check", "2 double-holders at op 311"),
			},
			Evidence: report.Evidence{
				Seed: 1337, Topology: "cluster:3x1", Server: "valkey 8.1.1", Client: "go-redis v9.23.0", Profile: "smoke", Duration: ms(6120),
				Observed: []string{"4812 acquires, 1290 renews, 1288 releases", "max concurrent holders per session: 1"},
				Metrics:  map[string]float64{"ops": 7390, "contention_ratio": 0.3127, "violations": 0},
				Timings:  map[string]report.Duration{"acquire p50": ms(1), "acquire p99": ms(14)},
			},
		},
		{
			Row: report.RowFencingMigration, Column: report.ColumnErrors, Scenario: "fencing-migration/staged/reliable-lane",
			Status: report.StatusPass, Message: "O→A→B→backfill→drain→C completed; every phase gate advanced on observation",
			Controls: []report.Control{caught("M6", "phase skip A→C", "gate refused: B not observed on 2 pods")},
			Evidence: ev(1337, "standalone", "go-redis v9.23.0", ms(41200)),
		},
		{
			Row: report.RowFencingMigration, Column: report.ColumnSilentlyWrong, Scenario: "fencing-migration/rollback/b-to-a",
			Status: report.StatusFail, Message: "generation reused across the B→A rollback: session s-0042 granted gen 7 twice",
			Controls: []report.Control{
				caught("M7", "overlapping rollback", "generation reuse at op 1204"),
				caught("M8", "early phase apply", "stale frame accepted at op 88"),
			},
			Evidence: report.Evidence{
				Seed: 1337, Topology: "standalone", Server: "valkey 8.1.1", Client: "go-redis v9.23.0", Profile: "smoke", Duration: ms(58300),
				Observed: []string{"pod relay-1 killed mid-phase B", "rollback B→A applied at +41.2s", "old-keyspace lease count: 3 → 0 at +52.9s"},
				Counterexample: "op 1187  relay-0  ACQUIRE s-0042 → gen 7   (new keyspace, phase B)\n" +
					"op 1190  relay-1  <killed>\n" +
					"op 1198  deploy   ROLLBACK B→A\n" +
					"op 1204  relay-2  ACQUIRE s-0042 → gen 7   (old keyspace, phase A)   ← reused\n" +
					"op 1205  relay-0  VALIDATE s-0042 gen 7 → ok  (stale holder passes the fence)",
				Metrics: map[string]float64{"ops": 18204, "acked_writes": 18190, "generation_reuses": 1, "old_keyspace_leases_end": 0},
				Timings: map[string]report.Duration{"phase B dwell": ms(12400), "drain to zero": ms(11700), "rollback apply": ms(830)},
				Faults: []report.FaultWindow{
					{Fault: "pod-kill", Target: "relay-1", Start: at(2*time.Minute + 13*time.Second), End: at(2*time.Minute + 16*time.Second + 400*time.Millisecond)},
					{Fault: "rollback", Target: "deploy/relay B→A", Start: at(2*time.Minute + 21*time.Second), End: at(2*time.Minute + 21*time.Second + 830*time.Millisecond)},
				},
			},
		},
		{
			Row: report.RowLocality, Column: report.ColumnErrors, Scenario: "locality/validator/workspace",
			Status: report.StatusPass, Message: "cross-slot validator rejected 0 of 214 call sites; planted undeclared redis.call rejected",
			Controls: []report.Control{caught("undeclared-key", "A2: redis.call on a key not in KEYS", "rejected at scripts/renew.lua:14")},
			Evidence: ev(1337, "cluster:3x1", "", ms(380)),
		},
		{
			Row: report.RowLocality, Column: report.ColumnSilentlyWrong, Scenario: "locality/pipeline/partial-failure",
			Status: report.StatusPass, Message: "per-key pipeline surfaced 3/3 injected partial failures to the caller",
			Controls: []report.Control{caught("swallowed", "naive client drops per-slot errors", "2 errors swallowed")},
			Evidence: ev(1337, "cluster:3x1", "valkey-go v1.0.79", ms(1930)),
		},
		{
			Row: report.RowPresenceMGet, Column: report.ColumnSilentlyWrong, Scenario: "presence-mget/split/order",
			Status: report.StatusPass, Message: "MGET of 300 keys across 3 nodes kept order and nils",
			Controls: []report.Control{caught("reorder", "results merged in node order", "order mismatch at index 17")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(640)),
		},
		{
			Row: report.RowRegistry, Column: report.ColumnErrors, Scenario: "registry/heartbeat/zadd",
			Status: report.StatusPass, Message: "heartbeats never errored across a slot migration",
			Controls: []report.Control{caught("wrong-slot", "ZADD to the pre-migration owner", "MOVED surfaced")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(9800)),
		},
		{
			Row: report.RowRegistry, Column: report.ColumnSilentlyWrong, Scenario: "registry/completeness/known-population",
			Status: report.StatusUnknown, Message: "too little traffic before the fault: 12 heartbeats, need 50",
			Controls: []report.Control{caught("scan-partial", "SCAN-based discovery", "found 61/64 runtimes")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(3100)),
		},
		{
			Row: report.RowSubscriptions, Column: report.ColumnErrors, Scenario: "subscriptions/duplicate-confirmations",
			Status: report.StatusPass, Message: "duplicate ssubscribe confirmations handled without error",
			Evidence: ev(1337, "cluster:3x1", "valkey-go v1.0.79", ms(720)),
		},
		{
			Row: report.RowSubscriptions, Column: report.ColumnSilentlyWrong, Scenario: "subscriptions/forced-disconnect/resubscribe",
			Status: report.StatusPass, Message: "after CLIENT KILL the subscriber resubscribed and received 500/500 messages",
			Controls: []report.Control{caught("no-resubscribe", "redis-rs before #2242", "0/500 delivered after kill")},
			Evidence: report.Evidence{
				Seed: 1337, Topology: "cluster:3x1", Server: "valkey 8.1.1", Client: "valkey-go v1.0.79", Profile: "smoke", Duration: ms(4400),
				Timings: map[string]report.Duration{"resubscribe": ms(212)},
				Faults:  []report.FaultWindow{{Fault: "client-kill", Target: "subscriber conn", Start: at(3*time.Minute + 2*time.Second), End: at(3*time.Minute + 2*time.Second + 212*time.Millisecond)}},
			},
		},
		{
			Row: report.RowRouting, Column: report.ColumnErrors, Scenario: "routing/moved-ask/go-redis",
			Status: report.StatusPass, Message: "MOVED and ASK followed during 3 slot migrations, 0 errors",
			Controls: []report.Control{caught("no-ask", "client ignores ASK", "TRYAGAIN surfaced 41 times")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(7200)),
		},
		{
			Row: report.RowRouting, Column: report.ColumnErrors, Scenario: "routing/moved-ask/valkey-go",
			Status: report.StatusPass, Message: "MOVED and ASK followed during 3 slot migrations, 0 errors",
			Controls: []report.Control{caught("no-ask", "client ignores ASK", "TRYAGAIN surfaced 37 times")},
			Evidence: ev(1337, "cluster:3x1", "valkey-go v1.0.79", ms(6900)),
		},
		{
			Row: report.RowRouting, Column: report.ColumnSilentlyWrong, Scenario: "routing/migration/read-your-writes",
			Status: report.StatusPass, Message: "every acknowledged write readable after migration (9,120 keys)",
			Controls: []report.Control{caught("stale-read", "read from the old owner during ASK", "14 stale reads")},
			Evidence: ev(1337, "cluster:3x1", "go-redis v9.23.0", ms(8800)),
		},
	}
	meta := report.Meta{
		StartedAt: t0,
		Duration:  report.Duration(4*time.Minute + 12*time.Second),
		Profile:   "smoke",
		Seed:      1337,
		Rows: []report.RowID{
			report.RowAxioms, report.RowFencingScripts, report.RowFencingMigration, report.RowLocality,
			report.RowPresenceMGet, report.RowRegistry, report.RowSubscriptions, report.RowRouting,
		},
		Provider:    "local",
		Version:     "v0.3.0",
		GoVersion:   "go1.26.8",
		CommandLine: "slotgate run --profile smoke --seed 1337",
		Servers:     []string{"valkey 8.1.1"},
		Host:        "linux/amd64, 16 cores",
	}
	return report.New(meta, checks)
}

// TestSampleReport renders the sample with every writer. With
// SLOTGATE_SAMPLE_OUT=dir set it writes there, to be looked at.
func TestSampleReport(t *testing.T) {
	dir := os.Getenv("SLOTGATE_SAMPLE_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	paths, err := report.WriteAll(dir, SampleScorecard())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{paths.JSON, paths.JUnit, paths.Markdown, paths.HTML} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", p, err)
		}
	}
}
