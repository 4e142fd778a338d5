// Package replay adapts the client-surface row's pure checkers
// (rows/clientsurface/judge) to check.Judge and registers them, so a
// scenario's judgement is persisted with its history and `slotgate check
// --from` runs it again offline. It holds no logic of its own: each
// function is its judge checker with the verdict read as a check.Result.
package replay

import (
	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
)

func init() {
	check.Register(PipelineAttributed, PipelineComplete, TxAllOrNothing, TxCompleted, DialTimeoutBound, ConnLeak, RESP3Push, OlderTopologyErrors, OlderTopologyAcknowledged)
}

// OlderTopologyErrors is judge.OlderTopologyErrors.
func OlderTopologyErrors(r judge.OlderTopologyRun) check.Result {
	return of(judge.OlderTopologyErrors(r))
}

// OlderTopologyAcknowledged is judge.OlderTopologyAcknowledged.
func OlderTopologyAcknowledged(r judge.OlderTopologyRun) check.Result {
	return of(judge.OlderTopologyAcknowledged(r))
}

// DialTimeoutBound is judge.DialTimeoutBound.
func DialTimeoutBound(r judge.DialTimeoutRun) check.Result { return of(judge.DialTimeoutBound(r)) }

// ConnLeak is judge.ConnLeak.
func ConnLeak(r judge.ConnRun) check.Result { return of(judge.ConnLeak(r)) }

// RESP3Push is judge.RESP3Push.
func RESP3Push(r judge.PushRun) check.Result { return of(judge.RESP3Push(r)) }

// PipelineAttributed is judge.PipelineAttributed.
func PipelineAttributed(r judge.PipelineRun) check.Result { return of(judge.PipelineAttributed(r)) }

// PipelineComplete is judge.PipelineComplete.
func PipelineComplete(r judge.PipelineRun) check.Result { return of(judge.PipelineComplete(r)) }

// TxAllOrNothing is judge.TxAllOrNothing.
func TxAllOrNothing(r judge.TxRun) check.Result { return of(judge.TxAllOrNothing(r)) }

// TxCompleted is judge.TxCompleted.
func TxCompleted(r judge.TxRun) check.Result { return of(judge.TxCompleted(r)) }

// of reads a judge verdict as a check result; a status judge does not
// define is unknown, never a pass.
func of(v judge.Verdict) check.Result {
	s := check.Unknown
	switch v.Status {
	case judge.Pass:
		s = check.Pass
	case judge.Fail:
		s = check.Fail
	}
	return check.Result{Checker: v.Checker, Status: s, Message: v.Message, Counterexample: v.Counterexample, Observed: v.Observed}
}
