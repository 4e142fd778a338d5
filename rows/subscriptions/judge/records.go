package judge

// TopicPlacement is one exact event topic as impl built it and as the live
// cluster placed it: the shard whose primary listed it in PUBSUB
// SHARDCHANNELS (-1: on none).
type TopicPlacement struct {
	// Kind is the spec's topic kind: "channel" or "global".
	Kind, Community, Topic string
	Shard                  int
}

// ShardLoad is one shard's SPUBLISH count (INFO commandstats delta on its
// primary) while one community's topics were published.
type ShardLoad struct {
	Community string
	Shard     int
	Calls     int64
}

// TopicSpreadRun is what the topic-spread scenario recorded.
type TopicSpreadRun struct {
	Topics []TopicPlacement
	Loads  []ShardLoad
	// Shards is how many shards the cluster had; Published and Delivered
	// count the scenario's messages (every one must arrive: the spread is
	// judged on a workload that works).
	Shards               int
	Published, Delivered int
}
