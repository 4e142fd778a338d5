package judge

import "time"

// DrillOp is one recorded write (SET key seq) of the failure-drill workload,
// or the read-back of a key after the drill (Final, value in Seq). Each key
// has one sequential writer whose sequence numbers increase. The partition
// drill records its RPUSH key seq writes as DrillOps too.
type DrillOp struct {
	Key     string
	Shard   int
	Seq     int64
	Final   bool
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}

// Acked says the operation returned success.
func (o DrillOp) Acked() bool { return o.ErrKind == "" }

// Drill is one injected failover on the scenario clock.
type Drill struct {
	Shard int
	// Mode is "graceful" or "kill".
	Mode  string
	Start time.Duration
	End   time.Duration
	// Until, when set, ends the drill's judged window before the next
	// drill starts: the harness's own reset between drills (it kills every
	// connection and fails the shard back) is no part of this drill.
	Until time.Duration
}

// ReplicaOp is one operation of the replica-repair workload: a write (SET,
// served by the primary) or a read that may go to a replica.
type ReplicaOp struct {
	Key     string
	Shard   int
	Read    bool
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}

// ReplicaDrill is one replica kill and restart on the scenario clock.
type ReplicaDrill struct {
	Shard int
	// Kill is when the replica was killed, Restarted when it answered
	// again, End the end of the measurement.
	Kill, Restarted, End time.Duration
}

// ReplicaSync is a replica's replication state next to its primary's, read
// once writes stopped.
type ReplicaSync struct {
	Replica                      string
	LinkUp                       bool
	ReplicaOffset, PrimaryOffset int64
	ReplicaKeys, PrimaryKeys     int64
}

// PartitionTimeline is one partition of a shard's primary on the scenario
// clock.
type PartitionTimeline struct {
	Shard int
	// Start is when the disconnect was requested. MinorityDown is when the
	// isolated primary was first seen reporting cluster_state:fail (zero:
	// not within the fault's bound). Promoted is when the replica the
	// majority elected answered as primary with cluster_state:ok. Heal is
	// when the node was put back on the bus; Rejoined when it answered as a
	// replica of the new primary with its link up.
	Start, MinorityDown, Promoted, Heal, Rejoined time.Duration
}

// LedgerEntry is one element of a key (the seq one write appended) that the
// isolated primary's copy held and the new primary's did not while the
// partition held: a write the partition will discard.
type LedgerEntry struct {
	Key string
	Seq int64
}

// PartitionRun is what one client recorded across one partition, with what
// the harness read from the servers.
type PartitionRun struct {
	Timeline PartitionTimeline
	// Writes are RPUSH key seq: one sequential writer per key, seq rising,
	// so every acknowledged write is one element the key must keep
	// (DrillOp, Final unused). Shard is the shard owning the key.
	Writes []DrillOp
	// Until is when the workload stopped.
	Until time.Duration
	// MinorityWrite is the error kind of a write sent straight to the
	// isolated primary while the partition held, after it reported
	// cluster_state:fail ("" = it was acknowledged).
	MinorityWrite string
	// Ledger is the loss ledger: the elements of the partitioned shard's
	// keys present on the isolated primary's copy and absent from the new
	// primary's, read from both servers while the partition held (the
	// ledger is the servers' word, not derived from the read-back).
	// LedgerRead says that snapshot was taken.
	Ledger     []LedgerEntry
	LedgerRead bool
	// Survivors are every key's elements as read back after the heal; a
	// key absent from the map was not read back.
	Survivors map[string][]int64
}
