package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Marconi obligation index and SLA sweepers (spec 002 §3.4, §9 obligation
// counters), judged against the harness's own ledger: which obligations it
// opened (sends answered 200), which acks it sent and when they were
// answered, which instance served when, what the Marconi Cache stream and
// signal_obligations hold (read by the harness, not the mesh).

// Durability statuses as the mesh reports them (impl/marconi).
const (
	obDurable  = "durable"
	obDegraded = "degraded_not_durable"
)

// ObligationAck is one ack the harness sent for an obligation.
type ObligationAck struct {
	Terminal   bool      // ack_kind terminal (closes both SLAs), else ack (closes the ack SLA)
	Instance   string    // the instance it was sent to
	Start, End time.Time // request sent, answer received (harness clock)
	OK         bool      // answered 200
	Err        string
}

// ObligationOp is one obligation the harness opened: a send with an
// obligation that was answered 200.
type ObligationOp struct {
	SignalID, Kind string
	Instance       string    // the instance that accepted the send
	Start, End     time.Time // the send (harness clock)
	AckSLA         time.Duration
	TerminalSLA    time.Duration
	Acks           []ObligationAck
}

// ObligationRaise is one SLA violation an instance raised (its
// OnViolation), timed on the harness clock when it was told.
type ObligationRaise struct {
	SignalID, SLA, Instance string
	At                      time.Time
}

// ObligationInstance is one mesh instance's life and its last scrape.
type ObligationInstance struct {
	Name       string
	Start, End time.Time // serving; End zero: alive when the history ended
	// Status is the instance's durability status per signal id, read at
	// the end of its life (impl Mesh.ObligationStatus).
	Status map[string]string
	// Its §9 obligation counters at the end of its life.
	Durable, Degraded, Violations, Open float64
}

// PGObligation is what signal_obligations holds for one signal.
type PGObligation struct {
	Rows            int
	Acked, Terminal bool // ack_received_at / terminal_received_at set
}

// ObligationHistory is one obligations run.
type ObligationHistory struct {
	Ops         []ObligationOp
	FailedSends []string // sends with an obligation that did not answer 200
	Raises      []ObligationRaise
	Instances   []ObligationInstance
	// Stream: signal ids whose original entry (not an ack update) the
	// harness read from the Marconi Cache stream at the end.
	Stream map[string]bool
	// PG: signal_obligations by signal id, read after the archiver drained.
	PG map[string]PGObligation
	// Bound is how long after its deadline a violation may be raised (the
	// sweeper's period plus scheduling slack, time-scaled).
	Bound time.Duration
	// End is when the history ended: deadlines later than End-Bound are
	// not judged for a missing raise.
	End    time.Time
	MinOps int
}

// stored is h as its stored history reads back: every time in wall time,
// without the monotonic reading a live time.Time carries, so the live
// judgement compares exactly what `slotgate check --from` replays (a
// monotonic and a wall difference part when the wall clock is stepped).
func (h ObligationHistory) stored() ObligationHistory {
	wall := func(t time.Time) time.Time { return t.Round(0) }
	ops := make([]ObligationOp, len(h.Ops))
	for i, op := range h.Ops {
		op.Start, op.End = wall(op.Start), wall(op.End)
		acks := make([]ObligationAck, len(op.Acks))
		for j, a := range op.Acks {
			a.Start, a.End = wall(a.Start), wall(a.End)
			acks[j] = a
		}
		op.Acks = acks
		ops[i] = op
	}
	raises := make([]ObligationRaise, len(h.Raises))
	for i, r := range h.Raises {
		r.At = wall(r.At)
		raises[i] = r
	}
	instances := make([]ObligationInstance, len(h.Instances))
	for i, in := range h.Instances {
		in.Start, in.End = wall(in.Start), wall(in.End)
		instances[i] = in
	}
	h.Ops, h.Raises, h.Instances, h.End = ops, raises, instances, wall(h.End)
	return h
}

func (h ObligationHistory) instance(name string) (ObligationInstance, bool) {
	for _, in := range h.Instances {
		if in.Name == name {
			return in, true
		}
	}
	return ObligationInstance{}, false
}

// knows says whether instance in should know op: it opened it, or it
// started after the opener died and the op was in the stream and not
// closed by a terminal ack answered before it started (§6 + §3.4: the
// stream is the index's durable copy).
func (h ObligationHistory) knows(in ObligationInstance, op ObligationOp) bool {
	if in.Name == op.Instance {
		return true
	}
	opener, ok := h.instance(op.Instance)
	if !ok || opener.End.IsZero() || in.Start.Before(opener.End) || !h.Stream[op.SignalID] {
		return false
	}
	for _, a := range op.Acks {
		if a.Terminal && a.OK && a.End.Before(in.Start) {
			return false
		}
	}
	return true
}

// slaState classifies one SLA of op from the harness's acks: met (a closing
// ack was answered before the earliest possible deadline), missed (no
// closing ack was even sent before the latest deadline), else ambiguous.
func slaState(op ObligationOp, terminal bool) (deadline0, deadline1 time.Time, met, missed bool) {
	sla := op.AckSLA
	if terminal {
		sla = op.TerminalSLA
	}
	deadline0, deadline1 = op.Start.Add(sla), op.End.Add(sla)
	missed = true
	for _, a := range op.Acks {
		if !a.OK || (terminal && !a.Terminal) {
			continue
		}
		if a.End.Before(deadline0) {
			met = true
		}
		if !a.Start.After(deadline1) {
			missed = false
		}
	}
	return deadline0, deadline1, met, missed && !met
}

// answered says whether a closing ack of op (any ack; only terminal ones
// when terminal) was answered 200.
func answered(op ObligationOp, terminal bool) bool {
	for _, a := range op.Acks {
		if a.OK && (a.Terminal || !terminal) {
			return true
		}
	}
	return false
}

// marconiObligations judges the obligation index (silently-wrong column):
//   - durability: every obligation ends durable or degraded_not_durable in
//     the instance that opened it; durable exactly when the Marconi Cache
//     stream holds its entry (§4.1: the stream is the durable boundary);
//     marconi_obligations_durable_total and _degraded_not_durable_total
//     count exactly those, per instance;
//   - SLA sweepers: no violation for an SLA met, none before its deadline,
//     each at most once per instance, and a missed SLA raised within Bound
//     of its deadline whenever an instance that should know the obligation
//     (its opener, or a successor that rehydrated it from the stream) served
//     across that span; marconi_obligation_sla_violation_total equals the
//     raises per instance; marconi_obligations_open of the serving instance
//     equals the obligations it should hold open;
//   - PG audit: every durable obligation in signal_obligations exactly once,
//     with ack_received_at / terminal_received_at set exactly when the
//     harness's ack / terminal ack was answered 200. (An ack's stream handoff
//     made while Redis is unreachable may be lost; the harness acks only
//     outside outages, so every answered ack must reach PG.)
func marconiObligations(h ObligationHistory) check.Result {
	const name = "marconi-obligations"
	h = h.stored()
	if len(h.Ops) < h.MinOps || len(h.Ops) == 0 {
		return check.Unknownf(name, "%d obligations opened, want at least %d", len(h.Ops), h.MinOps)
	}
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	durableBy, degradedBy, raisesBy := map[string]int{}, map[string]int{}, map[string]int{}
	durable, degraded, required, met, raisedOK := 0, 0, 0, 0, 0

	raises := map[string][]ObligationRaise{} // by signal/sla
	for _, r := range h.Raises {
		raises[r.SignalID+"/"+r.SLA] = append(raises[r.SignalID+"/"+r.SLA], r)
		raisesBy[r.Instance]++
	}
	for _, op := range h.Ops {
		opener, ok := h.instance(op.Instance)
		if !ok {
			add("%s: opened by unknown instance %q", op.SignalID, op.Instance)
			continue
		}
		switch st := opener.Status[op.SignalID]; st {
		case obDurable:
			durable++
			durableBy[op.Instance]++
			if !h.Stream[op.SignalID] {
				add("%s: claimed durable by %s, but the Marconi Cache stream does not hold it", op.SignalID, op.Instance)
			}
		case obDegraded:
			degraded++
			degradedBy[op.Instance]++
			if h.Stream[op.SignalID] {
				add("%s: claimed degraded_not_durable by %s, but the stream holds it", op.SignalID, op.Instance)
			}
		default:
			add("%s: durability %q at the end of %s (never resolved)", op.SignalID, st, op.Instance)
		}
		if h.Stream[op.SignalID] || opener.Status[op.SignalID] == obDurable {
			if pg := h.PG[op.SignalID]; pg.Rows != 1 {
				add("%s: %d signal_obligations rows, want 1", op.SignalID, pg.Rows)
			} else {
				ackMet, termMet := answered(op, false), answered(op, true)
				if pg.Acked != ackMet || pg.Terminal != termMet {
					add("%s: signal_obligations ack=%v terminal=%v, the harness's acks answered: ack=%v terminal=%v", op.SignalID, pg.Acked, pg.Terminal, ackMet, termMet)
				}
			}
		}
		for _, terminal := range []bool{false, true} {
			sla := "ack"
			if terminal {
				sla = "terminal"
			}
			d0, d1, isMet, missed := slaState(op, terminal)
			rs := raises[op.SignalID+"/"+sla]
			per := map[string]int{}
			for _, r := range rs {
				per[r.Instance]++
				if per[r.Instance] == 2 {
					add("%s: %s violation raised twice by %s", op.SignalID, sla, r.Instance)
				}
				if r.At.Before(d0) {
					add("%s: %s violation raised %v before its deadline", op.SignalID, sla, d0.Sub(r.At).Round(time.Millisecond))
				}
			}
			if isMet {
				met++
				if len(rs) > 0 {
					add("%s: %s violation raised though the harness's ack was answered before the deadline", op.SignalID, sla)
				}
				continue
			}
			if !missed || h.End.Before(d1.Add(h.Bound)) {
				continue
			}
			due := false
			for _, in := range h.Instances {
				if h.knows(in, op) && !in.Start.After(d1) && (in.End.IsZero() || !in.End.Before(d1.Add(h.Bound))) {
					due = true
				}
			}
			if !due {
				continue
			}
			required++
			first := time.Time{}
			for _, r := range rs {
				if first.IsZero() || r.At.Before(first) {
					first = r.At
				}
			}
			switch {
			case first.IsZero():
				add("%s: %s SLA missed (deadline %v after the send), never raised", op.SignalID, sla, d1.Sub(op.Start).Round(time.Millisecond))
			case first.After(d1.Add(h.Bound)):
				add("%s: %s violation raised %v after its deadline (bound %v)", op.SignalID, sla, first.Sub(d1).Round(time.Millisecond), h.Bound)
			default:
				raisedOK++
			}
		}
	}
	var live *ObligationInstance
	for i, in := range h.Instances {
		if float64(durableBy[in.Name]) != in.Durable {
			add("%s: marconi_obligations_durable_total %.0f, its durable obligations %d", in.Name, in.Durable, durableBy[in.Name])
		}
		if float64(degradedBy[in.Name]) != in.Degraded {
			add("%s: marconi_obligations_degraded_not_durable_total %.0f, its degraded obligations %d", in.Name, in.Degraded, degradedBy[in.Name])
		}
		if float64(raisesBy[in.Name]) != in.Violations {
			add("%s: marconi_obligation_sla_violation_total %.0f, violations raised %d", in.Name, in.Violations, raisesBy[in.Name])
		}
		if in.End.IsZero() {
			live = &h.Instances[i]
		}
	}
	if live != nil {
		open := 0
		for _, op := range h.Ops {
			if !h.knows(*live, op) {
				continue
			}
			if !answered(op, true) {
				open++
			}
		}
		if float64(open) != live.Open {
			add("%s: marconi_obligations_open %.0f, the ledger holds %d open obligations it should know", live.Name, live.Open, open)
		}
	}
	observed := []string{fmt.Sprintf("%d obligations opened over %d instance(s): %d durable, %d degraded_not_durable; %d SLAs met, %d missed SLAs due and raised on time (bound %v); %d raises in all",
		len(h.Ops), len(h.Instances), durable, degraded, met, raisedOK, h.Bound, len(h.Raises))}
	if len(bad) > 0 {
		sort.Strings(bad)
		r := check.Failf(name, strings.Join(bad[:min(len(bad), 5)], "; "), "%d obligation findings, first: %s", len(bad), bad[0])
		r.Observed = observed
		return r
	}
	if required == 0 || met == 0 || durable == 0 {
		r := check.Unknownf(name, "the run never exercised the sweepers and the stream: %d due violations, %d SLAs met, %d durable", required, met, durable)
		r.Observed = observed
		return r
	}
	r := check.Passf(name, "%d obligations: durability agrees with the stream and the counters, %d due violations each raised once on time, none for %d SLAs met, PG audit exact", len(h.Ops), required, met)
	r.Observed = observed
	return r
}

// marconiObligationCalls judges the obligation API's answers (errors
// column): every send with an obligation answered 200, and every ack sent to
// an instance that should know the obligation (its opener, or a successor
// that rehydrated it, §6) answered 200 — through Redis and PG outages and a
// restart.
func marconiObligationCalls(h ObligationHistory) check.Result {
	const name = "marconi-obligation-calls"
	h = h.stored()
	if len(h.Ops) < h.MinOps || len(h.Ops) == 0 {
		return check.Unknownf(name, "%d obligations opened, want at least %d", len(h.Ops), h.MinOps)
	}
	var bad []string
	acks, afterRestart := 0, 0
	for _, op := range h.Ops {
		for _, a := range op.Acks {
			in, ok := h.instance(a.Instance)
			if !ok || !h.knows(in, op) {
				continue
			}
			acks++
			if a.Instance != op.Instance {
				afterRestart++
			}
			if !a.OK {
				bad = append(bad, fmt.Sprintf("%s: ack (terminal=%v) to %s: %s", op.SignalID, a.Terminal, a.Instance, a.Err))
			}
		}
	}
	for _, s := range h.FailedSends {
		bad = append(bad, "send failed: "+s)
	}
	observed := []string{fmt.Sprintf("%d sends with an obligation answered 200, %d failed; %d acks judged, %d of them to a successor instance", len(h.Ops), len(h.FailedSends), acks, afterRestart)}
	if len(bad) > 0 {
		r := check.Failf(name, strings.Join(bad[:min(len(bad), 5)], "; "), "%d obligation calls failed", len(bad))
		r.Observed = observed
		return r
	}
	if acks == 0 {
		return check.Unknownf(name, "no ack judged")
	}
	r := check.Passf(name, "%d obligation sends and %d acks (%d to a successor instance) all answered 200", len(h.Ops), acks, afterRestart)
	r.Observed = observed
	return r
}
