package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestLeasesKeptAcrossFailover(t *testing.T) {
	ttl, slack := 300*time.Millisecond, 5*time.Millisecond
	w := []history.FaultWindow{{Fault: "kill", Target: "p0", Start: ms(110), End: ms(180)}}
	held := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 100, 101),
		func() history.MigrationOp {
			o := mop(history.OpRenew, "p0", 1, false, 150, 170)
			o.Unknown = true
			return o
		}(),
	}
	kept := append(append([]history.MigrationOp(nil), held...), mop(history.OpRenew, "p0", 1, true, 200, 201), mop(history.OpRenew, "p0", 1, true, 490, 491))
	if r := leasesKeptAcrossFailover(kept, w, ttl, slack); r.Status != check.Pass {
		t.Fatalf("lease renewed after the failover: %v", r)
	}
	// The outage outlasted the lease: the next renew is refused.
	lost := append(append([]history.MigrationOp(nil), held...), mop(history.OpRenew, "p0", 1, false, 420, 421), mop(history.OpAcquire, "p1", 2, true, 490, 491))
	if r := judged(t, LeasesKeptAcrossFailover, LeaseRun{Ops: lost, Windows: w, TTL: ttl, Slack: slack}); r.Status != check.Fail {
		t.Fatalf("lease lost to the failover not caught: %v", r)
	}
	// A lease on a shard that kept answering was never at risk.
	untouched := []history.MigrationOp{mop(history.OpAcquire, "p0", 1, true, 0, 2), mop(history.OpRenew, "p0", 1, true, 100, 101),
		mop(history.OpRenew, "p0", 1, true, 150, 151), mop(history.OpRenew, "p0", 1, true, 200, 201), mop(history.OpRenew, "p0", 1, true, 490, 491)}
	if r := leasesKeptAcrossFailover(untouched, w, ttl, slack); r.Status != check.Unknown {
		t.Errorf("no lease the outage reached: want unknown, got %v", r)
	}
	// A lease released after the outage is not lost.
	released := append(append([]history.MigrationOp(nil), held...), mop(history.OpRelease, "p0", 1, true, 200, 201))
	if r := leasesKeptAcrossFailover(released, w, ttl, slack); r.Status != check.Unknown {
		t.Errorf("a released lease counted: %v", r)
	}
	if r := leasesKeptAcrossFailover(kept, nil, ttl, slack); r.Status != check.Unknown {
		t.Errorf("no fault: %v", r)
	}
	// The history ends before the lease is renewed or has expired.
	if r := leasesKeptAcrossFailover(held, w, ttl, slack); r.Status != check.Unknown {
		t.Errorf("undecided lease: %v", r)
	}
	late := []history.FaultWindow{{Fault: "kill", Start: ms(800), End: ms(810)}}
	long := append(append([]history.MigrationOp(nil), kept...), mop(history.OpKnown, "audit", 1, true, 1200, 1201))
	if r := leasesKeptAcrossFailover(long, late, ttl, slack); r.Status != check.Unknown {
		t.Errorf("no lease live at the fault: %v", r)
	}
}
