// Package audit is Marconi's audit fan-out (spec 002 §3.6, §4): the
// per-tenant in-memory audit queue, the Redis Stream writer into
// marconi:signals:{tenant_id} (the Marconi Cache) and the PostgreSQL
// archiver that drains it into signal_queue, signal_trace_events and
// signal_obligations (and their *_shadow twins). Nothing here is on the
// hot path: the mesh (package marconi) only calls Sink.Offer, which never
// blocks on Redis or PostgreSQL (spec 002 §2.1, §3.6 "Marconi does not
// block on the Redis writer's health").
package audit

import "time"

// Outcome is the delivery outcome the mesh recorded for a signal (spec 002
// §3.3, §3.6).
type Outcome string

const (
	OutcomePushed        Outcome = "pushed"
	OutcomeQueuedOffline Outcome = "queued_offline"
	OutcomeNoSubscriber  Outcome = "no_subscriber"
)

// Envelope is the signal envelope (spec 002 §0.1; physical table
// signal_queue). SignalID is unique and the archiver's idempotency key.
type Envelope struct {
	SignalID  string            `json:"signal_id"`
	TenantID  string            `json:"tenant_id"`
	ProjectID string            `json:"project_id"`
	Sender    string            `json:"sender"`
	Recipient string            `json:"recipient"` // identity within (tenant, project)
	Kind      string            `json:"kind"`
	Payload   []byte            `json:"payload"`
	Meta      map[string]string `json:"meta,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	// Obligation, when set, is the signal's obligation (signal_obligations).
	Obligation *Obligation `json:"obligation,omitempty"`
}

// Obligation is a signal's ack/terminal obligation (spec 002 §3.4; physical
// table signal_obligations).
type Obligation struct {
	Kind               string     `json:"kind"`
	AckSLASeconds      int        `json:"ack_sla_seconds"`
	TerminalSLASeconds int        `json:"terminal_sla_seconds"`
	CreatedAt          time.Time  `json:"created_at"`
	AckReceivedAt      *time.Time `json:"ack_received_at,omitempty"`
	TerminalReceivedAt *time.Time `json:"terminal_received_at,omitempty"`
	DurabilityStatus   string     `json:"durability_status"`
}

// TraceEvent is one event in a signal's life (physical table
// signal_trace_events): accepted, pushed, queued_offline, drained, acked…
type TraceEvent struct {
	SignalID string    `json:"signal_id"`
	Event    string    `json:"event"`
	At       time.Time `json:"at"`
	Detail   string    `json:"detail,omitempty"`
}

// Entry is one audit-queue entry (spec 002 §3.6): the full envelope, the
// arrival timestamp, the delivery outcome and the trace events so far.
type Entry struct {
	Envelope  Envelope     `json:"envelope"`
	ArrivedAt time.Time    `json:"arrived_at"`
	Outcome   Outcome      `json:"outcome"`
	Trace     []TraceEvent `json:"trace,omitempty"`
	// ObligationUpdate marks a re-offer of an accepted signal carrying its
	// obligation's new state (an ack, a terminal ack): the stream handoff
	// that "reflects" the in-memory index (spec 002 §3.4), so a restarted
	// instance rehydrates the latest state and the archiver's signal_id
	// UPSERT records it. It carries no trace events (they are the original
	// entry's) and is not a new signal.
	ObligationUpdate bool `json:"obligation_update,omitempty"`
}

// Sink is what the hot path sees of the audit fan-out. Offer is called
// synchronously inside send_signal after the delivery decision; it must
// return in memory time (no I/O, no waiting on Redis or PostgreSQL) and
// report whether the queue kept the entry (reject_new refuses it;
// bounded_back_pressure may refuse it too; oldest always keeps it and
// overwrites — counts — the oldest instead).
type Sink interface {
	Offer(e Entry) (kept bool)
}
