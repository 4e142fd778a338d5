// Package registry is the mesh ready registry (spec 000 §Mesh Registry
// Discovery): runtimes publish an attested `mesh:ready:<id>` record on a
// heartbeat and discover each other.
//
// Two discoveries live here. ScanReady is the legacy `scan_ready()` — SCAN
// MATCH mesh:ready:* COUNT 100 — kept as the negative control: SCAN carries
// no key, so a cluster client sends it to one node and the cursor reaches 0
// there, returning part of the keyspace with no error. Discover is the fix:
// a scored-expiry index in one slot (ZADD <index> <expiry_ms> <id> next to
// the SET PX record), read with ZRANGEBYSCORE now +inf, the records fetched
// with a per-slot MGET, missing/undecodable/unattested records skipped, dead
// scores pruned opportunistically. The contract is bounded discoverability
// — a live runtime is discoverable within one heartbeat interval and no
// unauthenticated record is ever returned — not set equality.
package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/presence"
)

// DefaultInterval is the production heartbeat interval (spec 000 §Mesh
// Registry Discovery: "one ZADD per runtime per 15s").
const DefaultInterval = 15 * time.Second

// Default key layout. The index is hash-tagged into one slot; the records
// keep the legacy names, so they spread over every slot.
const (
	DefaultPrefix = "mesh:ready:"
	DefaultIndex  = "mesh:{ready-index}"
)

// Mutant names a known-bad registry variant, a negative control.
type Mutant string

const (
	// MutantNone is the correct registry.
	MutantNone Mutant = ""
	// MutantTrustRecords skips attestation: any JSON under the prefix (or
	// named by the index) is believed — forged records are returned.
	MutantTrustRecords Mutant = "trust-records"
	// MutantNoExpiry writes records without a TTL and index scores of +inf:
	// a crashed runtime stays discoverable forever.
	MutantNoExpiry Mutant = "no-expiry"
	// MutantCrossSlotMGet fetches every record with one MGET: CROSSSLOT on
	// any cluster (server) or a refusal (valkey-go) — loud, never silent.
	MutantCrossSlotMGet Mutant = "cross-slot-mget"
)

// Options configures a Registry.
type Options struct {
	// Interval is the heartbeat interval; zero means DefaultInterval.
	// Time-scaled runs shrink it.
	Interval time.Duration
	// TTL is the record and index-score lifetime; zero means 3×Interval.
	TTL time.Duration
	// Key is the shared attestation key (HMAC-SHA256). Required.
	Key []byte
	// Prefix and Index name the keys; zero means DefaultPrefix and
	// DefaultIndex. Scenarios running side by side use their own.
	Prefix, Index string
	// Mutant selects a known-bad variant.
	Mutant Mutant
	// Now is the wall clock scores are computed with; nil means time.Now.
	Now func() time.Time
}

// Registry is one runtime's handle on the mesh registry.
type Registry struct {
	pool client.Pool
	opts Options
}

// ErrNoKey is returned by New without an attestation key.
var ErrNoKey = errors.New("registry needs an attestation key")

