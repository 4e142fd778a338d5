package marconi

import (
	"errors"
	"fmt"
	"time"

	"github.com/slotgate/slotgate/impl/marconi/audit"
)

// Invalidator is the Stage 2 cache lifecycle (spec 002 §5, §8 Stage 2
// hook list): direct, synchronous, in-process write-through hooks called
// by every site that mutates session state. No pub/sub anywhere (§5 "zero
// pubsub round-trips"); the only Redis-fed hook, OnSessionExpired, is fed
// off the hot path by the expiry sweeper (default) or the keyspace
// listener (an option; see ExpiryMode).
//
// Every call is counted in marconi_invalidator_calls_total{hook}; a hook
// that cannot apply (an unknown session) is a non-fatal error counted in
// marconi_invalidator_errors_total{hook,reason} and returned.
type Invalidator struct {
	t       *tables
	pending *pendingIndex
	m       *metrics
	now     func() time.Time
	mutant  Mutant
	onHook  func(HookCall)
}

// ErrUnknownSession is a hook's error for a session the registration
// table does not hold.
var ErrUnknownSession = errors.New("unknown session")

// Reasons of marconi_invalidator_errors_total.
const (
	reasonUnknownSession = "unknown_session"
	reasonUnknownMaster  = "unknown_master"
)

func (v *Invalidator) call(h Hook) {
	if h == HookHeartbeat && v.m.mutant == MetricsHookLabelSwapped {
		h = HookRegister
	}
	v.m.hookCalls.WithLabelValues(string(h)).Inc()
}

func (v *Invalidator) fail(h Hook, reason string, err error) error {
	v.m.hookErrors.WithLabelValues(string(h), reason).Inc()
	return fmt.Errorf("%s: %w", h, err)
}

// OnRegister: after SessionStore.register succeeded, routing.put and
// registration.put. The session's route is its identity (the newest
// registration of an identity wins). A re-register of an attached session
// drains its pending signals into its WebSocket (§3.5: drained on
// registration).
func (v *Invalidator) OnRegister(s Session) error {
	v.call(HookRegister)
	v.trace(HookRegister, s.Tenant, s.Project, s.SessionID)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	reg := v.t.put(s)
	v.refreshSize(s.Tenant)
	if reg.handle != nil {
		v.drainLocked(reg)
	}
	return nil
}

// OnDeregister: after SessionStore.release succeeded,
// registration.invalidate_session and routing.invalidate_project. The
// session's WebSocket is detached; what its queue still held is queued
// offline for the recipient each signal was addressed to (its identity,
// or the master alias: pendingIndex.putBack). The
// MutantForgetfulDeregister variant drops the registration but forgets
// routing.invalidate_project.
func (v *Invalidator) OnDeregister(tenant, project, sid string) error {
	v.call(HookDeregister)
	v.trace(HookDeregister, tenant, project, sid)
	return v.invalidateSession(HookDeregister, tenant, project, sid, v.mutant == MutantForgetfulDeregister || v.mutant == MutantStaleRoute5xx)
}

// OnSessionExpired: a session record expired in Redis (the KeyspaceReaper;
// here the expiry sweeper, or the keyspace-notification listener on every
// primary when configured): same as a deregister. A session already gone is not an error (it was deregistered
// before its key expired, or expired twice).
func (v *Invalidator) OnSessionExpired(tenant, project, sid string) error {
	v.call(HookSessionExpired)
	v.trace(HookSessionExpired, tenant, project, sid)
	err := v.invalidateSession(HookSessionExpired, tenant, project, sid, false)
	if errors.Is(err, ErrUnknownSession) {
		return nil
	}
	return err
}

func (v *Invalidator) invalidateSession(h Hook, tenant, project, sid string, forgetRoutes bool) error {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	reg := v.t.regs[sid]
	if reg == nil || reg.s.Tenant != tenant || (project != "" && reg.s.Project != project) {
		if h == HookSessionExpired {
			return ErrUnknownSession
		}
		return v.fail(h, reasonUnknownSession, fmt.Errorf("%s/%s/%s: %w", tenant, project, sid, ErrUnknownSession))
	}
	v.t.remove(sid)
	if forgetRoutes {
		return nil // the mutant: the route still points at the dead session
	}
	v.t.rebuildProject(projectKey{reg.s.Tenant, reg.s.Project})
	if v.m.mutant != MetricsTableSizeStale {
		v.refreshSize(reg.s.Tenant)
	}
	if reg.handle != nil {
		h := reg.handle
		reg.handle = nil
		v.putBack(h, h.close())
	}
	return nil
}

// OnMasterChange: after the master flag flipped (handoff_master /
// claim_master), routing.invalidate_project. The in-memory table has no
// SessionStore read-through (that would put Redis on the send path), so
// the hook carries the flag's new holder, master.
func (v *Invalidator) OnMasterChange(tenant, project, master string) error {
	v.call(HookMasterChange)
	v.trace(HookMasterChange, tenant, project, master)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	pk := projectKey{tenant, project}
	v.t.masters[pk] = master
	v.t.rebuildProject(pk)
	v.refreshSize(tenant)
	reg := v.t.regs[master]
	if reg == nil || reg.s.Tenant != tenant || reg.s.Project != project {
		return v.fail(HookMasterChange, reasonUnknownMaster, fmt.Errorf("%s/%s master %s: %w", tenant, project, master, ErrUnknownSession))
	}
	if reg.handle != nil {
		v.drainLocked(reg)
	}
	return nil
}

