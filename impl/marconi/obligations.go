package marconi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// AckKind is the kind of final-delivery evidence a receiver sends (§9
// marconi_signals_acked_total{ack_kind}; §3.4 ack and terminal SLAs).
type AckKind string

const (
	AckReceived AckKind = "ack"      // the receiver has the signal: closes the ack SLA
	AckTerminal AckKind = "terminal" // the obligation is done: closes it
)

// Durability statuses of an obligation (§3.4 durability_status, "Redis
// Stream handoff (§4.1) reflects durability_status"). The Redis Stream is
// "the durable boundary for v0.4" (§4.1): an obligation is durable once
// the Stream writer appended its envelope, not when the in-memory audit
// queue took it — the queue dies with the process (§6) and overwrites
// its oldest entries when full (§3.6).
const (
	// DurabilityQueued: the audit queue holds the envelope; not yet in the
	// Marconi Cache stream.
	DurabilityQueued = "queued"
	// DurabilityDurable: the Redis Stream writer appended the envelope.
	DurabilityDurable = "durable"
	// DurabilityNotDurable: the audit queue refused the envelope, or lost
	// it (overwritten, aged out, the instance stopped) before the writer
	// appended it — counted in
	// marconi_obligations_degraded_not_durable_total. Final.
	DurabilityNotDurable = "degraded_not_durable"
)

const (
	slaAck, slaTerminal   = "ack", "terminal"
	obligationSweepMaxOld = 24 * time.Hour // a closed-or-violated obligation is forgotten after this
)

// Violation is one SLA an obligation missed, as the sweeper raised it
// (§3.4 SLA sweepers; counted in marconi_obligation_sla_violation_total).
type Violation struct {
	SignalID string    `json:"signal_id"`
	Tenant   string    `json:"tenant_id"`
	Kind     string    `json:"kind"`
	SLA      string    `json:"sla"` // "ack" or "terminal"
	At       time.Time `json:"at"`  // the sweep that raised it (the mesh's clock)
}

// obligationIndex is the in-memory obligation index (§3.4), keyed by
// signal id, with the SLA sweepers operating on it. Closed obligations
// stay (closed) until forgotten, so durability news that arrives after
// the terminal ack still lands on them.
type obligationIndex struct {
	mu   sync.Mutex
	obs  map[string]*openObligation
	open int
	// recount is MetricsSLARecounted: a violation is reported at every
	// sweep while it lasts.
	recount bool
}

type openObligation struct {
	tenant, signalType string
	ob                 audit.Obligation
	// entry is the envelope as offered, re-offered with the obligation's
	// new state on every ack (§3.4 handoff to the stream).
	entry            audit.Entry
	ackViolated      bool
	terminalViolated bool
	closed           bool
	// dirty: the audit queue lost the stream handoff of this obligation's
	// latest state (an ack's re-offer); the sweeper offers it again, so
	// the stream — what a restarted instance rehydrates — catches up.
	dirty bool
}

func newObligationIndex() *obligationIndex {
	return &obligationIndex{obs: map[string]*openObligation{}}
}

// add opens signalID's obligation; it returns false when it is known.
func (x *obligationIndex) add(signalID, tenant, signalType string, ob audit.Obligation, e audit.Entry) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.obs[signalID]; ok {
		return false
	}
	x.obs[signalID] = &openObligation{tenant: tenant, signalType: signalType, ob: ob, entry: e}
	x.open++
	return true
}

// setStatus moves signalID from queued to status and returns its labels
// and whether it moved; a final status never moves.
func (x *obligationIndex) setStatus(signalID, status string) (tenant, kind string, moved bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.obs[signalID]
	if !ok || p.ob.DurabilityStatus != DurabilityQueued {
		return "", "", false
	}
	p.ob.DurabilityStatus = status
	return p.tenant, p.ob.Kind, true
}

