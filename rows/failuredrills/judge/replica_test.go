package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func replicaMs(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestReplicaReadsKept(t *testing.T) {
	d := ReplicaDrill{Shard: 1, Kill: replicaMs(100), Restarted: replicaMs(1000), End: replicaMs(2000)}
	var good []ReplicaOp
	for at := 0; at < 2000; at += 10 {
		good = append(good, ReplicaOp{Key: "k", Shard: 1, Call: replicaMs(at), Return: replicaMs(at + 1)}, ReplicaOp{Key: "k", Shard: 1, Read: true, Call: replicaMs(at), Return: replicaMs(at + 2)})
	}
	good = append(good, ReplicaOp{Key: "k", Shard: 1, Read: true, ErrKind: "network", Call: replicaMs(100), Return: replicaMs(101)})
	if r := ReplicaReadsKept.Judge(ReplicaReadsInput{Ops: good, Drill: d, MaxGap: time.Second, MaxFailPct: 1, MinOps: 10}); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	// Reads halted while the replica was dead: its shard was not served.
	halted, ok := PlantReplicaHalt(good, d)
	if r := ReplicaReadsKept.Judge(ReplicaReadsInput{Ops: halted, Drill: d, MaxGap: time.Second, MaxFailPct: 1, MinOps: 10}); !ok || r.Status != check.Fail {
		t.Fatalf("halted reads: %s %s", r.Status, r.Message)
	}
	if r := ReplicaReadsKept.Judge(ReplicaReadsInput{Ops: good[:4], Drill: d, MaxGap: time.Second, MaxFailPct: 1, MinOps: 10}); r.Status != check.Unknown {
		t.Fatalf("no traffic: %s %s", r.Status, r.Message)
	}
}

func TestReplicaResynced(t *testing.T) {
	if r := ReplicaResynced.Judge(ReplicaSync{Replica: "p0r0", LinkUp: true, ReplicaOffset: 42, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3}); r.Status != check.Pass {
		t.Fatalf("synced: %s %s", r.Status, r.Message)
	}
	if r := ReplicaResynced.Judge(ReplicaSync{Replica: "p0r0", LinkUp: false, ReplicaOffset: 0, PrimaryOffset: 42, PrimaryKeys: 3}); r.Status != check.Fail {
		t.Fatalf("down: %s %s", r.Status, r.Message)
	}
	if r := ReplicaResynced.Judge(ReplicaSync{Replica: "p0r0", LinkUp: true, ReplicaOffset: 40, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3}); r.Status != check.Fail {
		t.Fatalf("behind: %s %s", r.Status, r.Message)
	}
	// Equal readings of an empty primary, or of a primary whose offset
	// was not read, prove nothing.
	for name, s := range map[string]ReplicaSync{
		"empty primary":   {Replica: "p0r0", LinkUp: true},
		"offset not read": {Replica: "p0r0", LinkUp: true, PrimaryKeys: 3, ReplicaKeys: 3},
		"no replica read": {LinkUp: true, ReplicaOffset: 42, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3},
	} {
		if r := ReplicaResynced.Judge(s); r.Status != check.Unknown {
			t.Errorf("%s: %s %s, want unknown", name, r.Status, r.Message)
		}
	}
}
