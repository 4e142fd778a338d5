package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/rows/marconi/judge"
)

// MeshChurn is continuous register/deregister churn with senders running
// (spec 002 Stage 2 test gate, stale-route bound): Identities receivers,
// each with a live session and socket; one control loop deregisters a
// session every ChurnEvery and registers a new one for the same identity
// after Dark (every MasterEvery-th event flips the project's master
// instead), and leaves Expire sessions to lapse (no more heartbeats,
// socket closed); each identity heartbeats its live session every
// HeartbeatEvery on its own, as a shim does; Senders senders send every
// SendEvery to a random identity, or to the master alias.
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
	// TTL is the SessionStore's record TTL (to date a lapse, and the bound
	// every renewal of a session kept live must come within).
	TTL       time.Duration
	Senders   int
	SendEvery time.Duration
	Rand      *rand.Rand
	// Tail, if set, runs once the churn and the senders stopped, before the
	// heartbeats do: what the caller sends then (the end sweep) finds every
	// session the churn left live still live.
	Tail func(ctx context.Context)
}

// ChurnStats counts what the churn did, and how well it kept its sessions
// alive: a session the churn means live must be renewed (registered or
// heartbeated) within TTL, or its record may lapse in the store though the
// run counts it live — the harness's failure, not the mesh's.
type ChurnStats struct {
	Reregistrations, MasterFlips, Expired, Heartbeats int
	// MaxRenewGap is the longest the runner held a live session's next
	// renewal back: from when it was free to issue it (the previous
	// renewal's acknowledgement, or the attach's after a register) to when
	// it issued it (the next renewal's start, the deregister's start, the
	// lapse's or the run's end). Start to start, less the time the shim
	// waited on the product's answer (a shim's heartbeats go one at a
	// time): a mesh slow to answer a heartbeat (a lock held across a Valkey
	// round trip) must stay the mesh's failure, never the runner's. It is
	// the part of the store's gap between two renewals the runner alone is
	// answerable for.
	MaxRenewGap time.Duration
	// Late names each session the runner renewed late: its MaxRenewGap
	// share reached TTL, so its record may have lapsed through no fault
	// of the mesh (the checks excuse it: judge.MeshExcused).
	Late []LateRenewal
}

// LateRenewal is one session the runner renewed TTL or more after it was
// free to (ChurnStats.Late).
type LateRenewal struct {
	SessionID string
	Gap, TTL  time.Duration
}

func (l LateRenewal) String() string {
	return fmt.Sprintf("%s: renewal issued %v after the runner was free to (TTL %v)", l.SessionID, l.Gap.Round(time.Millisecond), l.TTL)
}

// LateSessions lists the late sessions' ids, each once.
func (s ChurnStats) LateSessions() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range s.Late {
		if !seen[l.SessionID] {
			seen[l.SessionID] = true
			out = append(out, l.SessionID)
		}
	}
	return out
}

// churnLives is the churn's sessions, shared by the control loop and the
// heartbeat loops: live maps an identity to its session, free a session to
// when the runner was last free to renew it (its last renewal's
// acknowledgement; scenario clock). An identity's lock is held
// across every call that renews or ends its session, so a heartbeat never
// races its own session's deregistration or lapse — and a slow call on one
// identity never delays another's heartbeat.
type churnLives struct {
	ttl   time.Duration
	ids   map[string]*sync.Mutex
	mu    sync.Mutex
	live  map[string]marconi.Session
	free  map[string]time.Duration
	acked map[string]time.Duration // last renewal's acknowledgement (dates a lapse)
	// refused are sessions a heartbeat was refused for: from then on the
	// store has no record to keep, whatever the cadence (the refusal is a
	// control error the checks judge).
	refused map[string]bool
	st      *ChurnStats
}

func (l *churnLives) get(id string) (marconi.Session, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.live[id]
	return s, ok
}

// start records s as live, registered by a call acknowledged at ack; the
// runner was free to renew it from free on (the attach's end: the shim
// waited on the product until then).
func (l *churnLives) start(id string, s marconi.Session, ack, free time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live[id], l.free[s.SessionID], l.acked[s.SessionID] = s, free, ack
}

