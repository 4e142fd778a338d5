package judge

import (
	"encoding/json"
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestSlotMathAgrees(t *testing.T) {
	good := make([]SlotSample, 10)
	for i := range good {
		good[i] = SlotSample{Key: "k", Local: i, Server: i}
	}
	if r := slotMathAgrees(good, 10); r.Status != check.Pass {
		t.Errorf("agreeing samples: %s", r.Message)
	}
	if r := slotMathAgrees(good, 11); r.Status != check.Unknown {
		t.Errorf("too few samples must be unknown: %s", r.Status)
	}
	bad := append(good, SlotSample{Key: "{a}b", Local: 1, Server: 2})
	if r := slotMathAgrees(bad, 1); r.Status != check.Fail {
		t.Errorf("disagreeing sample not caught")
	}
}

func TestPublishCheckers(t *testing.T) {
	classic := []NodeDelta{
		{Node: "p0", Shard: 0, Sender: true}, {Node: "r0", Shard: 0, PublishReceived: 100},
		{Node: "p1", Shard: 1, PublishReceived: 100}, {Node: "r1", Shard: 1, PublishReceived: 100},
	}
	sharded := []NodeDelta{
		{Node: "p0", Shard: 0, Sender: true}, {Node: "r0", Shard: 0, ShardPublishReceived: 100},
		{Node: "p1", Shard: 1}, {Node: "r1", Shard: 1},
	}
	if r := broadcastReachesAll(classic, 100); r.Status != check.Pass {
		t.Errorf("broadcast: %s", r.Message)
	}
	if r := broadcastReachesAll(sharded, 100); r.Status != check.Fail {
		t.Errorf("confined traffic passed as broadcast")
	}
	if r := shardConfined(sharded, 0, 100); r.Status != check.Pass {
		t.Errorf("confined: %s", r.Message)
	}
	if r := shardConfined(classic, 0, 100); r.Status != check.Fail {
		t.Errorf("classic broadcast passed as confined")
	}
}

func TestUndeclaredKeyHazard(t *testing.T) {
	if r := undeclaredKeyHazard(UndeclaredKeys{RemoteErr: "ERR non local key", EarlierWriteApplied: true}); r.Status != check.Pass {
		t.Errorf("measured refinement: %s", r.Message)
	}
	if r := undeclaredKeyHazard(UndeclaredKeys{}); r.Status != check.Fail {
		t.Errorf("single-shard observation (no remote key) must fail")
	}
}

// The checkers replay by their stable names and by the names histories
// stored them under before they were defined here.
func TestAxiomCheckersReplay(t *testing.T) {
	r := SlotMathAgrees.Judge(SlotSamples{Samples: []SlotSample{{Key: "a", Local: 1, Server: 2}}, MinSamples: 1})
	if r.Status != check.Fail || !r.Replayable() || r.Call.Checker != "axioms/slot-math-agrees" {
		t.Fatalf("Judge = %+v", r)
	}
	old := *r.Call
	old.Checker = "SlotMathAgrees"
	old.Input = []json.RawMessage{json.RawMessage(`[{"Key":"a","Local":1,"Server":2}]`), json.RawMessage("1")}
	again, err := check.Replay(old)
	if err != nil || again.Status != check.Fail || again.Message != r.Message {
		t.Fatalf("replay of a stored two-argument call = %+v, %v; want %+v", again, err, r)
	}
}
