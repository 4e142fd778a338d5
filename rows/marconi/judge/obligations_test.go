package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// obligationHistory is a passing history: instance A opens four
// obligations (met, ack-only, missed, lost) and dies; B rehydrates the
// durable open ones and raises what A could not.
func obligationHistory() ObligationHistory {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	op := func(id string, start int, acks ...ObligationAck) ObligationOp {
		return ObligationOp{SignalID: id, Kind: "review", Instance: "A", Start: at(start), End: at(start + 5), AckSLA: time.Second, TerminalSLA: 2 * time.Second, Acks: acks}
	}
	ack := func(terminal bool, in string, ms int) ObligationAck {
		return ObligationAck{Terminal: terminal, Instance: in, Start: at(ms), End: at(ms + 3), OK: true}
	}
	return ObligationHistory{
		Ops: []ObligationOp{
			op("met", 0, ack(true, "A", 10)),         // closed on time
			op("ack-only", 0, ack(false, "A", 10)),   // terminal missed: raised by B after restart
			op("missed", 0),                          // both missed; ack raised by A, terminal by B
			op("lost", 0),                            // degraded: B never knows it
			op("late-ack", 0, ack(false, "B", 1800)), // ack missed (A raises), acked to B
		},
		Raises: []ObligationRaise{
			{SignalID: "ack-only", SLA: "terminal", Instance: "B", At: at(2100)},
			{SignalID: "missed", SLA: "ack", Instance: "A", At: at(1050)},
			{SignalID: "missed", SLA: "terminal", Instance: "B", At: at(2050)},
			{SignalID: "lost", SLA: "ack", Instance: "A", At: at(1050)},
			{SignalID: "late-ack", SLA: "ack", Instance: "A", At: at(1040)},
			{SignalID: "late-ack", SLA: "terminal", Instance: "B", At: at(2060)},
		},
		Instances: []ObligationInstance{
			{Name: "A", Start: at(-100), End: at(1550), Status: map[string]string{"met": obDurable, "ack-only": obDurable, "missed": obDurable, "lost": obDegraded, "late-ack": obDurable},
				Durable: 4, Degraded: 1, Violations: 3},
			{Name: "B", Start: at(1600), Status: map[string]string{}, Violations: 3, Open: 3},
		},
		Stream: map[string]bool{"met": true, "ack-only": true, "missed": true, "late-ack": true},
		PG: map[string]PGObligation{"met": {Rows: 1, Acked: true, Terminal: true}, "ack-only": {Rows: 1, Acked: true},
			"missed": {Rows: 1}, "late-ack": {Rows: 1, Acked: true}},
		Bound: 500 * time.Millisecond, End: at(4000), MinOps: 3,
	}
}

func TestMarconiObligationsPasses(t *testing.T) {
	h := obligationHistory()
	if r := marconiObligations(h); r.Status != check.Pass {
		t.Fatalf("%s: %s (%s)", r.Status, r.Message, r.Counterexample)
	}
	if r := marconiObligationCalls(h); r.Status != check.Pass {
		t.Fatalf("calls %s: %s (%s)", r.Status, r.Message, r.Counterexample)
	}
}

func TestMarconiObligationsCatches(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*ObligationHistory)
	}{
		{"never fires", "never raised", func(h *ObligationHistory) {
			h.Raises = nil
			h.Instances[0].Violations, h.Instances[1].Violations = 0, 0
		}},
		{"fires early", "before its deadline", func(h *ObligationHistory) { h.Raises[1].At = h.Ops[2].Start.Add(500 * time.Millisecond) }},
		{"fires late", "after its deadline", func(h *ObligationHistory) { h.Raises[1].At = h.Ops[2].Start.Add(1900 * time.Millisecond) }},
		{"raised for a met SLA", "answered before the deadline", func(h *ObligationHistory) {
			h.Raises = append(h.Raises, ObligationRaise{SignalID: "met", SLA: "ack", Instance: "A", At: h.Ops[0].Start.Add(1100 * time.Millisecond)})
			h.Instances[0].Violations++
		}},
		{"raised twice", "raised twice", func(h *ObligationHistory) {
			h.Raises = append(h.Raises, h.Raises[1])
			h.Instances[0].Violations++
		}},
		{"durable not in stream", "does not hold it", func(h *ObligationHistory) {
			h.Instances[0].Status["lost"], h.Instances[0].Durable, h.Instances[0].Degraded = obDurable, 5, 0
			h.PG["lost"] = PGObligation{Rows: 1}
		}},
		{"durable counter", "durable_total", func(h *ObligationHistory) { h.Instances[0].Durable = 5 }},
		{"unresolved", "never resolved", func(h *ObligationHistory) {
			h.Instances[0].Status["lost"], h.Instances[0].Degraded = "queued", 0
		}},
		{"forgot on restart", "never raised", func(h *ObligationHistory) {
			h.Raises = h.Raises[:len(h.Raises)-1]
			h.Raises = append(h.Raises[:2], h.Raises[3:]...)
			h.Raises = append(h.Raises[:0], h.Raises[1:]...)
			h.Instances[1].Violations, h.Instances[1].Open = 0, 0
		}},
		{"pg missing", "signal_obligations rows", func(h *ObligationHistory) { delete(h.PG, "missed") }},
		{"pg ack lost", "signal_obligations ack=false", func(h *ObligationHistory) { h.PG["late-ack"] = PGObligation{Rows: 1} }},
		{"open gauge", "obligations_open", func(h *ObligationHistory) { h.Instances[1].Open = 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := obligationHistory()
			tc.edit(&h)
			r := marconiObligations(h)
			if r.Status != check.Fail || !strings.Contains(r.Message+r.Counterexample, tc.want) {
				t.Fatalf("%s: %s (%s), want a failure naming %q", r.Status, r.Message, r.Counterexample, tc.want)
			}
		})
	}
}

func TestMarconiObligationCallsCatchesForgottenAck(t *testing.T) {
	h := obligationHistory()
	h.Ops[4].Acks[0].OK, h.Ops[4].Acks[0].Err = false, "404 unknown_signal"
	if r := marconiObligationCalls(h); r.Status != check.Fail {
		t.Fatalf("%s: %s", r.Status, r.Message)
	}
	h = obligationHistory()
	h.Ops = h.Ops[:1]
	h.Ops[0].Acks = nil
	if r := marconiObligationCalls(h); r.Status != check.Unknown {
		t.Fatalf("no acks: %s", r.Status)
	}
}
