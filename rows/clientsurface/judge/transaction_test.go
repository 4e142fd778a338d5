package judge

import (
	"strings"
	"testing"
	"time"
)

func txRun(n int) TxRun {
	r := TxRun{Path: "test", MinTx: n, Bound: time.Second,
		Faults: []FaultSpan{{Fault: "slot/migrate-7", Slots: []int{7}, Start: 0, End: time.Millisecond}}}
	for i := range n {
		at := time.Duration(i) * time.Millisecond
		r.Ops = append(r.Ops, TxOp{Pair: "{t}", Slot: 7, A: int64(i + 1), B: int64(i + 1), Call: at, Return: at + time.Millisecond/2})
	}
	r.Finals = []TxFinal{{Pair: "{t}", A: itoa(int64(n)), B: itoa(int64(n)), Read: true}}
	return r
}

func TestTxPasses(t *testing.T) {
	r := txRun(3)
	if v := txAllOrNothing(r); v.Status != Pass {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
	if v := txCompleted(r); v.Status != Pass {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestTxCatchesHalfApplied(t *testing.T) {
	r := txRun(3)
	r.Finals[0].B = "2"
	if v := txAllOrNothing(r); v.Status != Fail || !strings.Contains(v.Message, "1 half-applied") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestTxCatchesAbortTakenForSuccess(t *testing.T) {
	r := txRun(3)
	r.Ops = append(r.Ops, TxOp{Pair: "{t}", Slot: 7, Empty: true, Call: 3 * time.Millisecond, Return: 4 * time.Millisecond})
	v := txAllOrNothing(r)
	if v.Status != Fail || !strings.Contains(v.Message, "1 pairs missing acknowledged transactions") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
	if v := txCompleted(r); v.Status != Fail || !strings.Contains(v.Message, "1 taken for success") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestTxCompletedCatchesFailureAndSlowness(t *testing.T) {
	r := txRun(3)
	r.Ops[1] = TxOp{Pair: "{t}", Slot: 7, ErrKind: "EXECABORT", Err: "EXECABORT", Call: r.Ops[1].Call, Return: r.Ops[1].Return}
	r.Ops[2].A, r.Ops[2].B = 2, 2
	r.Finals[0].A, r.Finals[0].B = "2", "2"
	if v := txAllOrNothing(r); v.Status != Pass {
		t.Fatalf("a refused transaction is not a half-applied one: %s: %s", v.Status, v.Message)
	}
	r.Ops[0].Return = r.Ops[0].Call + 2*time.Second
	v := txCompleted(r)
	if v.Status != Fail || !strings.Contains(v.Message, "1 transactions failed (EXECABORT×1)") || !strings.Contains(v.Message, "1 slower than") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

// A transaction run twice for one acknowledgement (a re-send after a lost
// EXEC reply) shows in the next reply and in the read-back.
func TestTxCatchesRunTwice(t *testing.T) {
	r := txRun(3)
	r.Ops[1].A, r.Ops[1].B = 3, 3
	r.Ops[2].A, r.Ops[2].B = 4, 4
	r.Finals[0].A, r.Finals[0].B = "4", "4"
	if v := txAllOrNothing(r); v.Status != Fail || !strings.Contains(v.Message, "1 EXEC replies out of their bounds") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}
