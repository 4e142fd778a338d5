package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestMigrationAcrossFailover(t *testing.T) {
	ttl, slack := 100*time.Millisecond, 5*time.Millisecond
	windows := []history.FaultWindow{{Fault: "sentinel-failover", Target: "p0→r0", Start: ms(50), End: ms(300)}}
	aims := []Aim{{Step: "backfill", Start: ms(40), End: ms(200)}}
	premise := MigrationFailoverPremise{TTL: ttl, Slack: slack, MinCalledInside: 1, MinSamples: 2, Aims: aims}
	samples := []history.KeyspaceSample{{At: ms(10)}, {At: ms(400)}}
	good := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 30, 31),
		// the failover: p0's renew never answers, its lease lapses
		func() history.MigrationOp {
			o := mop(history.OpRenew, "p0", 1, false, 60, 250)
			o.Unknown = true
			return o
		}(),
		mop(history.OpAcquire, "p1", 2, true, 320, 321),
		mop(history.OpKnown, "audit", 2, true, 500, 501),
	}
	if r := migrationAcrossFailover(good, samples, windows, premise); r.Status != check.Pass {
		t.Fatalf("good history: %v", r)
	}

	// The failover lost p0's counter write: p1 is issued generation 1 again.
	reused := append(good[:3:3], mop(history.OpAcquire, "p1", 1, true, 320, 321), good[4])
	r := judged(t, MigrationAcrossFailover, DeployRun{Ops: reused, Samples: samples, Windows: windows, Premise: premise})
	if r.Status != check.Fail || !strings.Contains(strings.Join(r.Observed, "\n"), "inside backfill: 1 generations issued twice") {
		t.Fatalf("reissued generation not caught and charged to the fault: %v %q", r, r.Observed)
	}
	// The failover lost p0's acknowledged lease: its next renew, inside
	// the lease's certainly-live window, is refused.
	lost := append(good[:2:2], mop(history.OpRenew, "p0", 1, true, 60, 61), mop(history.OpRenew, "p0", 1, false, 100, 102), good[4])
	if r := migrationAcrossFailover(lost, samples, windows, premise); r.Status != check.Fail || !strings.Contains(r.Message, "acknowledged leases vanished") {
		t.Fatalf("lost lease not caught: %v", r)
	}
	// The failover undid the backfill's write: the read-back finds the
	// counter below p1's acknowledged generation. Charged to the fault the
	// merge was acknowledged in, though p1 acquired before any fault.
	merge := mop(history.OpMerge, "operator", 0, true, 60, 61)
	merge.Phase = "backfill"
	acqA := mop(history.OpAcquire, "p1", 2, true, 3, 4)
	acqA.Phase = "A"
	early := []history.MigrationOp{acqA, merge, mop(history.OpKnown, "audit", 1, true, 500, 501)}
	two := []history.FaultWindow{{Fault: "kill", Target: "p0", Start: ms(10), End: ms(20)}, windows[0]}
	r = migrationAcrossFailover(early, samples, two, MigrationFailoverPremise{TTL: ttl, Slack: slack, MinSamples: 2})
	if r.Status != check.Fail || !strings.Contains(strings.Join(r.Observed, "\n"), "p0→r0: 0 generations issued twice, 0 went backwards, 0 acquisitions of a live lease, 0 acknowledged leases lost, 1 counters behind") {
		t.Fatalf("counter behind an acknowledged generation not caught and charged to the merge's fault: %v %q", r, r.Observed)
	}
	// A C-phase generation is in the new counter already: a backfill does
	// not carry it, so its loss is dated by the acquire (the first fault).
	acqC := acqA
	acqC.Phase = "C"
	r = migrationAcrossFailover([]history.MigrationOp{acqC, merge, early[2]}, samples, two, MigrationFailoverPremise{TTL: ttl, Slack: slack, MinSamples: 2})
	if r.Status != check.Fail || !strings.Contains(strings.Join(r.Observed, "\n"), "kill p0: 0 generations issued twice, 0 went backwards, 0 acquisitions of a live lease, 0 acknowledged leases lost, 1 counters behind") {
		t.Fatalf("a C generation's loss charged to a backfill: %v %q", r, r.Observed)
	}
	// A session acquired but never read back leaves the read-back blind.
	other := mop(history.OpAcquire, "p2", 1, true, 400, 401)
	other.Session = "c:t"
	if r := migrationAcrossFailover(append(good, other), samples, windows, premise); r.Status != check.Unknown {
		t.Fatalf("an unread session: want unknown, got %v", r)
	}
	// An observed fork fails it too.
	forked := []history.KeyspaceSample{{At: ms(10)}, {At: ms(100), Forks: []string{"k old=p0 new=p1"}}}
	if r := migrationAcrossFailover(good, forked, windows, premise); r.Status != check.Fail {
		t.Fatalf("observed fork not caught: %v", r)
	}

	// Broken premises are unknown, never a verdict.
	for name, c := range map[string]struct {
		ops     []history.MigrationOp
		windows []history.FaultWindow
		premise MigrationFailoverPremise
	}{
		"no fault":       {good, nil, premise},
		"no read-back":   {good[:4], windows, premise},
		"unhealthy":      {good, []history.FaultWindow{{Fault: "f", Start: ms(50), End: ms(300), Unhealthy: "no primary"}}, premise},
		"no traffic":     {good[:2], windows, premise},
		"missed step":    {good, windows, MigrationFailoverPremise{TTL: ttl, Slack: slack, MinCalledInside: 1, MinSamples: 2, Aims: []Aim{{Step: "drain", Start: ms(310), End: ms(330)}}}},
		"aims mismatch":  {good, windows, MigrationFailoverPremise{TTL: ttl, Slack: slack, Aims: append(aims, aims...)}},
		"few samples":    {good, windows, MigrationFailoverPremise{TTL: ttl, Slack: slack, MinSamples: 10}},
		"started faulty": {good[2:], windows, premise},
	} {
		if r := migrationAcrossFailover(c.ops, samples, c.windows, c.premise); r.Status != check.Unknown {
			t.Errorf("%s: want unknown, got %v", name, r)
		}
	}
}
