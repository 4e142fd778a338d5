package marconi

import (
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// pendingIndex is the per-recipient pending-signal index (spec 002 §3.5):
// signals for a recipient with no route or no attached WebSocket wait here
// with a TTL, and are drained on registration / WS connect and by the
// explicit pending call. In memory only: it is filled on the hot path.
type pendingIndex struct {
	ttl time.Duration
	cap int // per recipient
	// neverExpires and uncounted are MutantPendingNeverExpires and
	// MutantPendingExpiryUncounted.
	neverExpires, uncounted bool

	mu sync.Mutex
	q  map[RouteKey][]pendingItem
}

type pendingItem struct {
	env *audit.Envelope
	at  time.Time
}

func newPendingIndex(ttl time.Duration, perRecipient int) *pendingIndex {
	return &pendingIndex{ttl: ttl, cap: perRecipient, q: map[RouteKey][]pendingItem{}}
}

// enqueue appends env for key; false when the recipient's queue is full.
func (p *pendingIndex) enqueue(key RouteKey, env *audit.Envelope, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q[key]) >= p.cap {
		return false
	}
	p.q[key] = append(p.q[key], pendingItem{env: env, at: now})
	return true
}

// requeue puts envelopes back in front of key's queue: they were accepted
// before anything queued since. Their TTL starts again now; the cap does
// not apply (they were already accepted). Only for envelopes addressed to
// key (a drain that found the socket full); what a closed handle had not
// delivered goes back through putBack.
func (p *pendingIndex) requeue(key RouteKey, envs []*audit.Envelope, now time.Time) {
	if len(envs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prependLocked(key, envs, now)
}

// putBack queues what a closed handle had not delivered, each envelope in
// front of the queue of the recipient it was addressed to (§3.5: the
// pending index is per recipient), in order. That is not always the
// session's own identity: a signal to the master alias was pushed into
// the master's socket, and if that session ends before writing it, it
// waits for the project's next master — never for the next session of the
// old master's identity, which may not be master at all.
func (p *pendingIndex) putBack(envs []*audit.Envelope, now time.Time) []RouteKey {
	if len(envs) == 0 {
		return nil
	}
	var keys []RouteKey
	byKey := map[RouteKey][]*audit.Envelope{}
	for _, e := range envs {
		k := addressedTo(e)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], e)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		p.prependLocked(k, byKey[k], now)
	}
	return keys
}

// putBackAs is the pre-fix put-back, kept as MutantPutBackToIdentity: all
// of envs go in front of owner's queue — the closing session's identity —
// whatever recipient each was addressed to, so a master-alias signal
// waits for the old master's identity instead of the project's master.
func (p *pendingIndex) putBackAs(owner RouteKey, envs []*audit.Envelope, now time.Time) []RouteKey {
	if len(envs) == 0 {
		return nil
	}
	p.requeue(owner, envs, now)
	return []RouteKey{owner}
}

// addressedTo is the routing key a signal was sent to.
func addressedTo(e *audit.Envelope) RouteKey {
	return RouteKey{Tenant: e.TenantID, Project: e.ProjectID, Identity: e.Recipient}
}

func (p *pendingIndex) prependLocked(key RouteKey, envs []*audit.Envelope, now time.Time) {
	items := make([]pendingItem, 0, len(envs)+len(p.q[key]))
	for _, e := range envs {
		items = append(items, pendingItem{env: e, at: now})
	}
	p.q[key] = append(items, p.q[key]...)
}

// take removes and returns key's live signals in order, and how many had
// expired.
func (p *pendingIndex) take(key RouteKey, now time.Time) (live []*audit.Envelope, expired int) {
	p.mu.Lock()
	items := p.q[key]
	delete(p.q, key)
	p.mu.Unlock()
	for _, it := range items {
		if p.expired(it, now) {
			expired++
			continue
		}
		live = append(live, it.env)
	}
	if p.uncounted {
		expired = 0
	}
	return live, expired
}

// sweep drops expired signals everywhere and returns how many per tenant.
func (p *pendingIndex) sweep(now time.Time) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out map[string]int
	for key, items := range p.q {
		kept := items[:0]
		for _, it := range items {
			if p.expired(it, now) {
				if p.uncounted {
					continue
				}
				if out == nil {
					out = map[string]int{}
				}
				out[key.Tenant]++
				continue
			}
			kept = append(kept, it)
		}
		if len(kept) == 0 {
			delete(p.q, key)
		} else {
			p.q[key] = kept
		}
	}
	return out
}

// expired reports whether it is past its TTL at now.
func (p *pendingIndex) expired(it pendingItem, now time.Time) bool {
	return !p.neverExpires && now.Sub(it.at) > p.ttl
}

// depth is the number of pending signals for key.
func (p *pendingIndex) depth(key RouteKey) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q[key])
}

// total is the number of pending signals.
func (p *pendingIndex) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, items := range p.q {
		n += len(items)
	}
	return n
}

// reset empties the index and returns how many signals it held; only
// MutantRollbackDrops calls it (a rollback that starts from clean state).
func (p *pendingIndex) reset() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, items := range p.q {
		n += len(items)
	}
	p.q = map[RouteKey][]pendingItem{}
	return n
}
