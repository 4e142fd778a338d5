package report

import "time"

// Meta is the run-level data a reviewer needs to trust and replay a
// scorecard: what was asked for, against which servers and clients, where.
type Meta struct {
	StartedAt time.Time `json:"started_at"`
	Duration  Duration  `json:"duration,omitempty"`
	// Profile is how hard the run pushed each row: "smoke" (small and
	// fast, for CI) or "full" (the chaos, load and soak variants a
	// sign-off needs). A string, as Evidence.Profile is.
	Profile string `json:"profile,omitempty"`
	// Seed is the run's seed; each check records the seed it actually used.
	Seed int64 `json:"seed"`
	// Rows are the rows the run was asked for; empty means all. The gate
	// holds requested rows to account (see Scorecard.Requested).
	Rows []RowID `json:"rows,omitempty"`
	// Provider names the fixture provider: local processes, testcontainers,
	// or an external cluster.
	Provider string `json:"provider,omitempty"`
	// Version is slotgate's own version.
	Version   string `json:"version,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
	// CommandLine is the command that produced the run, as typed.
	CommandLine string `json:"command_line,omitempty"`
	// Servers and Clients are the versions seen during the run, e.g.
	// "valkey 8.1.1", "go-redis v9.7.0".
	Servers []string `json:"servers,omitempty"`
	Clients []string `json:"clients,omitempty"`
	// Host is the machine, with its CPU count ("linux/amd64, 16 cores"):
	// timing-sensitive rows read differently on 2 CPUs than on 32.
	Host string `json:"host,omitempty"`
	// NotRun says why a row was not run at all — on an external target,
	// the topology control it needs or an endpoint that was not given
	// (issue #8). Each of its cells reads "not run: <reason>". A requested
	// row stays gated (silence is not a pass); one the run chose not to
	// request is shown with its reason, not gated.
	NotRun map[RowID]string `json:"not_run,omitempty"`
	// Skipped lists the scenarios the topology could not host (a bus
	// partition on the local provider, a kill on an external target):
	// skipped with their reason, never scored. Their cells say so in their
	// summary, so a pass is read as the pass of the scenarios that ran.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Shard is set on the results of one shard of a sharded run
	// (`slotgate run --shard i/n`); `slotgate report --merge` joins them.
	Shard *Shard `json:"shard,omitempty"`
}

// Skipped is one scenario a run skipped, and why.
type Skipped struct {
	Row      RowID  `json:"row"`
	Column   Column `json:"column,omitempty"`
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}
