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
