// Package guard is the relay's per-key atomic family (spec 000 §System
// Model, "Replay guard / rate limit": `SET NX EX` in nip98_replay.rs and a
// single-key Lua script in rate_limiter.rs — "Per-key atomic; safe once
// routed"). Each operation touches exactly one key, so a cluster routes it
// to one slot's primary and its atomicity is the server's.
package guard

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// Mutant names a known-bad variant, a negative control for the per-key
// atomicity checks.
type Mutant string

const (
	// MutantNone is the correct implementation.
	MutantNone Mutant = ""
	// MutantReadThenWrite checks and writes in two round trips (GET, then
	// SET / INCR-less SET): concurrent callers both pass the check.
	MutantReadThenWrite Mutant = "read-then-write"
)

// ReplayKey is the replay-guard key of a NIP-98 event id in community.
func ReplayKey(community, eventID string) string {
	return "buzz:" + community + ":nip98:" + eventID
}

// Replay is the NIP-98 replay guard.
type Replay struct {
	pool   client.Pool
	ttl    time.Duration
	mutant Mutant
	// Gap widens the race window of MutantReadThenWrite (between the read
	// and the write), so a control trips deterministically enough.
	Gap time.Duration
}

// NewReplay returns a replay guard remembering ids for ttl.
func NewReplay(pool client.Pool, ttl time.Duration, m Mutant) *Replay {
	return &Replay{pool: pool, ttl: ttl, mutant: m, Gap: time.Millisecond}
}

// First reports whether eventID is seen for the first time (and records
// it): SET key 1 NX PX ttl answers OK exactly once per live key.
func (g *Replay) First(ctx context.Context, community, eventID string) (bool, error) {
	k := ReplayKey(community, eventID)
	px := strconv.FormatInt(g.ttl.Milliseconds(), 10)
	if g.mutant == MutantReadThenWrite {
		v, err := g.pool.Do(ctx, client.NewCmd("GET", []string{k}))
		if err != nil {
			return false, fmt.Errorf("replay check %s: %w", k, err)
		}
		if v != nil {
			return false, nil
		}
		time.Sleep(g.Gap)
		if _, err := g.pool.Do(ctx, client.NewCmd("SET", []string{k}, "1", "PX", px)); err != nil {
			return false, fmt.Errorf("replay record %s: %w", k, err)
		}
		return true, nil
	}
	v, err := g.pool.Do(ctx, client.NewCmd("SET", []string{k}, "1", "NX", "PX", px))
	if err != nil {
		return false, fmt.Errorf("replay guard %s: %w", k, err)
	}
	return v != nil, nil
}

// limitSource is the rate limiter: one declared key, INCR then PEXPIRE on
// the first hit of a window, atomic on the key's primary (Axiom A2).
const limitSource = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

// RateKey is the limiter key of subject in community.
func RateKey(community, subject string) string { return "buzz:" + community + ":rate:" + subject }

// Limiter is the fixed-window rate limiter.
type Limiter struct {
	pool   client.Pool
	limit  int64
	window time.Duration
	script *client.Script
	mutant Mutant
	// Gap widens MutantReadThenWrite's race window.
	Gap time.Duration
}

// NewLimiter allows limit hits per window per key.
func NewLimiter(pool client.Pool, limit int64, window time.Duration, m Mutant) *Limiter {
	return &Limiter{pool: pool, limit: limit, window: window, script: client.NewScript("rate/limit", limitSource), mutant: m, Gap: time.Millisecond}
}

// Allow counts one hit on subject and reports whether it is within the
// limit.
func (l *Limiter) Allow(ctx context.Context, community, subject string) (bool, error) {
	k := RateKey(community, subject)
	px := strconv.FormatInt(l.window.Milliseconds(), 10)
	if l.mutant == MutantReadThenWrite {
		v, err := l.pool.Do(ctx, client.NewCmd("GET", []string{k}))
		if err != nil {
			return false, fmt.Errorf("rate read %s: %w", k, err)
		}
		var n int64
		if v != nil {
			if n, err = client.AsInt64(v); err != nil {
				return false, fmt.Errorf("rate read %s: %w", k, err)
			}
		}
		time.Sleep(l.Gap)
		if _, err := l.pool.Do(ctx, client.NewCmd("SET", []string{k}, strconv.FormatInt(n+1, 10), "PX", px)); err != nil {
			return false, fmt.Errorf("rate write %s: %w", k, err)
		}
		return n+1 <= l.limit, nil
	}
	reply, _, err := client.RunScript(ctx, l.pool, l.script, []string{k}, px)
	if err != nil {
		return false, fmt.Errorf("rate limit %s: %w", k, err)
	}
	n, err := client.AsInt64(reply)
	if err != nil {
		return false, fmt.Errorf("rate limit %s: %w", k, err)
	}
	return n <= l.limit, nil
}
