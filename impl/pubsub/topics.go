// Package pubsub is the relay's subscription layer over client.Subscriber
// (spec 000 §Sharded Pub/Sub Conversion, §Client Architecture).
//
// Exact event topics (buzz:<community>:channel:<uuid>, buzz:<community>:global)
// ride SSUBSCRIBE/SPUBLISH and deliberately carry no {community} hash tag, so
// each topic hashes to its own slot and propagation cost spreads over every
// shard. The two pattern subscribers (buzz:*:cache-invalidate,
// buzz:*:conn-control) stay classic PSUBSCRIBE/PUBLISH (Decision D2).
//
// The client libraries re-send subscriptions after a disconnect by
// themselves (client.MsgResubscribed), but neither re-subscribes a shard
// channel the server dropped because its slot moved (client.MsgDropped,
// after a slot migration or a failover): the Relay does, with backoff, until
// the server confirms. Its event log and Health say when it is recovering
// and when it reports healthy again, so a harness can score loss after the
// relay claimed health.
package pubsub

import "strings"

// Patterns the relay keeps on classic PSUBSCRIBE (spec 000 D2): a missed
// cache invalidation or live-ban transition is strictly worse than a
// low-volume broadcast path.
const (
	// CacheInvalidatePattern matches every community's cache-invalidate channel.
	CacheInvalidatePattern = "buzz:*:cache-invalidate"
	// ConnControlPattern matches every community's conn-control channel.
	ConnControlPattern = "buzz:*:conn-control"
)

// Patterns lists both classic pattern subscriptions.
var Patterns = []string{CacheInvalidatePattern, ConnControlPattern}

// ChannelTopic is a channel's exact event topic. No hash tag: the topic's
// whole name decides its slot (spec 000 §Sharded Pub/Sub Conversion).
func ChannelTopic(community, uuid string) string {
	return "buzz:" + community + ":channel:" + uuid
}

// GlobalTopic is a community's global exact event topic.
func GlobalTopic(community string) string { return "buzz:" + community + ":global" }

// CacheInvalidateChannel is the concrete channel CacheInvalidatePattern
// matches for community.
func CacheInvalidateChannel(community string) string {
	return "buzz:" + community + ":cache-invalidate"
}

// ConnControlChannel is the concrete channel ConnControlPattern matches for
// community.
func ConnControlChannel(community string) string { return "buzz:" + community + ":conn-control" }

// IsPattern reports a subscription name that is a glob pattern.
func IsPattern(name string) bool { return strings.ContainsAny(name, "*?[") }
