package workload

import (
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/traffic"
)

// TimelineOps converts a staged deploy's directory calls
// (history.MigrationOp) for the report's timeline, drawn as the client
// series series: ok, failed on a loud error, unknown when a pod kill
// abandoned the call, its outcome was not observed, or it got no reply
// (a call that got none, or that the scenario cut short, may have taken
// effect).
func TimelineOps(series string, ops []history.MigrationOp) []history.Op {
	out := make([]history.Op, 0, len(ops))
	for _, o := range ops {
		outcome := history.Failed
		switch o.ErrKind {
		case "":
			outcome = history.OK
		case "network", traffic.ErrKindStopped:
			outcome = history.Unknown
		}
		if o.Abandoned || o.Unknown {
			outcome = history.Unknown
		}
		out = append(out, history.Op{Start: o.Call, End: o.Return, Backend: series, Kind: string(o.Kind),
			Outcome: outcome, ErrKind: o.ErrKind, Err: o.Err})
	}
	return out
}
