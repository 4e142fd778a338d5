package history

import "time"

// AuditOffer is one accepted signal handed to Marconi's audit queue (spec
// 002 §3.6): the first column of the three-way ledger.
type AuditOffer struct {
	Tenant, SignalID string
	// At is when Offer was called, Took how long it ran.
	At, Took time.Duration
	// Kept is Offer's answer (reject_new and bounded_back_pressure may
	// refuse; the refusal is a counted loss).
	Kept bool
	// TraceEvents and Obligation say which companion rows the signal must
	// produce (signal_trace_events, signal_obligations).
	TraceEvents int
	Obligation  bool
	// DirectErr is the legacy synchronous PG write's error, when the
	// scenario runs it (Stage 3/4 parallel paths); "" when it succeeded or
	// did not run.
	DirectErr string
}

// AuditTable is one PostgreSQL table's rows, each rendered as the server's
// row text (t::text), keyed by primary key; a key can repeat when the table
// lost its unique key.
type AuditTable map[string][]string

// AuditError is one error a pipeline reported (its OnError hook), on the
// scenario clock.
type AuditError struct {
	At                        time.Duration
	Stage, Tenant, Op, Reason string
	Err                       string
}

// AuditSample is one scrape of a tenant's gauges (seconds; entries).
type AuditSample struct {
	At          time.Duration
	Tenant      string
	WriterLag   float64
	ArchiverLag float64
	Depth       float64
	// Backlog is appended − archived: stream entries not yet in PG.
	Backlog float64
}
