// Package presence is the relay's presence family (spec 000 §System Model:
// `buzz:<community>:presence:<pubkey>`, TTL 90 s, `presence.rs`): ephemeral,
// self-healing, single-key writes, and one bulk read that must stay
// slot-correct on a cluster — positions and nils preserved exactly when the
// read is split per slot (spec 000 §Conformance, Presence MGET).
package presence

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// DefaultTTL is the production presence TTL (spec 000 §System Model).
const DefaultTTL = 90 * time.Second

// Key is the presence key of pubkey in community. It carries no hash tag:
// a community's users spread over every slot, which is what makes the bulk
// read a cross-slot read.
func Key(community, pubkey string) string { return "buzz:" + community + ":presence:" + pubkey }

// Options configures a Store.
type Options struct {
	// TTL is the presence TTL; zero means DefaultTTL. Time-scaled runs
	// shrink it.
	TTL time.Duration
	// Read is how Bulk reads; zero value means the per-slot split.
	Read ReadOptions
}

// Store is one pod's view of presence.
type Store struct {
	pool client.Pool
	opts Options
}

// New returns a Store over pool.
func New(pool client.Pool, opts Options) *Store {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	return &Store{pool: pool, opts: opts}
}

// Set marks pubkey present in community with value (SET PX ttl).
func (s *Store) Set(ctx context.Context, community, pubkey, value string) error {
	return s.SetTTL(ctx, community, pubkey, value, s.opts.TTL)
}

// SetTTL is Set with an explicit TTL, for workloads that want some entries
// to expire while a scenario runs.
func (s *Store) SetTTL(ctx context.Context, community, pubkey, value string, ttl time.Duration) error {
	k := Key(community, pubkey)
	_, err := s.pool.Do(ctx, client.NewCmd("SET", []string{k}, value, "PX", strconv.FormatInt(ttl.Milliseconds(), 10)))
	if err != nil {
		return fmt.Errorf("set presence %s: %w", k, err)
	}
	return nil
}

// Clear removes pubkey's presence in community (a clean leave).
func (s *Store) Clear(ctx context.Context, community, pubkey string) error {
	k := Key(community, pubkey)
	if _, err := s.pool.Do(ctx, client.NewCmd("DEL", []string{k})); err != nil {
		return fmt.Errorf("clear presence %s: %w", k, err)
	}
	return nil
}

// Bulk reads the presence keys (get_presence_bulk): one Value per key, at
// its position, nil where absent.
func (s *Store) Bulk(ctx context.Context, keys []string) ([]Value, error) {
	return Read(ctx, s.pool, keys, s.opts.Read)
}
