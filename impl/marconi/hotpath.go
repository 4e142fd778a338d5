package marconi

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// OutcomeDropped is §9's fourth delivery outcome: the recipient's WebSocket
// queue or pending queue was full. Counted, never silent.
const OutcomeDropped audit.Outcome = "dropped"

// SendRequest is prism_signal's request: one signal from a sender to a
// recipient identity within a tenant and project.
type SendRequest struct {
	Tenant    string            `json:"tenant_id"`
	Project   string            `json:"project_id"`
	Sender    string            `json:"sender"`
	Recipient string            `json:"recipient"`
	Kind      string            `json:"kind"`
	Payload   []byte            `json:"payload,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	// Obligation, when set, opens an obligation with these SLAs (§3.4).
	Obligation *ObligationRequest `json:"obligation,omitempty"`
}

// ObligationRequest asks for an obligation on the signal.
type ObligationRequest struct {
	Kind               string `json:"kind"`
	AckSLASeconds      int    `json:"ack_sla_seconds"`
	TerminalSLASeconds int    `json:"terminal_sla_seconds"`
}

// SendResult is prism_signal's 200: the delivery decision.
type SendResult struct {
	SignalID string        `json:"signal_id"`
	Outcome  audit.Outcome `json:"outcome"`
	// SessionID is the live session the routing table resolved, "" on a
	// miss. A pushed signal went to its WebSocket; a queued_offline one
	// with a SessionID had a route but no attached socket.
	SessionID string `json:"session_id,omitempty"`
	// AuditKept reports whether the audit queue kept the entry (false
	// with the audit queue off, or when reject_new refused it).
	AuditKept bool `json:"audit_kept"`
}

// board is the hot path (spec 002 §2.1): routing lookup, direct push into
// the recipient's WebSocket queue or the pending index, the obligation
// index, metrics, and the synchronous in-memory audit Offer. It holds no
// client, no connection and no store — only in-memory tables — so a send
// through it touches no Redis, PostgreSQL or other I/O by construction.
// (The legacy paths that do are in legacy.go, outside the board.)
type board struct {
	t           *tables
	pending     *pendingIndex
	obligations *obligationIndex // opened in when MARCONI_OBLIGATIONS_MEMORY_PRIMARY is on
	sink        audit.Sink       // offered to when MARCONI_AUDIT_QUEUE_WRITE is on (nil: none wired)
	m           *metrics
	ttl         time.Duration // a route whose last heartbeat is older is a miss (the cache-TTL backstop)
	noPending   bool          // offline recipients get no_subscriber instead of the pending index
	// durableAtOffer is MutantDurableAtOffer: an obligation is marked
	// durable when the in-memory queue takes it.
	durableAtOffer bool
	now            func() time.Time
	ids            *idGen
}

// send makes the delivery decision for req and returns it; it never
// blocks on anything but the tables' read lock.
// f is the send's flag snapshot; fb, when a table-read flag is off, is
// the recipient the SessionStore fallback resolved (the tables then give
// only the WS handle, which lives in this process whatever the flags).
func (b *board) send(req SendRequest, f *Flags, fb *fallback) SendResult {
	start := b.now()
	env := &audit.Envelope{
		SignalID: b.ids.next(), TenantID: req.Tenant, ProjectID: req.Project, Sender: req.Sender,
		Recipient: req.Recipient, Kind: req.Kind, Payload: req.Payload, Meta: req.Meta, CreatedAt: start,
	}
	if req.Obligation != nil {
		env.Obligation = &audit.Obligation{Kind: req.Obligation.Kind, AckSLASeconds: req.Obligation.AckSLASeconds,
			TerminalSLASeconds: req.Obligation.TerminalSLASeconds, CreatedAt: start}
	}
	recvTenant := req.Tenant
	if b.m.mutant == MetricsReceivedTenantDropped {
		recvTenant = ""
	}
	b.m.received.WithLabelValues(recvTenant, req.Kind).Inc()
	key := RouteKey{Tenant: req.Tenant, Project: req.Project, Identity: req.Recipient}
	res := SendResult{SignalID: env.SignalID}

	// The read lock spans lookup and push/enqueue: an attach (write lock)
	// drains the pending index and sets the handle atomically, so a
	// signal can never land in the pending index after its recipient's
	// drain and stay there.
	b.t.mu.RLock()
	var handle *wsHandle
	if fb != nil {
		res.SessionID = fb.sessionID
		if r := b.t.regs[fb.sessionID]; fb.sessionID != "" && r != nil && r.s.Tenant == req.Tenant && r.s.Project == req.Project {
			handle = r.handle
		}
	} else {
		reg := b.t.route(key)
		if reg != nil && start.Sub(reg.s.LastHeartbeat) > b.ttl {
			reg = nil // past its TTL: the expiry hook is late or lost; do not route to it
		}
		if reg != nil {
			b.m.hits.WithLabelValues(req.Tenant).Inc()
			res.SessionID, handle = reg.s.SessionID, reg.handle
		} else {
			b.m.misses.WithLabelValues(req.Tenant).Inc()
		}
	}
	if res.SessionID != "" && b.m.mutant == MetricsOutcomeBeforeDecision {
		b.m.delivered.WithLabelValues(req.Tenant, req.Kind, string(audit.OutcomePushed)).Inc()
	}
	if handle != nil {
		switch handle.push(env) {
		case pushed:
			res.Outcome = audit.OutcomePushed
			if b.m.mutant == MetricsDeliveredDoubleCount {
				b.m.delivered.WithLabelValues(req.Tenant, req.Kind, string(res.Outcome)).Inc()
			}
		case pushFull:
			res.Outcome = OutcomeDropped
		}
	}
	if res.Outcome == "" {
		switch {
		case b.noPending:
			res.Outcome = audit.OutcomeNoSubscriber
		case b.pending.enqueue(key, env, start):
			res.Outcome = audit.OutcomeQueuedOffline
		default:
			res.Outcome = OutcomeDropped
		}
	}
	b.t.mu.RUnlock()
	if b.m.mutant != MetricsOutcomeBeforeDecision || res.SessionID == "" {
		b.m.delivered.WithLabelValues(req.Tenant, req.Kind, string(res.Outcome)).Inc()
	}

	// Audit fan-out entry, after the delivery decision (§3.6, Stage 3):
	// Offer is an in-memory append by the Sink's contract. The obligation
	// is in the index before the Offer, so news of the entry's loss or
	// append (AuditLost, AuditAppended) can never arrive before it.
	entry := audit.Entry{Envelope: *env, ArrivedAt: start, Outcome: res.Outcome,
		Trace: []audit.TraceEvent{{SignalID: env.SignalID, Event: "accepted", At: start}, {SignalID: env.SignalID, Event: string(res.Outcome), At: b.now()}}}
	var ob audit.Obligation
	tracked := env.Obligation != nil && f.ObligationsMemoryPrimary
	if tracked {
		ob = *env.Obligation
		ob.DurabilityStatus = DurabilityQueued
		entry.Envelope.Obligation = &ob
		b.obligations.add(env.SignalID, req.Tenant, req.Kind, ob, entry)
		b.m.obligationsOpen.WithLabelValues(req.Tenant, ob.Kind).Inc()
	}
	if b.sink != nil && f.AuditQueueWrite {
		res.AuditKept = b.sink.Offer(entry)
	}
	if tracked {
		switch {
		case !res.AuditKept:
			if _, kind, ok := b.obligations.setStatus(env.SignalID, DurabilityNotDurable); ok {
				b.m.degraded.WithLabelValues(req.Tenant, kind).Inc()
			}
		case b.m.mutant == MetricsDurableBeforeOffer:
			// The instrument alone is wrong: it counts durable at the
			// Offer, and again when the writer appends.
			b.m.durable.WithLabelValues(req.Tenant, ob.Kind).Inc()
		case b.durableAtOffer:
			if _, kind, ok := b.obligations.setStatus(env.SignalID, DurabilityDurable); ok {
				b.m.durable.WithLabelValues(req.Tenant, kind).Inc()
			}
		}
	}
	if b.m.mutant != MetricsDurationPushedOnly || res.Outcome == audit.OutcomePushed {
		b.m.sendDuration.WithLabelValues(req.Tenant).Observe(b.now().Sub(start).Seconds())
	}
	return res
}

// idGen issues signal ids unique across instances and restarts: a random
// instance prefix and a counter.
type idGen struct {
	prefix string
	n      atomic.Uint64
}

func newIDGen() *idGen {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &idGen{prefix: hex.EncodeToString(b[:])}
}

func (g *idGen) next() string { return g.prefix + "-" + strconv.FormatUint(g.n.Add(1), 10) }
