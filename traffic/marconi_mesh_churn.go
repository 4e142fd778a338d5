package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/marconi"
)

// MeshChurn is continuous register/deregister churn with senders running
// (spec 002 Stage 2 test gate, stale-route bound): Identities receivers,
// each with a live session and socket; one control loop deregisters a
// session every ChurnEvery and registers a new one for the same identity
// after Dark (every MasterEvery-th event flips the project's master
// instead),
// heartbeats every live session every HeartbeatEvery, and leaves Expire
// sessions to lapse (no more heartbeats, socket closed); Senders senders
// send every SendEvery to a random identity, or to the master alias.
type MeshChurn struct {
	Tenant, Project string
	Identities      int
	ChurnEvery      time.Duration
	// Dark is how long a deregistered identity stays without a session:
	// the window in which a stale route would show.
	Dark           time.Duration
	HeartbeatEvery time.Duration
	MasterEvery    int
	Expire         int
	// TTL is the SessionStore's record TTL (to date a lapse).
	TTL       time.Duration
	Senders   int
	SendEvery time.Duration
	Rand      *rand.Rand
}

// ChurnStats counts what the churn did.
type ChurnStats struct {
	Reregistrations, MasterFlips, Expired, Heartbeats int
}

// Run churns for d and returns when the control loop and every sender
// stopped. Sessions are named <identity>-<n>.
func (c MeshChurn) Run(ctx context.Context, rec *MeshRecorder, recv *MeshReceivers, d time.Duration) (ChurnStats, error) {
	var st ChurnStats
	ids := make([]string, c.Identities)
	live := map[string]marconi.Session{}
	lastBeat := map[string]time.Duration{}
	gen := 0
	session := func(id string) marconi.Session {
		gen++
		return marconi.Session{SessionID: fmt.Sprintf("%s-%d", id, gen), Tenant: c.Tenant, Project: c.Project, Identity: id, Surface: "churn"}
	}
	for i := range ids {
		ids[i] = fmt.Sprintf("rcv%02d", i)
		s, err := rec.Register(ctx, session(ids[i]))
		if err != nil {
			return st, fmt.Errorf("churn: register %s: %w", ids[i], err)
		}
		if err := recv.Connect(ctx, s.SessionID); err != nil {
			return st, fmt.Errorf("churn: attach %s: %w", s.SessionID, err)
		}
		live[ids[i]] = s
		lastBeat[s.SessionID] = rec.Clock().Now()
	}
	master := live[ids[0]].SessionID
	if err := rec.Master(ctx, c.Tenant, c.Project, "", master); err != nil {
		return st, fmt.Errorf("churn: claim master: %w", err)
	}

	senderRNG := make([]*rand.Rand, c.Senders)
	for i := range senderRNG {
		senderRNG[i] = rand.New(rand.NewPCG(c.Rand.Uint64(), c.Rand.Uint64()))
	}
	// The run's deadline stops the loops; calls keep the caller's context,
	// so the deadline never cuts a call short (that would read as a mesh
	// failure).
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i, rng := range senderRNG {
		wg.Go(func() {
			tick := time.NewTicker(c.SendEvery)
			defer tick.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-tick.C:
				}
				to := ids[rng.IntN(len(ids))]
				if rng.IntN(8) == 0 {
					to = marconi.MasterIdentity
				}
				_, _ = rec.Send(ctx, marconi.SendRequest{Tenant: c.Tenant, Project: c.Project, Sender: fmt.Sprintf("churn-sender-%d", i), Recipient: to, Kind: "churn"})
			}
		})
	}

	// The control loop owns every session's life, so a heartbeat never
	// races its own session's deregistration.
	churn := time.NewTicker(c.ChurnEvery)
	beat := time.NewTicker(c.HeartbeatEvery)
	defer churn.Stop()
	defer beat.Stop()
	dark := map[string]time.Time{}
	expireAt := map[int]bool{}
	for i := 1; i <= c.Expire; i++ { // spread the lapses over the run's first half
		expireAt[i*int(d/c.ChurnEvery)/(2*(c.Expire+1))] = true
	}
	events := 0
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case <-beat.C:
			for _, id := range ids {
				s, ok := live[id]
				if !ok {
					continue
				}
				if at, err := rec.Heartbeat(ctx, s); err == nil {
					lastBeat[s.SessionID] = at
					st.Heartbeats++
				}
			}
		case <-churn.C:
			for _, id := range ids { // identities whose dark time is over come back
				until, ok := dark[id]
				if !ok || time.Now().Before(until) {
					continue
				}
				delete(dark, id)
				next, err := rec.Register(ctx, session(id))
				if err != nil {
					continue
				}
				live[id] = next
				lastBeat[next.SessionID] = rec.Clock().Now()
				_ = recv.Connect(ctx, next.SessionID)
				st.Reregistrations++
			}
			events++
			candidates := make([]string, 0, len(live))
			for _, id := range ids {
				if _, ok := live[id]; ok {
					candidates = append(candidates, id)
				}
			}
			if len(candidates) < 2 {
				continue
			}
			id := candidates[c.Rand.IntN(len(candidates))]
			if expireAt[events] && live[id].SessionID == master { // the master is never left to lapse
				for _, other := range candidates {
					if live[other].SessionID != master {
						id = other
						break
					}
				}
			}
			s := live[id]
			switch {
			case expireAt[events] && s.SessionID != master:
				delete(live, id)
				recv.Disconnect(s.SessionID)
				rec.Expired(s.SessionID, rec.Clock().Now(), lastBeat[s.SessionID]+c.TTL)
				st.Expired++
			case c.MasterEvery > 0 && events%c.MasterEvery == 0:
				if s.SessionID == master {
					continue
				}
				if rec.Master(ctx, c.Tenant, c.Project, master, s.SessionID) == nil {
					master = s.SessionID
					st.MasterFlips++
				}
			default:
				if rec.Deregister(ctx, s) != nil {
					continue
				}
				recv.Disconnect(s.SessionID)
				delete(live, id)
				dark[id] = time.Now().Add(c.Dark)
			}
		}
	}
	wg.Wait()
	return st, nil
}

