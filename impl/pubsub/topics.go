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

// Topics builds the exact event topics the relay SSUBSCRIBEs and
// SPUBLISHes (spec 000 §Sharded Pub/Sub Conversion: the two topic kinds,
// buzz:<community>:channel:<uuid> and buzz:<community>:global). No hash
// tag: the topic's whole name decides its slot, so one community's topics
// spread over every shard; a {community} tag would pin them all to one
// slot and recreate the hot node per community. The zero value is the
// builder as designed; ChannelTopic and GlobalTopic use it.
type Topics struct {
	// Mutant makes the builder a known-bad variant for the subscriptions
	// row's negative control (MutantTaggedTopics). Never set it in
	// production.
	Mutant Mutant
}

// MutantTaggedTopics is a topic builder that wraps the community in a hash
// tag (buzz:{<community>}:channel:<uuid>): every topic still works, and
// every topic of a community lands on one slot, so one shard carries the
// community's whole event fan-out (spec 000 §Sharded Pub/Sub Conversion:
// silently wrong, nothing errs).
const MutantTaggedTopics Mutant = "tagged-topics"

func (t Topics) community(c string) string {
	if t.Mutant == MutantTaggedTopics {
		return "{" + c + "}"
	}
	return c
}

// Channel is a channel's exact event topic.
func (t Topics) Channel(community, uuid string) string {
	return "buzz:" + t.community(community) + ":channel:" + uuid
}

// Global is a community's global exact event topic.
func (t Topics) Global(community string) string {
	return "buzz:" + t.community(community) + ":global"
}

// ChannelTopic is a channel's exact event topic (Topics as designed).
func ChannelTopic(community, uuid string) string { return Topics{}.Channel(community, uuid) }

// GlobalTopic is a community's global exact event topic (Topics as
// designed).
func GlobalTopic(community string) string { return Topics{}.Global(community) }

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
