package marconi

import (
	"context"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// HookCall is one Stage 2 hook invocation with the arguments the hook list
// gives it (spec 002 §8 Stage 2): tenant_id, project_id and session_id.
// on_master_change carries the flag's new holder as SessionID (the table
// has no SessionStore read-through, see OnMasterChange); on_ws_connect and
// on_ws_disconnect carry the session id alone, as the hook list does.
type HookCall struct {
	Hook      Hook
	Tenant    string
	Project   string
	SessionID string
}

// trace tells Options.OnHook about a hook call. It runs synchronously
// inside the hook, so an observer sees exactly the calls the sites make:
// a skipped hook is never traced, a repeated one is traced twice.
func (v *Invalidator) trace(h Hook, tenant, project, sid string) {
	if v.onHook != nil {
		v.onHook(HookCall{Hook: h, Tenant: tenant, Project: project, SessionID: sid})
	}
}

// Known-bad variants of the Stage 2 expiry sweeper and the master
// takeover (negative controls of the marconi-cache-lifecycle row's
// hook-calls scenario).
const (
	// MutantSweeperOffByOne is an expiry sweeper whose confirm loop stops
	// one short of the due list: the last session past its TTL in each
	// sweep is left for the next one, so when it is the only one due its
	// on_session_expired never comes and its route stays in the table.
	MutantSweeperOffByOne Mutant = "expiry-sweeper-off-by-one"
	// MutantSweeperIndexRefires is an expiry sweeper that also discovers
	// expired sessions from the shared SessionStore index (every member
	// past its expiry whose record is gone) and fires on_session_expired
	// for each, every sweep: nothing removes the member, so each expired
	// session's hook fires again and again on every instance.
	MutantSweeperIndexRefires Mutant = "expiry-sweeper-index-refires"
	// MutantTakeoverSkipsHook is a claim_master that, when the flag's
	// previous holder is no longer registered (its lease expired and the
	// sweeper removed it), flips the flag in the SessionStore as a
	// takeover and skips on_master_change: the master alias keeps naming
	// the expired session.
	MutantTakeoverSkipsHook Mutant = "takeover-skips-master-change"
)

// takeover reports whether a claim of tenant/project's master flag takes
// it over from a holder this instance no longer has registered (the path
// MutantTakeoverSkipsHook gets wrong).
func (m *Mesh) takeover(tenant, project string) bool {
	m.t.mu.RLock()
	defer m.t.mu.RUnlock()
	old, ok := m.t.masters[projectKey{tenant, project}]
	if !ok || old == "" {
		return false
	}
	_, registered := m.t.regs[old]
	return !registered
}

// refireFromIndex is MutantSweeperIndexRefires's second discovery: every
// member of every known tenant's session index whose expiry score is past
// and whose record is gone gets on_session_expired, whether or not an
// earlier sweep fired it already.
func (m *Mesh) refireFromIndex(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), max(m.opts.SweepEvery, time.Second))
	defer cancel()
	m.t.mu.RLock()
	tenants := map[string]bool{}
	for _, reg := range m.t.regs {
		tenants[reg.s.Tenant] = true
	}
	for pk := range m.t.masters {
		tenants[pk.tenant] = true
	}
	m.t.mu.RUnlock()
	for tenant := range tenants {
		reply, err := m.opts.Pool.Do(ctx, client.NewCmd("ZRANGEBYSCORE", []string{m.store.IndexKey(tenant)}, "-inf", strconv.FormatInt(now.UnixMilli(), 10)))
		if err != nil {
			continue
		}
		members, _ := reply.([]any)
		for _, mem := range members {
			sid, err := client.AsString(mem)
			if err != nil {
				continue
			}
			if live, err := m.store.Live(ctx, tenant, sid); err != nil || live {
				continue
			}
			_ = m.inv.OnSessionExpired(tenant, "", sid)
		}
	}
}
