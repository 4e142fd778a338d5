// Package judge holds the client-surface row's pure checkers: each takes
// what a scenario recorded (plain data defined here, no client types) and
// returns a check.Result. Each is defined under a stable name (check.Define),
// so a scenario's judgement is persisted with its history and `slotgate
// check --from` runs it again offline; `go list -deps` of this package names
// neither go-redis nor valkey-go, and every checker can be run on an edited
// record to prove it fails.
package judge

import "github.com/slotgate/slotgate/check"

// Verdict is a checker's answer.
type Verdict = check.Result

// Status is a verdict's outcome.
type Status = check.Status

// The outcomes a checker answers with.
const (
	Pass    = check.Pass
	Fail    = check.Fail
	Unknown = check.Unknown // a premise of the checker did not hold: never a silent pass
)

// The row's checkers, by stable name. The aliases are the names histories
// stored before they were defined here, so those still replay.
var (
	PipelineAttributed        = check.Define("client-surface/pipeline-attributed", pipelineAttributed, "PipelineAttributed")
	PipelineComplete          = check.Define("client-surface/pipeline-complete", pipelineComplete, "PipelineComplete")
	TxAllOrNothing            = check.Define("client-surface/transaction-all-or-nothing", txAllOrNothing, "TxAllOrNothing")
	TxCompleted               = check.Define("client-surface/transaction-completed", txCompleted, "TxCompleted")
	DialTimeoutBound          = check.Define("client-surface/dial-timeout-bound", dialTimeoutBound, "DialTimeoutBound")
	ConnLeak                  = check.Define("client-surface/connection-leak", connLeak, "ConnLeak")
	RESP3Push                 = check.Define("client-surface/resp3-push", resp3Push, "RESP3Push")
	OlderTopologyErrors       = check.Define("client-surface/older-topology-errors", olderTopologyErrors, "OlderTopologyErrors")
	OlderTopologyAcknowledged = check.Define("client-surface/older-topology-acknowledged", olderTopologyAcknowledged, "OlderTopologyAcknowledged")
)