// ack records evidence for signalID. It returns the obligation's labels,
// whether it was open, whether this evidence closed it (terminal), and
// the entry to re-offer (nil when the obligation is not durable-bound).
func (x *obligationIndex) ack(signalID string, kind AckKind, at time.Time) (o openObligation, found, closed bool, update *audit.Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.obs[signalID]
	if !ok || p.closed {
		return openObligation{}, false, false, nil
	}
	t := at
	switch kind {
	case AckReceived:
		if p.ob.AckReceivedAt == nil {
			p.ob.AckReceivedAt = &t
		}
	case AckTerminal:
		p.ob.TerminalReceivedAt = &t
		if p.ob.AckReceivedAt == nil {
			p.ob.AckReceivedAt = &t
		}
		p.closed = true
		x.open--
	}
	if p.ob.DurabilityStatus != DurabilityNotDurable {
		e := p.updateEntry()
		update = &e
		p.dirty = false
	}
	return *p, true, p.closed, update
}

// updateEntry is the stream handoff of p's current state.
func (p *openObligation) updateEntry() audit.Entry {
	e := p.entry
	ob := p.ob
	e.Envelope.Obligation = &ob
	e.Trace = nil // the trace rows are the original entry's
	e.ObligationUpdate = true
	return e
}

// lostHandoff marks signalID's state handoff lost (see dirty).
func (x *obligationIndex) lostHandoff(signalID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p, ok := x.obs[signalID]; ok && p.ob.DurabilityStatus != DurabilityNotDurable {
		p.dirty = true
	}
}

// handoffs takes the state handoffs to offer again.
func (x *obligationIndex) handoffs() []audit.Entry {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []audit.Entry
	for _, p := range x.obs {
		if p.dirty {
			p.dirty = false
			out = append(out, p.updateEntry())
		}
	}
	return out
}

// dirtyCount is how many state handoffs wait for the next sweep.
func (x *obligationIndex) dirtyCount() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, p := range x.obs {
		if p.dirty {
			n++
		}
	}
	return n
}

// sweep reports every SLA newly missed at now (each at most once per
// obligation and SLA, by the instance), and the open obligations it forgot
// for age. early (a mutant) fires at half the SLA.
func (x *obligationIndex) sweep(now time.Time, early bool) (out []Violation, forgotten []openObligation) {
	x.mu.Lock()
	defer x.mu.Unlock()
	due := func(sla int) time.Duration {
		d := time.Duration(sla) * time.Second
		if early {
			d /= 2
		}
		return d
	}
	for id, p := range x.obs {
		age := now.Sub(p.ob.CreatedAt)
		if age > obligationSweepMaxOld {
			delete(x.obs, id)
			if !p.closed {
				x.open--
				forgotten = append(forgotten, *p)
			}
			continue
		}
		if p.closed {
			continue
		}
		if (!p.ackViolated || x.recount) && p.ob.AckReceivedAt == nil && p.ob.AckSLASeconds > 0 && age > due(p.ob.AckSLASeconds) {
			p.ackViolated = true
			out = append(out, Violation{SignalID: id, Tenant: p.tenant, Kind: p.ob.Kind, SLA: slaAck, At: now})
		}
		if (!p.terminalViolated || x.recount) && p.ob.TerminalSLASeconds > 0 && age > due(p.ob.TerminalSLASeconds) {
			p.terminalViolated = true
			out = append(out, Violation{SignalID: id, Tenant: p.tenant, Kind: p.ob.Kind, SLA: slaTerminal, At: now})
		}
	}
	return out, forgotten
}

// get returns a copy of signalID's obligation and whether it is open.
func (x *obligationIndex) get(signalID string) (audit.Obligation, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.obs[signalID]
	if !ok || p.closed {
		return audit.Obligation{}, false
	}
	return p.ob, true
}

// status returns signalID's durability status, open or closed.
func (x *obligationIndex) status(signalID string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.obs[signalID]
	if !ok {
		return "", false
	}
	return p.ob.DurabilityStatus, true
}

