package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

func TestStragglersDrained(t *testing.T) {
	ttl, slack := 100*time.Millisecond, 5*time.Millisecond
	st := []history.Straggler{{Pod: "a0", Phase: "A", Left: ms(50), Gone: ms(400)}}
	h := []history.MigrationOp{
		mop(history.OpAcquire, "a0", 1, true, 0, 2),
		mop(history.OpRenew, "a0", 1, true, 100, 101),
		mop(history.OpRenew, "a0", 1, true, 300, 301), // after the backfill at 200
	}
	if r := judged(t, StragglersDrained, StragglersDrainedInput{Ops: h, Stragglers: st, After: ms(200), GateAt: ms(500), TTL: ttl, Slack: slack}); r.Status != check.Pass {
		t.Fatalf("gate after the last lease lapsed: %v", r)
	}
	if r := stragglersDrained(h, st, ms(200), ms(350), ttl, slack); r.Status != check.Fail {
		t.Fatalf("gate while a straggler lease was live: %v", r)
	}
	released := append(append([]history.MigrationOp(nil), h...), mop(history.OpRelease, "a0", 1, true, 320, 321))
	if r := stragglersDrained(released, st, ms(200), ms(350), ttl, slack); r.Status != check.Pass {
		t.Fatalf("gate after the straggler released: %v", r)
	}
	// Premises: a straggler that renewed nothing after the backfill, and no
	// straggler at all.
	if r := stragglersDrained(h[:2], st, ms(200), ms(500), ttl, slack); r.Status != check.Unknown {
		t.Fatalf("no renew after the backfill: %v", r)
	}
	if r := stragglersDrained(h, nil, ms(200), ms(500), ttl, slack); r.Status != check.Unknown {
		t.Fatalf("no straggler: %v", r)
	}
}
