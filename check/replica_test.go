package check

import (
	"testing"
	"time"
)

func replicaMs(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestReplicaReadsKept(t *testing.T) {
	d := ReplicaDrill{Shard: 1, Kill: replicaMs(100), Restarted: replicaMs(1000), End: replicaMs(2000)}
	var good []ReplicaOp
	for at := 0; at < 2000; at += 10 {
		good = append(good, ReplicaOp{Key: "k", Shard: 1, Call: replicaMs(at), Return: replicaMs(at + 1)}, ReplicaOp{Key: "k", Shard: 1, Read: true, Call: replicaMs(at), Return: replicaMs(at + 2)})
	}
	good = append(good, ReplicaOp{Key: "k", Shard: 1, Read: true, ErrKind: "network", Call: replicaMs(100), Return: replicaMs(101)})
	if r := ReplicaReadsKept(good, d, time.Second, 1, 10); r.Status != Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	// Reads halted while the replica was dead: its shard was not served.
	halted, ok := PlantReplicaHalt(good, d)
	if r := ReplicaReadsKept(halted, d, time.Second, 1, 10); !ok || r.Status != Fail {
		t.Fatalf("halted reads: %s %s", r.Status, r.Message)
	}
	if r := ReplicaReadsKept(good[:4], d, time.Second, 1, 10); r.Status != Unknown {
		t.Fatalf("no traffic: %s %s", r.Status, r.Message)
	}
}

func TestReplicaResynced(t *testing.T) {
	if r := ReplicaResynced(ReplicaSync{Replica: "p0r0", LinkUp: true, ReplicaOffset: 42, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3}); r.Status != Pass {
		t.Fatalf("synced: %s %s", r.Status, r.Message)
	}
	if r := ReplicaResynced(ReplicaSync{Replica: "p0r0", LinkUp: false, ReplicaOffset: 0, PrimaryOffset: 42, PrimaryKeys: 3}); r.Status != Fail {
		t.Fatalf("down: %s %s", r.Status, r.Message)
	}
	if r := ReplicaResynced(ReplicaSync{Replica: "p0r0", LinkUp: true, ReplicaOffset: 40, PrimaryOffset: 42, ReplicaKeys: 3, PrimaryKeys: 3}); r.Status != Fail {
		t.Fatalf("behind: %s %s", r.Status, r.Message)
	}
}
