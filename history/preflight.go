package history

import "time"

// The read-only pre-G3 checks' records (spec 000 §G3, §G4, §G5;
// traffic/preflight gathers them, check judges them).

// PreflightTopology is the endpoint's shape as discovered (CLUSTER INFO,
// CLUSTER SHARDS), or one standalone node.
type PreflightTopology struct {
	// Cluster is true when the endpoint runs with cluster support enabled.
	Cluster bool
	// State, SlotsAssigned and SlotsOK are CLUSTER INFO's cluster_state,
	// cluster_slots_assigned and cluster_slots_ok.
	State         string
	SlotsAssigned int
	SlotsOK       int
	// Nodes is every node discovered, primaries first.
	Nodes []PreflightNode
	// Err is why the shape could not be read at all.
	Err string
}

// PreflightNode is one discovered node.
type PreflightNode struct {
	Addr    string
	ID      string
	Primary bool
	// Slots is how many hash slots the node owns (primaries of a cluster);
	// 0 on a standalone node, which holds the whole keyspace.
	Slots int
	// Health is CLUSTER SHARDS' health field ("online", "fail", "loading").
	Health string
	// Err is why the gatherer could not talk to the node ("" when it did).
	Err string
}

// SlotPair is one hash-tagged key pair whose members must share a slot.
type SlotPair struct {
	// Source says where the pair came from: the implementation's key rule,
	// the live keyspace, or the operator (--pair).
	Source string
	A, B   string
	// SlotA and SlotB are the members' slots; By says who computed them:
	// "CLUSTER KEYSLOT" (the server) or "CRC16" (impl/slot, when the
	// endpoint has cluster support disabled and refuses CLUSTER KEYSLOT).
	SlotA, SlotB int
	By           string
	Err          string
}

// CrossSlotProbe is the A3 probe: one EVAL on an un-tagged two-key pair.
type CrossSlotProbe struct {
	Node string
	// Cluster is whether the probed endpoint has cluster support enabled.
	Cluster bool
	Keys    [2]string
	Slots   [2]int
	// Ran is true when the server executed the script.
	Ran bool
	// ErrKind is the error reply's code (CROSSSLOT, NOSCRIPT, ...); Err its
	// text or a transport error.
	ErrKind string
	Err     string
}

// NodeScan is one node's full SCAN: whether the cursor came back to 0 and
// how many keys it returned.
type NodeScan struct {
	Node string
	// Slots is how many hash slots the node owns (0 on a standalone node).
	Slots    int
	Complete bool
	Keys     int
	Err      string
}

// KeySize is one key's MEMORY USAGE.
type KeySize struct {
	Node  string
	Key   string
	Bytes int64
	Slot  int
}

// KeySizePass is the key-size sanity pass over the whole keyspace.
type KeySizePass struct {
	Cluster bool
	// Threshold is the item size that refuses slot migration (256 MB).
	Threshold int64
	Scans     []NodeScan
	// Largest holds every key above Threshold and the largest keys seen
	// below it, for evidence.
	Largest []KeySize
}

// CPUSample is one node's engine CPU over an interval: the delta of INFO
// cpu's used_cpu_{sys,user}_main_thread (or, on servers without them, the
// process's used_cpu_{sys,user}) between two reads Interval apart.
type CPUSample struct {
	Node     string
	Primary  bool
	Interval time.Duration
	// CPUSeconds is the CPU time the engine used within Interval.
	CPUSeconds float64
	// Source says which INFO fields were read.
	Source string
	Err    string
}

// LeaseCount is the old keyspace's live leases, counted by a full SCAN of
// every primary.
type LeaseCount struct {
	Cluster bool
	// Pattern is the SCAN MATCH pattern of an old-keyspace lease.
	Pattern string
	Scans   []NodeScan
	// Sample holds some of the lease keys found, for evidence.
	Sample []string
}

// Utilisation is the engine's busy fraction of one core over the interval.
func (s CPUSample) Utilisation() float64 {
	if s.Interval <= 0 {
		return 0
	}
	return s.CPUSeconds / s.Interval.Seconds()
}

// DurabilitySample is one primary's replication and persistence settings,
// as `slotgate preflight` reads them (INFO replication and persistence,
// CONFIG GET where the endpoint allows it).
type DurabilitySample struct {
	Node string
	// Replicas is connected_slaves; ReplicasOnline those in state online.
	Replicas, ReplicasOnline int
	// MaxLag is the largest replica lag INFO reports, in seconds.
	MaxLag int
	// MinReplicasToWrite and MinReplicasMaxLag are the primary's
	// min-replicas-to-write and min-replicas-max-lag; -1 when unreadable.
	MinReplicasToWrite, MinReplicasMaxLag int
	// Cluster is true on a cluster endpoint; NodeTimeout is its
	// cluster-node-timeout (0 when unreadable).
	Cluster     bool
	NodeTimeout time.Duration
	// AOF is appendonly; RDBSave the save schedule ("" = none); Persistence
	// false when neither could be read.
	AOF         bool
	RDBSave     string
	Persistence bool
	// ConfigErr is why CONFIG GET was refused (managed services rename or
	// forbid it): those settings are then unknown, not zero.
	ConfigErr string
	Err       string
}
