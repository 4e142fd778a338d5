package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func dop(shard int, seq int64, at int, final bool, errKind string) DrillOp {
	return DrillOp{Key: "k" + string(rune('0'+shard)), Shard: shard, Seq: seq, Final: final, ErrKind: errKind, Call: time.Duration(at) * time.Millisecond, Return: time.Duration(at+1) * time.Millisecond}
}

func TestDrillHaltsAndAccounting(t *testing.T) {
	d := []Drill{{Shard: 0, Mode: "kill", Start: 100 * time.Millisecond, End: 3000 * time.Millisecond}}
	ops := []DrillOp{dop(0, 1, 50, false, ""), dop(0, 2, 99, false, ""), dop(0, 3, 200, false, "network"), dop(0, 4, 3500, false, "")}
	for at := 0; at < 4000; at += 100 {
		ops = append(ops, dop(1, int64(at+1), at, false, ""))
	}
	ops = append(ops, dop(0, 4, 4100, true, ""), dop(1, 3901, 4100, true, ""))
	h := DrillHalts(ops, d, 4000*time.Millisecond)
	if len(h) != 1 || !h[0].Recovered || h[0].Dead < 3*time.Second || h[0].Healthy > 200*time.Millisecond {
		t.Fatalf("halts: %+v", h)
	}
	if r := DrillDispatch.Judge(DispatchInput{Halts: h, MaxGap: time.Second, MaxFailPct: 1}); r.Status != check.Pass {
		t.Fatalf("dispatch: %s", r.Message)
	}
	if r := DrillAccounted.Judge(AccountedInput{Ops: ops, Drills: d, Window: time.Second, MinOps: 1}); r.Status != check.Pass {
		t.Fatalf("accounted: %s", r.Message)
	}
	planted, ok := PlantLoss(ops, d)
	if r := DrillAccounted.Judge(AccountedInput{Ops: planted, Drills: d, Window: time.Second, MinOps: 1}); !ok || r.Status != check.Fail {
		t.Fatalf("planted loss: %v %s", ok, r.Message)
	}
	// A halt-all client: the healthy shard stops too.
	var halted []DrillOp
	for _, o := range ops {
		if o.Shard == 1 && o.Call > 100*time.Millisecond && o.Call < 3400*time.Millisecond {
			continue
		}
		halted = append(halted, o)
	}
	if r := DrillDispatch.Judge(DispatchInput{Halts: DrillHalts(halted, d, 4000*time.Millisecond), MaxGap: time.Second, MaxFailPct: 1}); r.Status != check.Fail {
		t.Fatalf("halt-all: %s", r.Message)
	}
}

// Without what they rely on, the drill checkers say unknown, never pass:
// no drill, no healthy-shard traffic during a halt, too few acknowledged
// writes, a key not read back.
func TestDrillCheckersUnknown(t *testing.T) {
	d := []Drill{{Shard: 0, Mode: "kill", Start: 100 * time.Millisecond, End: 3000 * time.Millisecond}}
	onlyDrilled := []DrillOp{dop(0, 1, 50, false, ""), dop(0, 2, 3500, false, ""), dop(0, 2, 4100, true, "")}
	notRead := []DrillOp{dop(0, 1, 50, false, ""), dop(1, 1, 60, false, ""), dop(0, 1, 4100, true, "")}
	for name, r := range map[string]check.Result{
		"no drill":          DrillDispatch.Judge(DispatchInput{MaxGap: time.Second, MaxFailPct: 1}),
		"no healthy op":     DrillDispatch.Judge(DispatchInput{Halts: DrillHalts(onlyDrilled, d, 4000*time.Millisecond), MaxGap: time.Second, MaxFailPct: 1}),
		"too few writes":    DrillAccounted.Judge(AccountedInput{Ops: onlyDrilled, Drills: d, Window: time.Second, MinOps: 100}),
		"key not read back": DrillAccounted.Judge(AccountedInput{Ops: notRead, Drills: d, Window: time.Second, MinOps: 1}),
	} {
		if r.Status != check.Unknown {
			t.Errorf("%s: %s %q, want unknown", name, r.Status, r.Message)
		}
	}
}
