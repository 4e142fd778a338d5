// Package judge holds the axioms row's records and pure checkers (spec 000
// §Axioms A1, A2, A4): slot math against CLUSTER KEYSLOT, the undeclared-key
// hazard, and where classic and sharded publishes travel. Each checker is
// defined under a stable name (check.Define); the aliases are the names
// earlier histories stored it under.
package judge

import "time"

// UndeclaredKeys is what the server did with a script that reaches keys not
// declared in KEYS (numkeys 0), the access spec 000 §Axioms A2 prohibits.
type UndeclaredKeys struct {
	// SameNodeErr is the error of a script writing two undeclared keys in
	// two slots of the node it runs on ("" = succeeded).
	SameNodeErr string
	// RemoteErr is the error of a script writing a local undeclared key and
	// then a key of another node ("" = succeeded).
	RemoteErr string
	// EarlierWriteApplied is true when, after RemoteErr, the script's first
	// (local) write is visible: the script was not atomic.
	EarlierWriteApplied bool
}

// SlotSample is one key with the slot computed locally and the slot the
// server answered (CLUSTER KEYSLOT).
type SlotSample struct {
	Key    string
	Local  int
	Server int
}

// NodeDelta is what one node did during a publish burst: the cluster-bus
// publish messages it received (CLUSTER INFO
// cluster_stats_messages_publish[shard]_received) and the main-thread CPU it
// spent (INFO cpu), as deltas over the burst.
type NodeDelta struct {
	Node    string
	Shard   int
	Primary bool
	// Sender is true for the node the burst was sent to.
	Sender               bool
	PublishReceived      int64
	ShardPublishReceived int64
	CPU                  time.Duration
}
