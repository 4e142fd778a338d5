package marconi

import (
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

// Durability statuses of an obligation (§3.4 durability_status): whether
// the audit queue kept its envelope on the way to the Redis Stream.
const (
	DurabilityQueued      = "queued" // the audit Sink kept the envelope
	DurabilityNotDurable  = "degraded_not_durable"
	slaAck, slaTerminal   = "ack", "terminal"
	obligationSweepMaxOld = 24 * time.Hour // a closed-or-violated obligation is forgotten after this
)

// obligationIndex is the in-memory obligation index (§3.4), keyed by
// signal id, with the SLA sweepers operating on it.
type obligationIndex struct {
	mu   sync.Mutex
	open map[string]*openObligation
	// recount is MetricsSLARecounted: a violation is reported at every
	// sweep while it lasts.
	recount bool
}

type openObligation struct {
	tenant, signalType string
	ob                 audit.Obligation
	ackViolated        bool
	terminalViolated   bool
}

func newObligationIndex() *obligationIndex {
	return &obligationIndex{open: map[string]*openObligation{}}
}

func (x *obligationIndex) add(signalID, tenant, signalType string, ob audit.Obligation) {
	x.mu.Lock()
	x.open[signalID] = &openObligation{tenant: tenant, signalType: signalType, ob: ob}
	x.mu.Unlock()
}

// ack records evidence for signalID. It returns the obligation's labels,
// whether it was known, and whether this evidence closed it (terminal).
func (x *obligationIndex) ack(signalID string, kind AckKind, at time.Time) (o openObligation, found, closed bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.open[signalID]
	if !ok {
		return openObligation{}, false, false
	}
	switch kind {
	case AckReceived:
		if p.ob.AckReceivedAt == nil {
			t := at
			p.ob.AckReceivedAt = &t
		}
	case AckTerminal:
		t := at
		p.ob.TerminalReceivedAt = &t
		if p.ob.AckReceivedAt == nil {
			p.ob.AckReceivedAt = &t
		}
		delete(x.open, signalID)
		return *p, true, true
	}
	return *p, true, false
}

// violation is one SLA an obligation missed.
type violation struct{ tenant, kind, sla string }

// sweep reports every SLA newly missed at now (each at most once per
// obligation and SLA), and the obligations it forgot for age.
func (x *obligationIndex) sweep(now time.Time) (out []violation, forgotten []openObligation) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for id, p := range x.open {
		age := now.Sub(p.ob.CreatedAt)
		if (!p.ackViolated || x.recount) && p.ob.AckReceivedAt == nil && p.ob.AckSLASeconds > 0 && age > time.Duration(p.ob.AckSLASeconds)*time.Second {
			p.ackViolated = true
			out = append(out, violation{p.tenant, p.ob.Kind, slaAck})
		}
		if (!p.terminalViolated || x.recount) && p.ob.TerminalSLASeconds > 0 && age > time.Duration(p.ob.TerminalSLASeconds)*time.Second {
			p.terminalViolated = true
			out = append(out, violation{p.tenant, p.ob.Kind, slaTerminal})
		}
		if age > obligationSweepMaxOld {
			delete(x.open, id)
			forgotten = append(forgotten, *p)
		}
	}
	return out, forgotten
}

// get returns a copy of signalID's open obligation.
func (x *obligationIndex) get(signalID string) (audit.Obligation, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.open[signalID]
	if !ok {
		return audit.Obligation{}, false
	}
	return p.ob, true
}