// gap records that the runner issued sid's next renewal (or ended it) at
// issued, having been free to since l.free[sid]; the caller holds l.mu.
// Only the runner's own delay counts: the time the shim waited on the
// product's answer is the product's: a slow heartbeat blamed on the
// runner would void the run.
func (l *churnLives) gap(sid string, issued time.Duration) {
	if l.refused[sid] {
		return
	}
	g := max(issued-l.free[sid], 0)
	l.st.MaxRenewGap = max(l.st.MaxRenewGap, g)
	if g >= l.ttl {
		l.st.Late = append(l.st.Late, LateRenewal{SessionID: sid, Gap: g, TTL: l.ttl})
	}
}

// beat records a heartbeat of s issued at start, acknowledged at ack.
func (l *churnLives) beat(s marconi.Session, start, ack time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gap(s.SessionID, start)
	l.free[s.SessionID], l.acked[s.SessionID] = ack, ack
	l.st.Heartbeats++
}

// refuse records that a heartbeat of s issued at start was refused: late
// if the runner issued it TTL or more after it was free to (the record
// may have lapsed: the harness's doing), else the store lost a session
// renewed in time — the mesh's failure, which no later gap may turn into
// a late renewal.
func (l *churnLives) refuse(s marconi.Session, start time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gap(s.SessionID, start)
	l.refused[s.SessionID] = true
}

// end removes id's session, which the runner ended (issued its
// deregister, or let it go) at at.
func (l *churnLives) end(id string, at time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gap(l.live[id].SessionID, at)
	delete(l.live, id)
}

