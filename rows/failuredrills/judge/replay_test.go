package judge

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// raw encodes v as one stored input.
func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here: a stored call of the
// old reflective checker holds one input per argument (ReplicaResynced's
// one argument is its whole input).
func TestFailureDrillCheckersReplay(t *testing.T) {
	d := []Drill{{Shard: 0, Mode: "kill", Start: 100 * time.Millisecond, End: 3000 * time.Millisecond}}
	ops := []DrillOp{dop(0, 1, 50, false, ""), dop(0, 2, 3500, false, "")}
	for at := 0; at < 4000; at += 100 {
		ops = append(ops, dop(1, int64(at+1), at, false, ""))
	}
	halts := DrillHalts(ops, d, 4000*time.Millisecond)
	dispatch := DrillDispatch.Judge(DispatchInput{Halts: halts, MaxGap: time.Second, MaxFailPct: 1})
	pool := HaltsWithin.Judge(HaltBudgetInput{Halts: PoolHalts(halts), Budget: time.Second})
	if dispatch.Status != check.Pass || !dispatch.Replayable() || dispatch.Call.Checker != "failure-drills/dispatch" {
		t.Fatalf("DrillDispatch.Judge = %+v", dispatch)
	}
	if pool.Status != check.Fail || !pool.Replayable() || pool.Call.Checker != "failure-drills/halt-budget" {
		t.Fatalf("HaltsWithin.Judge = %+v", pool)
	}

	// The dispatch check stored a composition of the old three- and
	// two-argument calls; it replays part by part through the aliases.
	want := check.All("drill-dispatch", dispatch, pool)
	composed := history.Call{Checker: "All", Input: []json.RawMessage{raw(t, "drill-dispatch")}, Parts: []history.Call{
		{Checker: "DrillDispatch", Input: []json.RawMessage{raw(t, halts), raw(t, time.Second), raw(t, 1.0)}},
		{Checker: "HaltsWithin", Input: []json.RawMessage{raw(t, PoolHalts(halts)), raw(t, time.Second)}},
	}}
	got, err := check.Replay(composed)
	if err != nil || got.Status != want.Status || got.Message != want.Message || got.Counterexample != want.Counterexample {
		t.Fatalf("replay of a stored composition = %+v, %v; want %+v", got, err, want)
	}

	sync := ReplicaSync{Replica: "p0r0", LinkUp: true, ReplicaOffset: 40, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3}
	behind := ReplicaResynced.Judge(sync)
	again, err := check.Replay(history.Call{Checker: "ReplicaResynced", Input: []json.RawMessage{raw(t, sync)}})
	if err != nil || behind.Status != check.Fail || again.Status != behind.Status || again.Message != behind.Message {
		t.Fatalf("replay of a stored one-argument call = %+v, %v; want %+v", again, err, behind)
	}

	r := partitionRun()
	acc := PartitionAccounted.Judge(PartitionAccountedInput{Runs: runs(r), MinOps: 10})
	again, err = check.Replay(history.Call{Checker: "PartitionAccounted", Input: []json.RawMessage{raw(t, runs(r)), raw(t, 10)}})
	if err != nil || acc.Status != check.Pass || again.Status != acc.Status || again.Message != acc.Message {
		t.Fatalf("replay of a stored two-argument call = %+v, %v; want %+v", again, err, acc)
	}

	rd := ReplicaDrill{Shard: 1, Kill: replicaMs(100), Restarted: replicaMs(1000), End: replicaMs(2000)}
	var rops []ReplicaOp
	for at := 0; at < 2000; at += 10 {
		rops = append(rops, ReplicaOp{Key: "k", Shard: 1, Call: replicaMs(at), Return: replicaMs(at + 1)}, ReplicaOp{Key: "k", Shard: 1, Read: true, Call: replicaMs(at), Return: replicaMs(at + 2)})
	}
	kept := ReplicaReadsKept.Judge(ReplicaReadsInput{Ops: rops, Drill: rd, MaxGap: time.Second, MaxFailPct: 1, MinOps: 10})
	again, err = check.Replay(history.Call{Checker: "ReplicaReadsKept", Input: []json.RawMessage{raw(t, rops), raw(t, rd), raw(t, time.Second), raw(t, 1.0), raw(t, 10)}})
	if err != nil || kept.Status != check.Pass || again.Status != kept.Status || again.Message != kept.Message {
		t.Fatalf("replay of a stored five-argument call = %+v, %v; want %+v", again, err, kept)
	}
}
