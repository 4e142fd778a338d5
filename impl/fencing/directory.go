package fencing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// DefaultLeaseTTL is the production lease TTL (spec 000 §Implementation
// Correspondence: DEFAULT_LEASE_TTL = 30s); renewers tick every TTL/3.
const DefaultLeaseTTL = 30 * time.Second

// Options configures a Directory.
type Options struct {
	// Scripts is the script version; zero means PhaseC().
	Scripts Scripts
	// Keys is the version-local key rule; nil means NewKeys, or OldKeys for
	// phase O. A and B scripts address Legacy(s) then Keys(s).
	Keys KeyRule
	// Legacy is the old keyspace's rule for the A/B scripts; nil means OldKeys.
	Legacy KeyRule
	// LeaseTTL is the lease TTL; zero means DefaultLeaseTTL. Time-scaled
	// runs shrink it and keep renew = TTL/3.
	LeaseTTL time.Duration
	// EvalSHAOnly models a naive client that sends EVALSHA and never falls
	// back to EVAL on NOSCRIPT (a negative control for the per-node script
	// cache, spec 000 §Conformance, Fencing scripts).
	EvalSHAOnly bool
	// Durability, when Replicas > 0, follows every script with a barrier
	// write and WAIT on the same connection (client.RunScriptWait): a call
	// whose effects (or what it read) fewer replicas acknowledged within
	// Timeout returns an error wrapping client.ErrNotReplicated, an unknown
	// outcome to the caller, never "held". The spec's scripts as written run
	// with it off: replication is asynchronous, and a failover loses what
	// the replica had not received (T1/T2 assume a linearizable store, spec
	// 000 §Safety theorems).
	Durability Durability
}

// Durability asks for a write to reach Replicas replicas within Timeout
// before the directory reports it.
type Durability struct {
	Replicas int
	Timeout  time.Duration
}

// On reports whether the durability mode is on.
func (d Durability) On() bool { return d.Replicas > 0 }

func (d Durability) timeout() time.Duration {
	if d.Timeout == 0 {
		return DefaultDurabilityTimeout
	}
	return d.Timeout
}

// DefaultDurabilityTimeout bounds a WAIT when Durability.Timeout is zero.
const DefaultDurabilityTimeout = time.Second

// Directory is one pod's view of the fenced session directory.
type Directory struct {
	pool  client.Pool
	opts  Options
	stats Stats
}

// Stats counts script executions, so a report can show that the NOSCRIPT
// path was really taken.
type Stats struct {
	Calls             atomic.Int64
	NoScriptFallbacks atomic.Int64
	// Migrations counts B renews that moved the caller's lease from the old
	// key to the new one (§The protocol, B's renewer migrates).
	Migrations atomic.Int64
	// NotReplicated counts durability-mode calls whose WAIT came back short
	// (client.ErrNotReplicated): outcomes reported unknown.
	NotReplicated atomic.Int64
}

// BarrierKey is the durability barrier written after a script whose first
// key is key: the same key with a suffix, so a tagged key keeps its hash tag
// and slot (phases A-C); an un-tagged key (phase O) runs on a disabled-mode
// node, where slots do not matter.
func BarrierKey(key string) string { return key + ":durability-barrier" }

