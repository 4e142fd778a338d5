package fencing

import (
	"context"
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/impl/client"
)

// Backfill folds each session's old generation counter into its new one by
// max-merge (spec 000 §The protocol: "Backfill (once, after full-B) …
// Idempotent"). It is a cross-slot script per session, legal only with
// cluster mode disabled. It returns how many sessions it merged.
func Backfill(ctx context.Context, pool client.Pool, sessions []Session) (int, error) {
	return Embedded().Backfill(ctx, pool, sessions)
}

// ReverseMerge folds each session's new generation counter into its old one
// (spec 000 §Deployment Gate rule 4): required before rolling back into O,
// which issues from the old counter alone (absence is mutant M7).
func ReverseMerge(ctx context.Context, pool client.Pool, sessions []Session) (int, error) {
	return Embedded().ReverseMerge(ctx, pool, sessions)
}

// mergeCounters runs a max-merge script per session. In durability mode
// (d.On) each merge is confirmed by WAIT like every directory script: a
// merge the replicas did not acknowledge is an error — its outcome is
// unknown, and a failover may undo it, leaving the new counter below the
// old one (T2 across the backfill, spec 000 §Safety theorems).
func mergeCounters(ctx context.Context, pool client.Pool, s *client.Script, sessions []Session, what string, d Durability) (int, error) {
	for i, sess := range sessions {
		//slotgate:disabled-mode-only the old and new counters span slots by design; backfill and reverse merge run only with cluster mode disabled (spec 000 §The protocol)
		keys := []string{OldKeys(sess).Generation, NewKeys(sess).Generation}
		//slotgate:disabled-mode-only the old and new counters span slots by design; backfill and reverse merge run only with cluster mode disabled (spec 000 §The protocol)
		if _, _, err := d.runScript(ctx, pool, s, keys, BarrierKey(keys[1])); err != nil {
			return i, fmt.Errorf("%s %s: %w", what, sess, err)
		}
	}
	return len(sessions), nil
}

// Keyspace names one of the two fencing keyspaces.
type Keyspace string

const (
	KeyspaceOld Keyspace = "old" // buzz:<community>:tunnel:<session>:…
	KeyspaceNew Keyspace = "new" // buzz:tunnel:{<community>:<session>}:…
)

func (k Keyspace) pattern(suffix string) string {
	if k == KeyspaceOld {
		return "buzz:*:tunnel:*:" + suffix
	}
	return "buzz:tunnel:{*}:" + suffix
}

// CountLeases counts the live leases of keyspace k by direct observation
// (the C-gate's "observed old-keyspace lease count = 0", spec 000 §The
// protocol — never a timer). It SCANs the node: that is sound here only
// because the migration runs on ONE standalone node (disabled mode), where a
// full SCAN returns every key present for its whole duration; on a cluster
// it would have to visit every primary (and §Failure Modes names partial
// SCAN discovery as a silent hazard). Expired keys are not returned.
func CountLeases(ctx context.Context, pool client.Pool, k Keyspace) (int, error) {
	keys, err := scanAll(ctx, pool, k.pattern("lease"))
	return len(keys), err
}

// Sessions discovers the sessions that have a generation counter in
// keyspace k (the backfill's and reverse merge's work list), by the same
// single-node SCAN as CountLeases.
func Sessions(ctx context.Context, pool client.Pool, k Keyspace) ([]Session, error) {
	keys, err := scanAll(ctx, pool, k.pattern("generation"))
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(keys))
	for _, key := range keys {
		if s, ok := parseSession(k, key); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func parseSession(k Keyspace, key string) (Session, bool) {
	if k == KeyspaceOld { // buzz:<c>:tunnel:<s>:generation
		rest, ok := strings.CutPrefix(key, "buzz:")
		if !ok {
			return Session{}, false
		}
		c, s, ok := strings.Cut(rest, ":tunnel:")
		s, ok2 := strings.CutSuffix(s, ":generation")
		return Session{Community: c, ID: s}, ok && ok2
	}
	rest, ok := strings.CutPrefix(key, "buzz:tunnel:{")
	tag, ok2 := strings.CutSuffix(rest, "}:generation")
	c, s, ok3 := strings.Cut(tag, ":")
	return Session{Community: c, ID: s}, ok && ok2 && ok3
}

func scanAll(ctx context.Context, pool client.Pool, match string) ([]string, error) {
	cursor := "0"
	var out []string
	for {
		reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"SCAN", cursor, "MATCH", match, "COUNT", "1000"}})
		if err != nil {
			return out, fmt.Errorf("scan %s: %w", match, err)
		}
		vals, ok := reply.([]any)
		if !ok || len(vals) != 2 {
			return out, fmt.Errorf("scan %s: %w: %v", match, ErrBadReply, reply)
		}
		cursor, err = client.AsString(vals[0])
		if err != nil {
			return out, fmt.Errorf("scan %s: %w: %w", match, ErrBadReply, err)
		}
		keys, _, err := client.AsStrings(vals[1])
		if err != nil {
			return out, fmt.Errorf("scan %s: %w: %w", match, ErrBadReply, err)
		}
		out = append(out, keys...)
		if cursor == "0" {
			return out, nil
		}
	}
}
