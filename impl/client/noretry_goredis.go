package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"reflect"
	"strings"
	"time"

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

// goRedisHonorsNoRetry says whether the linked go-redis asks a command
// whether it may be retried: Cmder.NoRetry first exists in v9.19.0. Below
// that release noRetryCmd's method is never called and a timed-out INCR is
// re-sent by the library (the routing row's non-idempotent check counts it
// twice), so every label of such a build says so (goRedisNoRetryMissing):
// impl's at-most-once guarantee for writes needs go-redis v9.19.0 or later.
var goRedisHonorsNoRetry = func() bool {
	_, ok := reflect.TypeFor[redis.Cmder]().MethodByName("NoRetry")
	return ok
}()

// goRedisNoRetryMissing is the label's note for a go-redis without NoRetry.
const goRedisNoRetryMissing = "(no Cmder.NoRetry, below v9.19.0: a timed-out write may be re-sent)"

// goRedisRetryable reports a command go-redis may re-send after an unknown
// outcome: only a read (readOnlyCommands), which is the same however often
// it runs. Everything else, scripts included, is sent at most once.
func goRedisRetryable(c Cmd) bool {
	return len(c.Prefix) == 1 && readOnlyCommands[strings.ToUpper(c.Prefix[0])]
}

// goRedisResends is how often goRedisProcess re-sends a command that was
// provably not executed: the retries go-redis's cluster loop would have made
// (MaxRedirects, 3) had NoRetry not switched them off.
const goRedisResends = 3

// goRedisProcess runs cmd (c's go-redis form) on rc. A command that may not
// be re-sent by the library is still re-sent here, with go-redis's own
// backoff, when the reply proves it did not run: a dial error (the
// connection never opened), a pool timeout, or CLUSTERDOWN, TRYAGAIN or
// LOADING from the server. A timeout or a broken connection is never
// re-sent: its outcome is unknown. Reads keep go-redis's own retries.
func goRedisProcess(ctx context.Context, rc redis.UniversalClient, cmd *redis.Cmd, c Cmd) {
	if goRedisRetryable(c) {
		_ = rc.Process(ctx, cmd)
		return
	}
	sendable := noRetryCmd{cmd}
	for attempt := 1; ; attempt++ {
		err := rc.Process(ctx, sendable)
		if err == nil || attempt > goRedisResends || !goRedisNotExecuted(err) {
			return
		}
		// internal.RetryBackoff with ClusterOptions' defaults (8 ms, 512 ms).
		d := min(8*time.Millisecond+time.Duration(rand.Int64N(int64(8*time.Millisecond)<<attempt)), 512*time.Millisecond)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return
		}
	}
}

// goRedisNotExecuted reports an error that proves the command did not run.
func goRedisNotExecuted(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" || errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	switch KindOf(goRedisErr(err)) {
	case KindClusterDown, KindTryAgain, KindLoading:
		return true
	}
	return false
}
