package judge

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// pipeRun builds a run of two keys, a (delta 101) and the poisoned p
// (delta 103), over batches that INCRBY both, one batch per millisecond,
// with one fault on a's slot covering batch 1.
func pipeRun(batches int) PipelineRun {
	r := PipelineRun{Path: "test", MinBatches: batches, Poison: "x",
		Faults: []FaultSpan{{Fault: "slot/migrate-7", Slots: []int{7}, Start: time.Millisecond, End: 2 * time.Millisecond}}}
	for b := range batches {
		at := time.Duration(b) * time.Millisecond
		r.Cmds = append(r.Cmds,
			PipeCmd{Batch: b, Key: "a", Slot: 7, Kind: PipeIncr, Delta: 101, Int: 101 * int64(b+1), Call: at, Return: at + time.Millisecond/2},
			PipeCmd{Batch: b, Key: "p", Slot: 9, Kind: PipeIncr, Delta: 103, Poisoned: true, ErrKind: "ERR", Err: "ERR value is not an integer", Call: at, Return: at + time.Millisecond/2})
	}
	r.Finals = []PipeFinal{{Key: "a", Value: itoa(101 * int64(batches)), Read: true}, {Key: "p", Value: "x", Read: true}}
	return r
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestPipelineAttributedPasses(t *testing.T) {
	r := pipeRun(4)
	if v := pipelineAttributed(r); v.Status != Pass {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
	if v := pipelineComplete(r); v.Status != Pass {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestPipelineAttributedCatchesForeignReply(t *testing.T) {
	r := pipeRun(4)
	r.Cmds[2].Int = 103 * 2 // batch 1's reply for a is p's kind of number
	v := pipelineAttributed(r)
	if v.Status != Fail || !strings.Contains(v.Message, "1 replies attributed to the wrong key") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestPipelineAttributedCatchesAppliedButReportedFailed(t *testing.T) {
	r := pipeRun(4)
	r.Cmds[6].ErrKind, r.Cmds[6].Err = "ERR", "ERR value is not an integer" // batch 3: a told it failed, yet it ran
	v := pipelineAttributed(r)
	if v.Status != Fail || !strings.Contains(v.Message, "1 keys with writes applied that were reported failed") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
	// A failed round trip is an unknown outcome: the same run passes.
	r.Cmds[6].ErrKind = "network"
	if v := pipelineAttributed(r); v.Status != Pass {
		t.Fatalf("unknown outcome: %s: %s", v.Status, v.Message)
	}
}

func TestPipelineAttributedCatchesLostWrite(t *testing.T) {
	r := pipeRun(4)
	r.Finals[0].Value = itoa(101 * 3)
	if v := pipelineAttributed(r); v.Status != Fail || !strings.Contains(v.Message, "1 acknowledged writes lost") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestPipelineCompleteCatchesDropAndUnsurfaced(t *testing.T) {
	r := pipeRun(4)
	r.Cmds[0].Missing = true
	r.Cmds[3].ErrKind, r.Cmds[3].Int = "", 103
	v := pipelineComplete(r)
	if v.Status != Fail || !strings.Contains(v.Message, "1 commands without an outcome, 1 per-key failures not surfaced") {
		t.Fatalf("%s: %s", v.Status, v.Message)
	}
}

func TestPipelinePremises(t *testing.T) {
	r := pipeRun(4)
	r.MinBatches = 5
	if v := pipelineAttributed(r); v.Status != Unknown {
		t.Fatalf("too few batches: %s: %s", v.Status, v.Message)
	}
	r = pipeRun(4)
	r.Faults[0].Slots = []int{8}
	if v := pipelineComplete(r); v.Status != Unknown {
		t.Fatalf("no traffic on the faulted slot: %s: %s", v.Status, v.Message)
	}
	r = pipeRun(4)
	r.Finals[0].Read = false
	if v := pipelineAttributed(r); v.Status != Unknown {
		t.Fatalf("a key not read back: %s: %s", v.Status, v.Message)
	}
}
