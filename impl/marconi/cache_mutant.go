package marconi

import (
	"context"
	"fmt"
)

// MutantMasterUncached is a routing cache that never caches the master
// alias: every send to MasterIdentity resolves it through the SessionStore
// (GET the master flag, MGET its record — the Stage 1 read path) instead of
// the routing table, and counts a cache miss. Every delivery is still the
// right one — the store holds the same master the table would — so only
// the hit rate drops, by the share of sends addressed to the alias, and
// the SessionStore is read on the hot path (spec 002 §8 Stage 2 exit
// criteria: "cache hit-rate ≥ 99%; SessionStore reads converge to
// startup-rehydrate + write-through misses only").
const MutantMasterUncached Mutant = "cache/master-uncached"

// masterUncached is MutantMasterUncached's resolution of a master-alias
// send: the routing-table-reads-off fallback, whatever the flags say.
func (m *Mesh) masterUncached(ctx context.Context, f *Flags, key RouteKey) (*fallback, error) {
	off := *f
	off.RoutingTableReads = false
	fb, err := m.resolveFallback(ctx, &off, key)
	if err != nil {
		return nil, fmt.Errorf("master uncached: %w", err)
	}
	m.m.misses.WithLabelValues(key.Tenant).Inc()
	return fb, nil
}
