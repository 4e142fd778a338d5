package workload

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/rows/marconi/judge"
)

// A send's outcome is what its ledger says: 200 ok, another status
// failed, no answer unknown; an ack that was not answered 200 failed.
func TestLedgerOutcomes(t *testing.T) {
	mesh := MeshOps("B", []judge.MeshSend{{Status: 200}, {Status: 500, Err: "stale"}, {Status: 0, Err: "EOF"}})
	if mesh[0].Outcome != history.OK || mesh[1].Outcome != history.Failed || mesh[2].Outcome != history.Unknown {
		t.Errorf("mesh outcomes %v %v %v, want ok failed unknown", mesh[0].Outcome, mesh[1].Outcome, mesh[2].Outcome)
	}
	c := history.NewClock()
	t0 := c.Began()
	ob := ObligationOps("main", c, []judge.ObligationOp{{Start: t0.Add(time.Second), End: t0.Add(2 * time.Second),
		Acks: []judge.ObligationAck{{Start: t0.Add(3 * time.Second), End: t0.Add(4 * time.Second), OK: false, Err: "404"}}}})
	if len(ob) != 2 || ob[0].Backend != "main sends" || ob[0].Start != time.Second || ob[1].Backend != "main acks" || ob[1].Outcome != history.Failed {
		t.Errorf("obligation ops %+v", ob)
	}
}