// Run churns for d and returns when the control loop, every sender and
// every heartbeat loop stopped (after Tail). Sessions are named
// <identity>-<n>.
func (c MeshChurn) Run(ctx context.Context, rec *MeshRecorder, recv *MeshReceivers, d time.Duration) (ChurnStats, error) {
	var st ChurnStats
	clock := rec.Clock()
	ids := make([]string, c.Identities)
	lives := &churnLives{ttl: c.TTL, ids: map[string]*sync.Mutex{}, live: map[string]marconi.Session{},
		free: map[string]time.Duration{}, acked: map[string]time.Duration{}, refused: map[string]bool{}, st: &st}
	gen := 0
	session := func(id string) marconi.Session {
		gen++
		return marconi.Session{SessionID: fmt.Sprintf("%s-%d", id, gen), Tenant: c.Tenant, Project: c.Project, Identity: id, Surface: "churn"}
	}
	// register registers and attaches a new session for id; the caller
	// holds id's lock.
	register := func(id string) error {
		s, err := rec.Register(ctx, session(id))
		if err != nil {
			return fmt.Errorf("register %s: %w", id, err)
		}
		ack := clock.Now()
		if err := recv.Connect(ctx, s.SessionID); err != nil {
			return fmt.Errorf("attach %s: %w", s.SessionID, err)
		}
		lives.start(id, s, ack, clock.Now())
		return nil
	}
	// Each identity heartbeats on its own ticker from its first
	// registration on, as its shim would: in one loop with the churn, a
	// heartbeat round waited for every register, deregister and flip
	// before it, and on a heavily loaded runner the sessions' renew/TTL
	// ratio did not hold — they lapsed while the run counted them live.
	// Calls keep the caller's context (below).
	beatCtx, stopBeats := context.WithCancel(ctx)
	var beats sync.WaitGroup
	defer func() { stopBeats(); beats.Wait() }()
	heartbeat := func(id string) {
		tick := time.NewTicker(c.HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-beatCtx.Done():
				return
			case <-tick.C:
			}
			lives.ids[id].Lock()
			if s, ok := lives.get(id); ok {
				start := clock.Now()
				if at, err := rec.Heartbeat(ctx, s); err == nil {
					lives.beat(s, start, at)
				} else {
					lives.refuse(s, start)
				}
			}
			lives.ids[id].Unlock()
		}
	}
	for i := range ids {
		ids[i] = fmt.Sprintf("rcv%02d", i)
		lives.ids[ids[i]] = &sync.Mutex{}
		if err := register(ids[i]); err != nil {
			return st, fmt.Errorf("churn: %w", err)
		}
		beats.Go(func() { heartbeat(ids[i]) })
	}
	first, _ := lives.get(ids[0])
	master := first.SessionID
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

	// The control loop owns every session's start and end.
	churn := time.NewTicker(c.ChurnEvery)
	defer churn.Stop()
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
		case <-churn.C:
		}
		for _, id := range ids { // identities whose dark time is over come back
			until, ok := dark[id]
			if !ok || time.Now().Before(until) {
				continue
			}
			delete(dark, id)
			lives.ids[id].Lock()
			err := register(id)
			lives.ids[id].Unlock()
			if err == nil {
				st.Reregistrations++
			}
		}
		events++
		candidates := make([]string, 0, len(ids))
		for _, id := range ids {
			if _, ok := lives.get(id); ok {
				candidates = append(candidates, id)
			}
		}
		if len(candidates) < 2 {
			continue
		}
		id := candidates[c.Rand.IntN(len(candidates))]
		if s, _ := lives.get(id); expireAt[events] && s.SessionID == master { // the master is never left to lapse
			for _, other := range candidates {
				if o, _ := lives.get(other); o.SessionID != master {
					id = other
					break
				}
			}
		}
		s, _ := lives.get(id)
		switch {
		case expireAt[events] && s.SessionID != master:
			lives.ids[id].Lock()
			lives.mu.Lock()
			lastBeat := lives.acked[s.SessionID]
			lives.mu.Unlock()
			lives.end(id, clock.Now())
			recv.Disconnect(s.SessionID)
			rec.Expired(s.SessionID, clock.Now(), lastBeat+c.TTL)
			lives.ids[id].Unlock()
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
			lives.ids[id].Lock()
			if issued := clock.Now(); rec.Deregister(ctx, s) == nil {
				lives.end(id, issued)
				recv.Disconnect(s.SessionID)
				dark[id] = time.Now().Add(c.Dark)
			}
			lives.ids[id].Unlock()
		}
	}
	wg.Wait()
	if c.Tail != nil {
		c.Tail(ctx)
	}
	// The sessions left live had to be live until now.
	for _, id := range ids {
		lives.ids[id].Lock()
		if _, ok := lives.get(id); ok {
			lives.end(id, clock.Now())
		}
	}
	stopBeats()
	for _, id := range ids {
		lives.ids[id].Unlock()
	}
	beats.Wait()
	return st, nil
}

// MeshLiveReads counts, over sends to a plain identity, those whose
// recipient had a session live for the whole send (registered before the
// send started, not ending before it finished): hits resolved a session,
// misses did not. Sends around a session change are not counted.
func MeshLiveReads(h judge.MeshHistory) (hits, misses int) {
	byRecipient := map[string][]judge.MeshSession{}
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
func MeshHookTour(ctx context.Context, mesh *marconi.Mesh, rec *MeshRecorder, recv *MeshReceivers, tenant, project string, wait time.Duration) ([]judge.MeshHookStep, error) {
	var steps []judge.MeshHookStep
	key := func(identity string) marconi.RouteKey {
		return marconi.RouteKey{Tenant: tenant, Project: project, Identity: identity}
	}
	state := func(s marconi.Session) judge.MeshRouteState {
		v := mesh.Tables()
		reg, ok := v.Registrations[s.SessionID]
		return judge.MeshRouteState{Route: v.Routes[key(s.Identity)], Master: v.Routes[key(marconi.MasterIdentity)],
			Registered: ok, Attached: reg.Attached, LastHeartbeat: reg.LastHeartbeat, Pending: mesh.PendingDepth(key(s.Identity))}
	}
	step := func(hook, via string, s marconi.Session, act func() error) error {
		before := state(s)
		if err := act(); err != nil {
			return fmt.Errorf("hook tour: %s: %w", hook, err)
		}
		steps = append(steps, judge.MeshHookStep{Hook: hook, SessionID: s.SessionID, Via: via, Before: before, After: state(s)})
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
