// Package workload holds the Marconi mesh rows' own traffic code: what
// their scenarios drive against a real mesh and how its ledgers become the
// scenario history's operations.
package workload

import (
	"fmt"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/rows/marconi/judge"
)

// A run's ledgers (sends, acks) reach the scenario history through
// harness.RecordOps; these convert them to its operations, so a scenario
// that injects faults draws its timeline.

// MeshOps converts a mesh history's sends (send_signal over HTTP): a 200
// is ok, another status failed, no answer (status 0) unknown — the send
// may have been taken.
func MeshOps(series string, sends []judge.MeshSend) []history.Op {
	out := make([]history.Op, 0, len(sends))
	for _, s := range sends {
		op := history.Op{Start: s.Start, End: s.Done, Backend: series, Kind: "send", Outcome: history.OK}
		switch {
		case s.Status == 0:
			op.Outcome, op.ErrKind, op.Err = history.Unknown, "no answer", s.Err
		case !s.OK():
			op.Outcome, op.ErrKind, op.Err = history.Failed, fmt.Sprintf("http %d", s.Status), s.Err
		}
		out = append(out, op)
	}
	return out
}

// ObligationOps converts an obligations ledger, timed in wall time, onto
// clock: each send that opened an obligation (as series+" sends") and each
// ack (as series+" acks"), ok or failed as the ack's answer says.
func ObligationOps(series string, clock *history.Clock, ops []judge.ObligationOp) []history.Op {
	var out []history.Op
	for _, o := range ops {
		out = append(out, history.Op{Start: clock.Offset(o.Start), End: clock.Offset(o.End), Backend: series + " sends", Kind: "send", Outcome: history.OK})
		for _, a := range o.Acks {
			op := history.Op{Start: clock.Offset(a.Start), End: clock.Offset(a.End), Backend: series + " acks", Kind: "ack", Outcome: history.OK}
			if !a.OK {
				op.Outcome, op.ErrKind, op.Err = history.Failed, "ack", a.Err
			}
			out = append(out, op)
		}
	}
	return out
}
