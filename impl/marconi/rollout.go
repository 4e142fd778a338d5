package marconi

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// fallback is a send's recipient as the Stage 1 SessionStore-read fallback
// resolved it (spec 002 §8 fine-grain flags: the table-read flags OFF read
// the SessionStore): the session id, "" for none.
type fallback struct {
	sessionID string
}

// resolveFallback resolves key with at least one table-read flag off:
// routing from Store.Route (MARCONI_ROUTING_TABLE_READS off) or the
// routing table, then the session confirmed by Store.Live
// (MARCONI_REGISTRATION_TABLE_READS off) or the registration table. Every
// store read is Redis I/O before the 200 — exactly what Stage 1 had and
// what the flags exist to remove. MutantStaleFallback reads the tables
// whatever the flags say.
func (m *Mesh) resolveFallback(ctx context.Context, f *Flags, key RouteKey) (*fallback, error) {
	stale := m.opts.Mutant == MutantStaleFallback
	fb := &fallback{}
	if !f.RoutingTableReads && !stale {
		sid, err := m.store.Route(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("fallback: %w", err)
		}
		fb.sessionID = sid
	} else {
		now := m.opts.Now()
		m.t.mu.RLock()
		if reg := m.t.route(key); reg != nil && now.Sub(reg.s.LastHeartbeat) <= m.store.TTL() {
			fb.sessionID = reg.s.SessionID
		}
		m.t.mu.RUnlock()
	}
	if fb.sessionID == "" {
		return fb, nil
	}
	if !f.RegistrationTableReads && !stale {
		live, err := m.store.Live(ctx, key.Tenant, fb.sessionID)
		if err != nil {
			return nil, fmt.Errorf("fallback: %w", err)
		}
		if !live {
			fb.sessionID = ""
		}
		return fb, nil
	}
	m.t.mu.RLock()
	reg := m.t.regs[fb.sessionID]
	m.t.mu.RUnlock()
	if reg == nil || reg.s.Tenant != key.Tenant || reg.s.Project != key.Project {
		fb.sessionID = "" // the registration table does not hold it: no entry
	}
	return fb, nil
}

// SetFlags changes the MARCONI_* flags of a running mesh (spec 002 §8:
// "flags flip traffic. Rollback per flag"). The new combination is
// validated against FlagRules and refused, unchanged, if it breaks one;
// each send reads the flags once, so a flip lands between sends, never
// inside one. Nothing in flight is dropped: the pending index, the WS
// queues and the open obligations are the same before and after (turning
// MARCONI_OBLIGATIONS_MEMORY_PRIMARY off opens no new obligations; the
// open ones stay ackable). The tables are kept by the Stage 2 hooks from
// Start whatever the read flags say, so flipping reads ON finds them warm.
// The expiry source is fixed at New (it owns a listener or a sweeper).
func (m *Mesh) SetFlags(next Flags) error {
	m.flagMu.Lock()
	defer m.flagMu.Unlock()
	if m.opts.Mutant != MutantAcceptForbidden {
		if err := next.Validate(); err != nil {
			return fmt.Errorf("set flags: %w", err)
		}
	}
	if next.Expiry != "" && next.Expiry != m.expiry {
		return fmt.Errorf("set flags: %w: session expiry is %s; changing it needs a restart", ErrBadOptions, m.expiry)
	}
	prev := m.Flags()
	if m.opts.Mutant == MutantRollbackDrops && turnedOff(prev, next) {
		m.pending.reset()
	}
	m.flags.Store(&next)
	return nil
}

// turnedOff reports whether any flag is on in prev and off in next.
func turnedOff(prev, next Flags) bool {
	off := func(a, b bool) bool { return a && !b }
	if off(prev.RoutingTableReads, next.RoutingTableReads) || off(prev.RegistrationTableReads, next.RegistrationTableReads) ||
		off(prev.AuditQueueWrite, next.AuditQueueWrite) || off(prev.RedisStreamWriter, next.RedisStreamWriter) ||
		off(prev.PGArchiverShadow, next.PGArchiverShadow) || off(prev.PGArchiverPrimary, next.PGArchiverPrimary) ||
		off(prev.HotPathSend, next.HotPathSend) || off(prev.ObligationsMemoryPrimary, next.ObligationsMemoryPrimary) {
		return true
	}
	for v, on := range prev.Verbs {
		if on && !next.Verbs[v] {
			return true
		}
	}
	return false
}

// sweepExpired is the default on_session_expired source (ExpirySweeper):
// registrations past their TTL in the table — the instant the board stops
// routing to them — are confirmed against the SessionStore: a record that
// is gone expired (on_session_expired, and its identity index entry is
// dropped); one that still lives was heartbeated through another path, and
// its freshness is refreshed from the index score. No subscriber, no
// CONFIG SET (spec 002 Stage 2: "No pubsub subscriber anywhere"); no I/O
// while no session is past its TTL.
func (m *Mesh) sweepExpired(now time.Time) {
	ttl := m.store.TTL()
	m.t.mu.RLock()
	var due []Session
	for _, reg := range m.t.regs {
		if now.Sub(reg.s.LastHeartbeat) > ttl {
			due = append(due, reg.s)
		}
	}
	m.t.mu.RUnlock()
	if m.opts.Mutant == MutantSweeperIndexRefires {
		defer m.refireFromIndex(now)
	}
	if m.opts.Mutant == MutantSweeperOffByOne && len(due) > 0 {
		due = due[:len(due)-1]
	}
	if len(due) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(m.opts.SweepEvery, time.Second))
	defer cancel()
	for _, s := range due {
		expiry, live, err := m.store.expiryOf(ctx, s.Tenant, s.SessionID)
		if err != nil {
			m.expiryFailed("expiry of "+s.SessionID, err)
			continue
		}
		if live {
			m.t.mu.Lock()
			if reg := m.t.regs[s.SessionID]; reg != nil {
				if hb := expiry.Add(-ttl); hb.After(reg.s.LastHeartbeat) {
					reg.s.LastHeartbeat = hb
				}
			}
			m.t.mu.Unlock()
			continue
		}
		_ = m.inv.OnSessionExpired(s.Tenant, s.Project, s.SessionID)
		if err := m.store.Unroute(ctx, s.Tenant, s.Project, s.Identity, s.SessionID); err != nil {
			m.expiryFailed("unroute "+s.SessionID, err)
		}
	}
}

// expiryOf reads sid's record existence and its index score (its expiry):
// live is false when the record is gone.
func (s *SessionStore) expiryOf(ctx context.Context, tenant, sid string) (expiry time.Time, live bool, err error) {
	live, err = s.Live(ctx, tenant, sid)
	if err != nil || !live {
		return time.Time{}, false, err
	}
	reply, err := s.pool.Do(ctx, client.NewCmd("ZSCORE", []string{s.IndexKey(tenant)}, sid))
	if err != nil {
		return time.Time{}, true, fmt.Errorf("expiry of %s: %w", sid, err)
	}
	if client.IsNil(reply) {
		return time.Time{}, true, nil
	}
	v, err := client.AsString(reply)
	if err != nil {
		if f, ok := reply.(float64); ok {
			return time.UnixMilli(int64(f)), true, nil
		}
		return time.Time{}, true, fmt.Errorf("expiry of %s: %w", sid, err)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("expiry of %s: %w", sid, err)
	}
	return time.UnixMilli(int64(f)), true, nil
}