// New returns a Registry over pool.
func New(pool client.Pool, opts Options) (*Registry, error) {
	if len(opts.Key) == 0 {
		return nil, ErrNoKey
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.TTL <= 0 {
		opts.TTL = 3 * opts.Interval
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Index == "" {
		opts.Index = DefaultIndex
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Registry{pool: pool, opts: opts}, nil
}

// Options returns the registry's effective options.
func (r *Registry) Options() Options { return r.opts }

// RecordKey is the record key of runtime id.
func (r *Registry) RecordKey(id string) string { return r.opts.Prefix + id }

// IndexKey is the scored-expiry index key (one slot).
func (r *Registry) IndexKey() string { return r.opts.Index }

// Heartbeat publishes rec (publish_ready + the index ZADD): SET the
// attested record with PX ttl, then ZADD its expiry into the index — record
// first, so the index never names a runtime whose first record is not
// written yet.
func (r *Registry) Heartbeat(ctx context.Context, rec Record) error {
	now := r.opts.Now()
	rec.IssuedMs = now.UnixMilli()
	val := Encode(r.opts.Key, rec)
	set := client.NewCmd("SET", []string{r.RecordKey(rec.ID)}, val, "PX", strconv.FormatInt(r.opts.TTL.Milliseconds(), 10))
	score := strconv.FormatInt(now.Add(r.opts.TTL).UnixMilli(), 10)
	if r.opts.Mutant == MutantNoExpiry {
		set = client.NewCmd("SET", []string{r.RecordKey(rec.ID)}, val)
		score = "+inf"
	}
	if _, err := r.pool.Do(ctx, set); err != nil {
		return fmt.Errorf("heartbeat %s: set record: %w", rec.ID, err)
	}
	if _, err := r.pool.Do(ctx, client.NewCmd("ZADD", []string{r.opts.Index}, score, rec.ID)); err != nil {
		return fmt.Errorf("heartbeat %s: zadd index: %w", rec.ID, err)
	}
	return nil
}

// Deregister removes id on a clean shutdown: index entry first, so a
// concurrent discovery never reads a member whose record is already gone
// (it would be skipped as missing anyway).
func (r *Registry) Deregister(ctx context.Context, id string) error {
	if _, err := r.pool.Do(ctx, client.NewCmd("ZREM", []string{r.opts.Index}, id)); err != nil {
		return fmt.Errorf("deregister %s: zrem index: %w", id, err)
	}
	if _, err := r.pool.Do(ctx, client.NewCmd("DEL", []string{r.RecordKey(id)})); err != nil {
		return fmt.Errorf("deregister %s: del record: %w", id, err)
	}
	return nil
}

// Discovery is one discovery's answer and what it skipped.
type Discovery struct {
	// Runtimes are the attested live records, in index (expiry) order.
	Runtimes []Record
	// Candidates is how many ids the index (or SCAN) named.
	Candidates int
	// Missing, Undecodable and Unattested count skipped candidates.
	Missing, Undecodable, Unattested int
	// Pruned is how many dead scores this discovery removed; PruneErr is
	// the prune's error, which does not fail the discovery (pruning is
	// opportunistic) but is reported.
	Pruned   int64
	PruneErr error
	// ScanCalls is how many SCAN round trips ScanReady made.
	ScanCalls int
}

// Discover reads the index's live scores, fetches their records slot by
// slot, keeps the attested ones and prunes dead scores.
func (r *Registry) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	now := r.opts.Now().UnixMilli()
	reply, err := r.pool.Do(ctx, client.NewCmd("ZRANGEBYSCORE", []string{r.opts.Index}, strconv.FormatInt(now, 10), "+inf"))
	if err != nil {
		return d, fmt.Errorf("discover: read index: %w", err)
	}
	ids, _, err := client.AsStrings(reply)
	if err != nil {
		return d, fmt.Errorf("discover: read index: %w", err)
	}
	if err := r.fetch(ctx, ids, &d); err != nil {
		return d, fmt.Errorf("discover: %w", err)
	}
	pruned, err := r.pool.Do(ctx, client.NewCmd("ZREMRANGEBYSCORE", []string{r.opts.Index}, "-inf", "("+strconv.FormatInt(now, 10)))
	if err != nil {
		d.PruneErr = fmt.Errorf("discover: prune index: %w", err)
	} else {
		d.Pruned, _ = client.AsInt64(pruned)
	}
	return d, nil
}

// ScanReady is the legacy scan_ready(): SCAN MATCH <prefix>* COUNT 100 until
// the cursor returns to 0, then the same record fetch and filter as
// Discover. SCAN goes through Pool.Do with no key, so a cluster pool sends
// each call wherever the client sends keyless commands (go-redis: the next
// primary round-robin; valkey-go: an arbitrary node) and the cursor ends on
// whatever node answered last: part of the keyspace, no error.
func (r *Registry) ScanReady(ctx context.Context) (Discovery, error) {
	var d Discovery
	var ids []string
	seen := map[string]bool{}
	cursor := "0"
	for {
		reply, err := r.pool.Do(ctx, client.Cmd{Prefix: []string{"SCAN", cursor, "MATCH", r.opts.Prefix + "*", "COUNT", "100"}})
		d.ScanCalls++
		if err != nil {
			return d, fmt.Errorf("scan ready: %w", err)
		}
		arr, ok := reply.([]any)
		if !ok || len(arr) != 2 {
			return d, fmt.Errorf("scan ready: reply %T: %w", reply, client.ErrUnexpectedReply)
		}
		if cursor, err = client.AsString(arr[0]); err != nil {
			return d, fmt.Errorf("scan ready: cursor: %w", err)
		}
		keys, _, err := client.AsStrings(arr[1])
		if err != nil {
			return d, fmt.Errorf("scan ready: keys: %w", err)
		}
		for _, k := range keys {
			id := k[len(r.opts.Prefix):]
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if cursor == "0" || d.ScanCalls > 10_000 {
			break
		}
	}
	if err := r.fetch(ctx, ids, &d); err != nil {
		return d, fmt.Errorf("scan ready: %w", err)
	}
	return d, nil
}

// fetch reads the records of ids slot-correctly and keeps the attested ones.
func (r *Registry) fetch(ctx context.Context, ids []string, d *Discovery) error {
	d.Candidates = len(ids)
	if len(ids) == 0 {
		return nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = r.RecordKey(id)
	}
	mode := presence.ReadPerSlot
	if r.opts.Mutant == MutantCrossSlotMGet {
		mode = presence.ReadSingleMGet
	}
	vals, err := presence.Read(ctx, r.pool, keys, presence.ReadOptions{Mode: mode})
	if err != nil {
		return fmt.Errorf("read %d records: %w", len(keys), err)
	}
	for i, v := range vals {
		if !v.Present {
			d.Missing++
			continue
		}
		var rec Record
		var err error
		if r.opts.Mutant == MutantTrustRecords {
			rec, err = decodeTrusting(ids[i], v.Val)
		} else {
			rec, err = Decode(r.opts.Key, ids[i], v.Val)
		}
		switch {
		case errors.Is(err, ErrUnattested):
			d.Unattested++
		case err != nil:
			d.Undecodable++
		default:
			d.Runtimes = append(d.Runtimes, rec)
		}
	}
	return nil
}