// AuditAppended is the Redis Stream writer's news (audit.WriterOptions
// OnAppended): entries are in marconi:signals:{tenant}, so their
// obligations are durable (§4.1 "the durable boundary"). An obligation
// already degraded stays so: its loss was counted.
func (m *Mesh) AuditAppended(entries []audit.Entry) {
	if m.obligations == nil || m.opts.Mutant == MutantDurableAtOffer {
		return
	}
	for _, e := range entries {
		if e.Envelope.Obligation == nil || e.ObligationUpdate {
			continue
		}
		if tenant, kind, ok := m.obligations.setStatus(e.Envelope.SignalID, DurabilityDurable); ok {
			m.m.durable.WithLabelValues(tenant, kind).Inc()
		}
	}
}

// AuditLost is the audit queue's news (audit.QueueOptions OnLost): e was
// accepted and lost before the writer appended it (§3.6 overwrite, max
// age; §6 shutdown), so its obligation is degraded_not_durable.
func (m *Mesh) AuditLost(e audit.Entry, _ audit.DropReason) {
	if m.obligations == nil || e.Envelope.Obligation == nil || m.opts.Mutant == MutantDurableAtOffer {
		return
	}
	if e.ObligationUpdate {
		m.obligations.lostHandoff(e.Envelope.SignalID)
		return
	}
	if tenant, kind, ok := m.obligations.setStatus(e.Envelope.SignalID, DurabilityNotDurable); ok {
		m.m.degraded.WithLabelValues(tenant, kind).Inc()
	}
}

// PendingHandoffs is how many obligations' latest state the stream has
// not received because the audit queue lost it; the sweeper offers them
// again.
func (m *Mesh) PendingHandoffs() int {
	if m.obligations == nil {
		return 0
	}
	return m.obligations.dirtyCount()
}

// ObligationStatus is signalID's durability status in this instance's
// index (open or closed); false when the instance does not know it.
func (m *Mesh) ObligationStatus(signalID string) (string, bool) {
	if m.obligations == nil {
		return "", false
	}
	return m.obligations.status(signalID)
}

// rehydrateObligations is the obligation index's §6 cold start: the index
// is in-memory primary and the Marconi Cache stream its durable copy (§3.4
// "Redis Stream handoff reflects durability_status"; §4.1 the durable
// boundary). Every tenant's stream is read oldest first; the last entry of
// a signal is its obligation's latest state (acks are re-offered), and
// what is not terminal is open again, durable. Obligations the previous
// instance never got into the stream are the §6 loss (counted there as
// degraded_not_durable). Counters are the instance's own: a rehydrated
// obligation is open here, not newly durable.
func (m *Mesh) rehydrateObligations(ctx context.Context, tenants []string) (int, error) {
	if m.obligations == nil || m.opts.Mutant == MutantForgetObligations {
		return 0, nil
	}
	n := 0
	for _, tenant := range tenants {
		entries, err := audit.ReadStream(ctx, m.opts.Pool, tenant)
		if err != nil {
			return n, fmt.Errorf("rehydrate obligations: %w", err)
		}
		// Only an obligation whose original entry the stream holds was
		// durable; a state handoff alone (its original was lost, so it is
		// degraded_not_durable) does not bring it back.
		latest := map[string]audit.Entry{}
		var order []string
		for _, se := range entries {
			e := se.Entry
			id := e.Envelope.SignalID
			if e.Envelope.Obligation == nil {
				continue
			}
			if _, seen := latest[id]; !seen {
				if e.ObligationUpdate {
					continue
				}
				order = append(order, id)
			}
			latest[id] = e
		}
		for _, id := range order {
			e := latest[id]
			ob := *e.Envelope.Obligation
			if ob.TerminalReceivedAt != nil {
				continue
			}
			ob.DurabilityStatus = DurabilityDurable
			e.ObligationUpdate = false
			if m.obligations.add(id, tenant, e.Envelope.Kind, ob, e) {
				m.m.obligationsOpen.WithLabelValues(tenant, ob.Kind).Inc()
				n++
			}
		}
	}
	return n, nil
}