// MeshLiveReads counts, over sends to a plain identity, those whose
// recipient had a session live for the whole send (registered before the
// send started, not ending before it finished): hits resolved a session,
// misses did not. Sends around a session change are not counted.
func MeshLiveReads(h history.MeshHistory) (hits, misses int) {
	byRecipient := map[string][]history.MeshSession{}
	for _, s := range h.Sessions {
		byRecipient[s.Recipient] = append(byRecipient[s.Recipient], s)
	}
	for _, s := range h.Sends {
		if !s.OK() {
			continue
		}
		live := false
		for _, sess := range byRecipient[s.Recipient] {
			end := sess.Ended
			if sess.DeregisterStart != 0 {
				end = sess.DeregisterStart
			}
			if sess.Registered < s.Start && (sess.Ended == 0 || end > s.Done) {
				live = true
			}
		}
		if !live {
			continue
		}
		if s.SessionID != "" {
			hits++
		} else {
			misses++
		}
	}
	return hits, misses
}

// MeshHookTour drives every Stage 2 hook once through the real API, a
// socket and a key expiry, reading the mesh's tables before and after
// each (spec 002 §8 Stage 2: "Every hook above has a unit test covering
// the cache state transition"). The mesh's SessionStore TTL must be short
// (the expiry step waits for it) and its keyspace listener running.
func MeshHookTour(ctx context.Context, mesh *marconi.Mesh, rec *MeshRecorder, recv *MeshReceivers, tenant, project string, wait time.Duration) ([]history.MeshHookStep, error) {
	var steps []history.MeshHookStep
	key := func(identity string) marconi.RouteKey {
		return marconi.RouteKey{Tenant: tenant, Project: project, Identity: identity}
	}
	state := func(s marconi.Session) history.MeshRouteState {
		v := mesh.Tables()
		reg, ok := v.Registrations[s.SessionID]
		return history.MeshRouteState{Route: v.Routes[key(s.Identity)], Master: v.Routes[key(marconi.MasterIdentity)],
			Registered: ok, Attached: reg.Attached, LastHeartbeat: reg.LastHeartbeat, Pending: mesh.PendingDepth(key(s.Identity))}
	}
	step := func(hook, via string, s marconi.Session, act func() error) error {
		before := state(s)
		if err := act(); err != nil {
			return fmt.Errorf("hook tour: %s: %w", hook, err)
		}
		steps = append(steps, history.MeshHookStep{Hook: hook, SessionID: s.SessionID, Via: via, Before: before, After: state(s)})
		return nil
	}
	until := func(cond func() bool) error {
		deadline := time.Now().Add(wait)
		for !cond() {
			if time.Now().After(deadline) {
				return fmt.Errorf("not within %v", wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
		return nil
	}

	s1 := marconi.Session{SessionID: "tour-1", Tenant: tenant, Project: project, Identity: "tourist"}
	s2 := marconi.Session{SessionID: "tour-2", Tenant: tenant, Project: project, Identity: "lapser"}
	if err := step("on_register", "POST "+marconi.PathSessions, s1, func() error { _, err := rec.Register(ctx, s1); return err }); err != nil {
		return steps, err
	}
	for range 2 { // offline: queued, to be drained by the attach
		if _, err := rec.Send(ctx, marconi.SendRequest{Tenant: tenant, Project: project, Recipient: s1.Identity, Kind: "tour"}); err != nil {
			return steps, err
		}
	}
	if err := step("on_ws_connect", "GET "+marconi.PathWebSocket, s1, func() error { return recv.Connect(ctx, s1.SessionID) }); err != nil {
		return steps, err
	}
	if err := step("on_heartbeat", "POST heartbeat", s1, func() error {
		time.Sleep(2 * time.Millisecond) // a distinguishable freshness stamp
		_, err := rec.Heartbeat(ctx, s1)
		return err
	}); err != nil {
		return steps, err
	}
	if err := step("on_master_change", "POST "+marconi.PathClaim, s1, func() error { return rec.Master(ctx, tenant, project, "", s1.SessionID) }); err != nil {
		return steps, err
	}
	if err := step("on_ws_disconnect", "socket closed by the shim", s1, func() error {
		recv.Disconnect(s1.SessionID)
		return until(func() bool { return !mesh.Tables().Registrations[s1.SessionID].Attached })
	}); err != nil {
		return steps, err
	}
	if _, err := rec.Heartbeat(ctx, s1); err != nil { // keep s1 clear of its TTL
		return steps, err
	}
	if err := step("on_deregister", "DELETE "+marconi.PathSessions, s1, func() error { return rec.Deregister(ctx, s1) }); err != nil {
		return steps, err
	}
	if _, err := rec.Register(ctx, s2); err != nil {
		return steps, err
	}
	err := step("on_session_expired", "keyspace notification (expired)", s2, func() error {
		return until(func() bool { _, ok := mesh.Tables().Registrations[s2.SessionID]; return !ok })
	})
	return steps, err
}
