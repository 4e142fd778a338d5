package client

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// noRetryCmd is a go-redis command the library must never send twice.
//
// go-redis v9.23.0 retries a command whose reply did not come: in
// ClusterClient.process (osscluster.go) a read timeout or a broken
// connection passes shouldRetry (error.go; a timeout counts when the command
// has no read timeout of its own, which is every Pool.Do command), and the
// command is re-sent to the same node and then to the slot's node again, up
// to MaxRedirects times; a single-node Client does the same up to MaxRetries
// (3) in processWithRetry (redis.go). The first send may well have run: the
// reply was late, not the command. An INCR or a writing script then counts
// twice while the caller sees one success (spec 000 §Conformance, Routing;
// found by the routing row's non-idempotent check under latency). Both loops
// skip the retry when Cmder.NoRetry() is true, and still follow MOVED and
// ASK, which mean "not executed".
type noRetryCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetryCmd) NoRetry() bool { return true }

// goRedisRetryable reports a command go-redis may re-send after an unknown
// outcome: only a read (readOnlyCommands), which is the same however often
// it runs. Everything else, scripts included, is sent at most once.
func goRedisRetryable(c Cmd) bool {
	return len(c.Prefix) == 1 && readOnlyCommands[strings.ToUpper(c.Prefix[0])]
}

// goRedisSendable is what goRedisPool.Do hands to Process for c.
func goRedisSendable(cmd *redis.Cmd, c Cmd) redis.Cmder {
	if goRedisRetryable(c) {
		return cmd
	}
	return noRetryCmd{cmd}
}
