package check_test

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func vop(owner string, gen int64, verdict, call, ret int) history.MigrationOp {
	op := mop(history.OpValidate, owner, gen, false, call, ret)
	op.Verdict = verdict
	return op
}

func TestPausedPodsFenced(t *testing.T) {
	ttl, slack := 100*time.Millisecond, 5*time.Millisecond
	pause := history.PodPause{Pod: "p0", Label: "C", Phase: "C", From: ms(40), To: ms(300), Beliefs: map[string]int64{"c:s": 1}}
	before := []history.MigrationOp{
		mop(history.OpAcquire, "p0", 1, true, 0, 2),
		mop(history.OpRenew, "p0", 1, true, 30, 31),
		// p0 frozen at 40; its lease expires by ~131; it re-acquires on resume.
		mop(history.OpAcquire, "p0", 2, true, 300, 301),
	}
	good := append(append([]history.MigrationOp(nil), before...),
		mop(history.OpRenew, "p0", 1, false, 302, 303),   // delayed renew: refused
		vop("p0", 1, 0, 304, 305),                        // stale frame: refused
		mop(history.OpRelease, "p0", 1, false, 306, 307), // delayed release: refused
	)
	if r := check.PausedPodsFenced(good, []history.PodPause{pause}, ttl, slack); r.Status != check.Pass {
		t.Fatalf("good history: %v", r)
	}
	for name, bad := range map[string]history.MigrationOp{
		"renew of its own newer lease":   mop(history.OpRenew, "p0", 1, true, 302, 303),
		"release of its own newer lease": mop(history.OpRelease, "p0", 1, true, 306, 307),
		"stale frame accepted":           vop("p0", 1, 1, 304, 305),
	} {
		h := append(append([]history.MigrationOp(nil), good...), bad)
		if r := check.PausedPodsFenced(h, []history.PodPause{pause}, ttl, slack); r.Status != check.Fail {
			t.Fatalf("%s not caught: %v", name, r)
		}
	}
	// An expired frame (nobody re-acquired) accepted is caught too.
	expired := []history.MigrationOp{before[0], before[1], vop("p0", 1, 1, 304, 305)}
	if r := check.PausedPodsFenced(expired, []history.PodPause{pause}, ttl, slack); r.Status != check.Fail {
		t.Fatalf("expired frame accepted not caught: %v", r)
	}
	// Without the same-owner case the check cannot vouch for the guards.
	noSelf := []history.MigrationOp{before[0], before[1], vop("p0", 1, -1, 304, 305), mop(history.OpRenew, "p0", 1, false, 306, 307)}
	if r := check.PausedPodsFenced(noSelf, []history.PodPause{pause}, ttl, slack); r.Status != check.Unknown {
		t.Fatalf("no same-owner case: %v", r)
	}
	// A frame while the lease may still be live is not judged.
	early := history.PodPause{Pod: "p0", Label: "C", From: ms(40), To: ms(60), Beliefs: map[string]int64{"c:s": 1}}
	if r := check.PausedPodsFenced([]history.MigrationOp{before[0], before[1], vop("p0", 1, 1, 70, 71)}, []history.PodPause{early}, ttl, slack); r.Status != check.Unknown {
		t.Fatalf("live frame judged: %v", r)
	}
}