// New returns a Directory over pool.
func New(pool client.Pool, opts Options) *Directory {
	if opts.Scripts.Acquire == nil {
		opts.Scripts = PhaseC()
	}
	if opts.Scripts.Phase == "" {
		opts.Scripts.Phase = C
	}
	if opts.Keys == nil {
		opts.Keys = NewKeys
		if opts.Scripts.Phase == O {
			opts.Keys = OldKeys
		}
	}
	if opts.Legacy == nil {
		opts.Legacy = OldKeys
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	return &Directory{pool: pool, opts: opts}
}

// Stats returns the directory's counters.
func (d *Directory) Stats() *Stats { return &d.stats }

// Keys returns the key pair this directory addresses for s (for A and B,
// the new pair; KeyList has all four keys).
func (d *Directory) Keys(s Session) Keys { return d.opts.Keys(s) }

// Phase is the script version this directory runs.
func (d *Directory) Phase() Phase { return d.opts.Scripts.Phase }

// KeyList is the KEYS array every script of this directory declares for s:
// the version-local pair for O and C; old pair then new pair for A and B
// (cross-slot, legal only on a standalone node — spec 000 §The protocol).
func (d *Directory) KeyList(s Session) []string {
	if d.opts.Scripts.Phase.Dual() {
		return append(d.opts.Legacy(s).List(), d.opts.Keys(s).List()...)
	}
	return d.opts.Keys(s).List()
}

// Lease is a live lease as the directory reports it.
type Lease struct {
	Owner      string
	Generation int64
}

// Acquired is the outcome of an acquire.
type Acquired struct {
	// OK is true when the caller now holds the lease at Generation.
	OK         bool
	Generation int64
	// Holder is the current holder when OK is false.
	Holder Lease
}

// ErrBadReply means a script answered in a shape the directory does not
// know: the script and the directory disagree, which is a bug, never data.
var ErrBadReply = errors.New("unexpected script reply")

func (d *Directory) run(ctx context.Context, s *client.Script, session Session, args ...string) (any, error) {
	d.stats.Calls.Add(1)
	keys := d.KeyList(session)
	if d.opts.EvalSHAOnly {
		//slotgate:disabled-mode-only KeyList is one session's lease and generation: every tagged layout (phases A-C) puts them under one hash tag; only OldKeys (phase O, deployed today) spans slots, legal with cluster mode disabled — the runtime twin judges each call
		cmd := client.Cmd{Prefix: []string{"EVALSHA", s.SHA1, strconv.Itoa(len(keys))}, Keys: keys, Args: args}
		return d.pool.Do(ctx, cmd)
	}
	//slotgate:disabled-mode-only KeyList is one session's lease and generation: every tagged layout (phases A-C) puts them under one hash tag; only OldKeys (phase O, deployed today) spans slots, legal with cluster mode disabled — the runtime twin judges each call
	reply, fellBack, err := d.opts.Durability.runScript(ctx, d.pool, s, keys, BarrierKey(keys[0]), args...)
	if fellBack {
		d.stats.NoScriptFallbacks.Add(1)
	}
	if errors.Is(err, client.ErrNotReplicated) {
		d.stats.NotReplicated.Add(1)
	}
	return reply, err
}

// runScript runs s on keys as the durability mode says: plainly
// (client.RunScript), or followed by a barrier write on barrierKey (which
// must share the keys' slot) and WAIT (client.RunScriptWait).
func (d Durability) runScript(ctx context.Context, pool client.Pool, s *client.Script, keys []string, barrierKey string, args ...string) (any, bool, error) {
	if d.On() {
		//slotgate:disabled-mode-only the callers pass one session's keys (Directory.run: one hash tag in phases A-C, spanning slots only in phase O) or both its counters (mergeCounters): cross-slot only with cluster mode disabled
		return client.RunScriptWait(ctx, pool, s, keys, barrierKey, d.Replicas, d.timeout(), args...)
	}
	//slotgate:disabled-mode-only as above: one session's keys, cross-slot only with cluster mode disabled
	return client.RunScript(ctx, pool, s, keys, args...)
}

func ttlMillis(ttl time.Duration) string { return strconv.FormatInt(ttl.Milliseconds(), 10) }

// Acquire tries to take s's lease for owner. Spec 000 §Per-phase operation
// table, acquire.
func (d *Directory) Acquire(ctx context.Context, s Session, owner string) (Acquired, error) {
	reply, err := d.run(ctx, d.opts.Scripts.Acquire, s, owner, ttlMillis(d.opts.LeaseTTL))
	if err != nil {
		return Acquired{}, fmt.Errorf("acquire %s: %w", s, err)
	}
	vals, ok := reply.([]any)
	if !ok || len(vals) < 2 {
		return Acquired{}, fmt.Errorf("acquire %s: %w: %v", s, ErrBadReply, reply)
	}
	won, err1 := client.AsInt64(vals[0])
	gen, err2 := client.AsInt64(vals[1])
	if err := errors.Join(err1, err2); err != nil {
		return Acquired{}, fmt.Errorf("acquire %s: %w: %w", s, ErrBadReply, err)
	}
	if won == 1 {
		return Acquired{OK: true, Generation: gen}, nil
	}
	holder := Lease{Generation: gen}
	if len(vals) > 2 {
		holder.Owner, _ = client.AsString(vals[2])
	}
	return Acquired{Holder: holder}, nil
}

// Renew extends owner's lease at gen; false means the lease is not the
// caller's (lost, expired, or taken over). Spec 000 §Per-phase operation
// table, renew.
func (d *Directory) Renew(ctx context.Context, s Session, owner string, gen int64) (bool, error) {
	reply, err := d.run(ctx, d.opts.Scripts.Renew, s, owner, strconv.FormatInt(gen, 10), ttlMillis(d.opts.LeaseTTL))
	if err != nil {
		return false, fmt.Errorf("renew %s: %w", s, err)
	}
	n, err := client.AsInt64(reply)
	if err != nil {
		return false, fmt.Errorf("renew %s: %w: %w", s, ErrBadReply, err)
	}
	if n == 2 { // phase B moved the lease from the old key to the new one
		d.stats.Migrations.Add(1)
	}
	return n >= 1, nil
}

// Release frees owner's lease at gen; a wrong or stale release is a no-op
// that returns false. Spec 000 §Per-phase operation table, release.
func (d *Directory) Release(ctx context.Context, s Session, owner string, gen int64) (bool, error) {
	reply, err := d.run(ctx, d.opts.Scripts.Release, s, owner, strconv.FormatInt(gen, 10))
	if err != nil {
		return false, fmt.Errorf("release %s: %w", s, err)
	}
	n, err := client.AsInt64(reply)
	if err != nil {
		return false, fmt.Errorf("release %s: %w: %w", s, ErrBadReply, err)
	}
	return n == 1, nil
}

// Snapshot is what lookup and known_generation read, in one atomic step.
type Snapshot struct {
	// Holder is the live lease; Held is false when there is none.
	Holder Lease
	Held   bool
	// TTL is the lease's remaining time to live.
	TTL time.Duration
	// KnownGeneration is the counter: the highest generation ever issued.
	KnownGeneration int64
}

// Lookup reads s's lease and generation counter. Spec 000 §Per-phase
// operation table, lookup and known_generation.
func (d *Directory) Lookup(ctx context.Context, s Session) (Snapshot, error) {
	reply, err := d.run(ctx, d.opts.Scripts.Lookup, s)
	if err != nil {
		return Snapshot{}, fmt.Errorf("lookup %s: %w", s, err)
	}
	vals, ok := reply.([]any)
	if !ok || len(vals) != 4 {
		return Snapshot{}, fmt.Errorf("lookup %s: %w: %v", s, ErrBadReply, reply)
	}
	gen, e1 := client.AsInt64(vals[0])
	owner, e2 := client.AsString(vals[1])
	pttl, e3 := client.AsInt64(vals[2])
	known, e4 := client.AsInt64(vals[3])
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return Snapshot{}, fmt.Errorf("lookup %s: %w: %w", s, ErrBadReply, err)
	}
	snap := Snapshot{KnownGeneration: known}
	if gen > 0 {
		snap.Held = true
		snap.Holder = Lease{Owner: owner, Generation: gen}
		snap.TTL = time.Duration(pttl) * time.Millisecond
	}
	return snap, nil
}

// KnownGeneration is the highest generation ever issued for s.
func (d *Directory) KnownGeneration(ctx context.Context, s Session) (int64, error) {
	snap, err := d.Lookup(ctx, s)
	return snap.KnownGeneration, err
}

// ValidateFencedHeader is the hop-by-hop fence: is a frame stamped
// (owner, gen) from the live authority? Spec 000 §Per-phase operation table.
func (d *Directory) ValidateFencedHeader(ctx context.Context, s Session, owner string, gen int64) (Verdict, error) {
	reply, err := d.run(ctx, d.opts.Scripts.Validate, s, owner, strconv.FormatInt(gen, 10))
	if err != nil {
		return 0, fmt.Errorf("validate %s: %w", s, err)
	}
	vals, ok := reply.([]any)
	if !ok || len(vals) != 2 {
		return 0, fmt.Errorf("validate %s: %w: %v", s, ErrBadReply, reply)
	}
	code, err := client.AsInt64(vals[0])
	if err != nil {
		return 0, fmt.Errorf("validate %s: %w: %w", s, ErrBadReply, err)
	}
	return Verdict(code), nil
}
