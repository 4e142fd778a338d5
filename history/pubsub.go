package history

import "time"

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
