package report

import "strings"

// The external provider: endpoints slotgate did not start — a
// staging cluster, the compose/ topology — given by flags or the
// environment (fixtures.External, SLOTGATE_ENDPOINT …). Nothing there can be
// killed, paused, failed over, re-sharded or put behind a proxy, so a row
// whose scenarios need any of that cannot run, and says why; a row that
// only sends traffic and reads the nodes runs unchanged.
//
// A row is all or nothing: running only its control-free scenarios would
// score a cell from part of its evidence and read as a pass of the whole.
// Each row's classification is its Catalogue entry's External.

// External is what a row needs from a target slotgate did not start.
type External struct {
	// NotRun is why the row cannot run there ("" = it runs, given Needs).
	NotRun string `json:"not_run,omitempty"`
	// Needs lists the endpoints its suite starts (harness.Start,
	// fixtures.RunPostgres), which the target must provide instead.
	Needs []Endpoint `json:"needs,omitempty"`
	// Secured means the suite hands the target's credentials and TLS to
	// every client it opens (harness.Pool, harness.Secure). A row that does
	// not would fail on a secured target with NOAUTH or a TLS error that
	// says nothing about the row.
	Secured bool `json:"secured,omitempty"`
}

// Endpoint is one kind of endpoint a row needs on an external target, with
// the flag that provides it.
type Endpoint string

const (
	NeedCluster    Endpoint = "a cluster endpoint (--endpoint host:port)"
	NeedStandalone Endpoint = "a standalone node (--standalone host:port)"
	NeedPostgres   Endpoint = "PostgreSQL (--postgres DSN)"
)

// OnExternal classifies a row that runs unchanged on an external target
// given the endpoints it needs; its suite opens every client through
// harness.Pool or harness.Secure, so it runs on a secured target too.
func OnExternal(needs ...Endpoint) *External {
	return &External{Needs: needs, Secured: true}
}

// NotOnExternal classifies a row that needs control of the topology, with
// the reason the report shows.
func NotOnExternal(reason string) *External { return &External{NotRun: reason} }

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

// ExternalNotRunReason says why row cannot run against an external target,
// or "" when it runs there unchanged (given the endpoints it needs; see
// ExternalReason).
func ExternalNotRunReason(row RowID) string {
	r, ok := Lookup(row)
	if !ok || r.External == nil {
		return "not yet classified for external targets: its faults might need topology control"
	}
	return r.External.NotRun
}

// ExternalReason says why row cannot run against target — it needs control
// of the topology, an endpoint that was not given, or credentials its suite
// does not pass — or "" when it runs there.
func ExternalReason(row RowID, target ExternalTarget) string {
	if reason := ExternalNotRunReason(row); reason != "" {
		return reason
	}
	r, _ := Lookup(row)
	given := map[Endpoint]bool{NeedCluster: target.Cluster, NeedStandalone: target.Standalone, NeedPostgres: target.Postgres}
	var missing []string
	for _, need := range r.External.Needs {
		if !given[need] {
			missing = append(missing, string(need))
		}
	}
	if len(missing) > 0 {
		return "needs " + strings.Join(missing, " and ") + "; not given"
	}
	if target.Secured && !r.External.Secured {
		return "its suite opens its client pools without the target's credentials and TLS (client.NewPool, not harness.Pool), so it would fail on NOAUTH or TLS, not on the row"
	}
	return ""
}