// OnHeartbeat: routing.update_freshness — a field write on the shared
// entry, never a full invalidation.
func (v *Invalidator) OnHeartbeat(tenant, project, sid string, at time.Time) error {
	v.call(HookHeartbeat)
	v.trace(HookHeartbeat, tenant, project, sid)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	reg := v.t.regs[sid]
	if reg == nil || reg.s.Tenant != tenant {
		return v.fail(HookHeartbeat, reasonUnknownSession, fmt.Errorf("%s/%s/%s: %w", tenant, project, sid, ErrUnknownSession))
	}
	if at.After(reg.s.LastHeartbeat) {
		reg.s.LastHeartbeat = at
	}
	return nil
}

// onEngagement is stamp_engagement's hook: the same update_freshness as a
// heartbeat (§5 lists them together under on_heartbeat). The
// MutantEngagementInvalidates variant drops the entry's WS handle instead.
func (v *Invalidator) onEngagement(tenant, project, sid string, at time.Time) error {
	if v.mutant != MutantEngagementInvalidates {
		return v.OnHeartbeat(tenant, project, sid, at)
	}
	v.call(HookHeartbeat)
	v.trace(HookHeartbeat, tenant, project, sid)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	reg := v.t.regs[sid]
	if reg == nil || reg.s.Tenant != tenant {
		return v.fail(HookHeartbeat, reasonUnknownSession, fmt.Errorf("%s/%s/%s: %w", tenant, project, sid, ErrUnknownSession))
	}
	reg.s.LastHeartbeat = at
	if reg.handle != nil {
		h := reg.handle
		reg.handle = nil
		v.putBack(h, h.close())
	}
	return nil
}

// OnWSConnect: routing.attach_ws_handle, then drain the session's pending
// signals into it, in order, before any new push can reach it (§3.5:
// drained on WS connect). A previous handle of the session is detached.
func (v *Invalidator) OnWSConnect(sid string, h *wsHandle) error {
	v.call(HookWSConnect)
	v.trace(HookWSConnect, "", "", sid)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	reg := v.t.regs[sid]
	if reg == nil {
		return v.fail(HookWSConnect, reasonUnknownSession, fmt.Errorf("%s: %w", sid, ErrUnknownSession))
	}
	var left []*audit.Envelope
	old := reg.handle
	if old != nil && old != h {
		left = old.close()
	}
	h.owner = reg.s.Route()
	reg.handle = h
	v.putBack(old, left)
	v.drainLocked(reg)
	return nil
}

// OnWSDisconnect: routing.detach_ws_handle. Only the handle that is
// attached is detached (a late disconnect of a replaced socket changes
// nothing); what the handle had not written, plus unwritten (the envelope
// whose write failed), is queued offline for the recipient each was
// addressed to (pendingIndex.putBack). A disconnect
// of a session already gone is not an error.
func (v *Invalidator) OnWSDisconnect(sid string, h *wsHandle, unwritten ...*audit.Envelope) error {
	v.call(HookWSDisconnect)
	v.trace(HookWSDisconnect, "", "", sid)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	if reg := v.t.regs[sid]; reg != nil && reg.handle == h {
		reg.handle = nil
	}
	left := append(unwritten, h.close()...)
	v.putBack(h, left)
	return nil
}

// putBack queues what a closed socket had not written under the recipient
// each signal was addressed to (pendingIndex.putBack) and hands it on at once
// where that recipient is live with a socket — above all the master alias
// whose master is another, attached session: left in the queue, its
// signals would wait for that socket's next connect or the next flip and
// could expire there, while later sends to the alias went straight to it.
// The caller holds t.mu. closed is the handle left came from; only
// MutantPutBackToIdentity reads it.
func (v *Invalidator) putBack(closed *wsHandle, left []*audit.Envelope) {
	keys := v.pending.putBack
	if v.mutant == MutantPutBackToIdentity && closed != nil {
		keys = func(envs []*audit.Envelope, now time.Time) []RouteKey {
			return v.pending.putBackAs(closed.owner, envs, now)
		}
	}
	for _, k := range keys(left, v.now()) {
		if r := v.t.route(k); r != nil && r.handle != nil {
			v.drainLocked(r)
		}
	}
}

// drainLocked moves reg's pending signals (its identity's, and the master
// alias's when it is master) into its handle. The caller holds t.mu for
// writing, so no send can push between the drain and the attach.
func (v *Invalidator) drainLocked(reg *registration) {
	keys := []RouteKey{reg.s.Route()}
	if reg.master {
		keys = append(keys, RouteKey{Tenant: reg.s.Tenant, Project: reg.s.Project, Identity: MasterIdentity})
	}
	now := v.now()
	for _, k := range keys {
		live, expired := v.pending.take(k, now)
		if expired > 0 {
			v.m.pendingExpired.WithLabelValues(k.Tenant).Add(float64(expired))
		}
		for i, e := range live {
			if reg.handle.push(e) != pushed {
				v.pending.requeue(k, live[i:], now) // the queue is full: keep the rest pending
				break
			}
		}
	}
}

// refreshSize updates marconi_routing_table_size{tenant}; the caller holds
// t.mu.
func (v *Invalidator) refreshSize(tenant string) {
	v.m.tableSize.WithLabelValues(tenant).Set(float64(v.t.tenantRoutes(tenant)))
}
