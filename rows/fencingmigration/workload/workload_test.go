package workload

import (
	"testing"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/traffic"
)

// A directory call is ok, failed on an error reply, and unknown when it got
// no reply, was cut short by the scenario, or was abandoned by its pod's
// kill or never observed.
func TestTimelineOps(t *testing.T) {
	op := func(errKind string, unknown, abandoned bool) history.MigrationOp {
		o := history.MigrationOp{FencingOp: history.FencingOp{Kind: history.OpRenew, Call: ms(1), Return: ms(2), Unknown: unknown}, ErrKind: errKind, Abandoned: abandoned}
		if errKind != "" {
			o.Err = errKind + ": …"
		}
		return o
	}
	ops := []history.MigrationOp{op("", false, false), op("NOSCRIPT", false, false), op("network", true, false), op(traffic.ErrKindStopped, true, false), op("network", true, true), op("", true, false)}
	want := []history.Outcome{history.OK, history.Failed, history.Unknown, history.Unknown, history.Unknown, history.Unknown}
	got := TimelineOps("directory calls", ops)
	if len(got) != len(want) {
		t.Fatalf("%d timeline operations, want %d", len(got), len(want))
	}
	for i, o := range got {
		if o.Outcome != want[i] || o.Backend != "directory calls" || o.Kind != string(history.OpRenew) || o.Start != ms(1) || o.End != ms(2) || o.ErrKind != ops[i].ErrKind {
			t.Errorf("operation %d (%s): %+v, want outcome %s", i, ops[i].ErrKind, o, want[i])
		}
	}
}
