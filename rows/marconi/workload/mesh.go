package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/traffic"
)

// MeshRecorder records a Marconi run through the real HTTP API and the
// receivers' WebSockets: sends with their 200s, deliveries, each session's
// acknowledged life, master flips and failed control calls (spec 002 §2,
// §5, §6). Safe for concurrent use.
type MeshRecorder struct {
	clock *traffic.Clock
	api   *marconi.Client

	mu       sync.Mutex
	h        judge.MeshHistory
	sessions map[string]int // session id → index in h.Sessions
	latency  []time.Duration
}

// NewMeshRecorder records calls made through api on clock.
func NewMeshRecorder(clock *traffic.Clock, api *marconi.Client) *MeshRecorder {
	return &MeshRecorder{clock: clock, api: api, sessions: map[string]int{}}
}

// SetAPI points later calls at another instance (a restart).
func (r *MeshRecorder) SetAPI(api *marconi.Client) {
	r.mu.Lock()
	r.api = api
	r.mu.Unlock()
}

func (r *MeshRecorder) client() *marconi.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.api
}

// Clock is the recorder's clock.
func (r *MeshRecorder) Clock() *traffic.Clock { return r.clock }

// Deliver records one envelope a receiver got; pass it to DialReceiver.
func (r *MeshRecorder) Deliver(d marconi.Delivery) {
	at := r.clock.Now()
	r.mu.Lock()
	r.h.Deliveries = append(r.h.Deliveries, judge.MeshDelivery{SignalID: d.Envelope.SignalID, SessionID: d.SessionID, At: at})
	r.mu.Unlock()
}

// Send calls prism_signal and records the call.
func (r *MeshRecorder) Send(ctx context.Context, req marconi.SendRequest) (marconi.SendResult, error) {
	start := r.clock.Now()
	res, err := r.client().Send(ctx, req)
	done := r.clock.Now()
	s := judge.MeshSend{SignalID: res.SignalID, Recipient: req.Tenant + "/" + req.Project + "/" + req.Recipient, Start: start, Done: done,
		Status: 200, Outcome: string(res.Outcome), SessionID: res.SessionID, AuditKept: res.AuditKept}
	if err != nil {
		s.Status, s.Err = 0, err.Error()
		var api *marconi.APIError
		if errors.As(err, &api) {
			s.Status = api.Status
		}
	}
	r.mu.Lock()
	r.h.Sends = append(r.h.Sends, s)
	r.latency = append(r.latency, done-start)
	r.mu.Unlock()
	return res, err
}

// Register registers s and records its life from the 200.
func (r *MeshRecorder) Register(ctx context.Context, s marconi.Session) (marconi.Session, error) {
	out, err := r.client().Register(ctx, s)
	if err != nil {
		r.ControlError("register "+s.SessionID, err)
		return out, err
	}
	at := r.clock.Now()
	r.mu.Lock()
	if _, ok := r.sessions[s.SessionID]; !ok {
		r.sessions[s.SessionID] = len(r.h.Sessions)
		r.h.Sessions = append(r.h.Sessions, judge.MeshSession{SessionID: s.SessionID, Recipient: s.Route().String(), Registered: at})
	}
	r.mu.Unlock()
	return out, nil
}

// Deregister releases s and records the end of its life at the 200.
func (r *MeshRecorder) Deregister(ctx context.Context, s marconi.Session) error {
	start := r.clock.Now()
	if err := r.client().Deregister(ctx, s.Tenant, s.Project, s.SessionID); err != nil {
		r.ControlError("deregister "+s.SessionID, err)
		return err
	}
	at := r.clock.Now()
	r.mu.Lock()
	if i, ok := r.sessions[s.SessionID]; ok {
		r.h.Sessions[i].DeregisterStart, r.h.Sessions[i].Ended = start, at
	}
	r.mu.Unlock()
	return nil
}

// Expired records that s was left to expire: its shim went away at
// abandoned (no more heartbeats, socket closed) and its record lapses at
// lapse on the scenario clock (its last acknowledged heartbeat plus the
// TTL).
func (r *MeshRecorder) Expired(sid string, abandoned, lapse time.Duration) {
	r.mu.Lock()
	if i, ok := r.sessions[sid]; ok {
		r.h.Sessions[i].DeregisterStart, r.h.Sessions[i].Ended, r.h.Sessions[i].Expired = abandoned, lapse, true
	}
	r.mu.Unlock()
}

// Heartbeat stamps s's heartbeat; a failed call or an unrouted heartbeat
// is recorded as a control error. It returns when it was acknowledged.
func (r *MeshRecorder) Heartbeat(ctx context.Context, s marconi.Session) (time.Duration, error) {
	res, err := r.client().Heartbeat(ctx, s.Tenant, s.Project, s.SessionID)
	if err != nil {
		r.ControlError("heartbeat "+s.SessionID, err)
		return 0, err
	}
	if !res.Routed {
		r.ControlError("heartbeat "+s.SessionID, errors.New("acknowledged by the store but not routed (on_heartbeat found no registration)"))
	}
	return r.clock.Now(), nil
}

// Master flips project's master flag to sid (handoff from `from` when set)
// and records the flip at its 200.
func (r *MeshRecorder) Master(ctx context.Context, tenant, project, from, sid string) error {
	start := r.clock.Now()
	var err error
	if from == "" {
		err = r.client().ClaimMaster(ctx, tenant, project, sid)
	} else {
		err = r.client().HandoffMaster(ctx, tenant, project, from, sid)
	}
	if err != nil {
		r.ControlError("master "+sid, err)
		return err
	}
	at := r.clock.Now()
	r.mu.Lock()
	r.h.MasterChanges = append(r.h.MasterChanges, judge.MeshMasterChange{Project: tenant + "/" + project, SessionID: sid, Start: start, Ack: at})
	r.mu.Unlock()
	return nil
}

// ControlError records a failed control-plane call.
func (r *MeshRecorder) ControlError(op string, err error) {
	r.mu.Lock()
	r.h.ControlErrors = append(r.h.ControlErrors, fmt.Sprintf("%s at %v: %v", op, r.clock.Now().Round(time.Millisecond), err))
	r.mu.Unlock()
}

// History returns a copy of what was recorded.
func (r *MeshRecorder) History() judge.MeshHistory {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.Sends = slices.Clone(h.Sends)
	h.Deliveries = slices.Clone(h.Deliveries)
	h.Sessions = slices.Clone(h.Sessions)
	h.MasterChanges = slices.Clone(h.MasterChanges)
	h.ControlErrors = slices.Clone(h.ControlErrors)
	h.End = r.clock.Now()
	return h
}

// Latencies returns the client-observed send latencies so far, in the
// order the sends were recorded.
func (r *MeshRecorder) Latencies() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.latency)
}

// Quantile reads q of latencies (nearest rank; it sorts a copy).
func Quantile(latencies []time.Duration, q float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(latencies)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// MeshReceivers holds receiver shims' sockets, one per session.
type MeshReceivers struct {
	rec     *MeshRecorder
	baseURL string

	mu  sync.Mutex
	ws  map[string]*marconi.Receiver
	err []string
}

// NewMeshReceivers dials sockets of the mesh at baseURL, recording into rec.
func NewMeshReceivers(rec *MeshRecorder, baseURL string) *MeshReceivers {
	return &MeshReceivers{rec: rec, baseURL: baseURL, ws: map[string]*marconi.Receiver{}}
}

// SetBaseURL points later connects at another instance.
func (m *MeshReceivers) SetBaseURL(u string) {
	m.mu.Lock()
	m.baseURL = u
	m.mu.Unlock()
}

// Connect attaches sid's receiver socket; a refusal is a control error.
func (m *MeshReceivers) Connect(ctx context.Context, sid string) error {
	m.mu.Lock()
	u := m.baseURL
	m.mu.Unlock()
	r, err := marconi.DialReceiver(ctx, u, sid, m.rec.Deliver)
	if err != nil {
		m.rec.ControlError("ws attach "+sid, err)
		return err
	}
	m.mu.Lock()
	old := m.ws[sid]
	m.ws[sid] = r
	m.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return nil
}

// Disconnect closes sid's socket.
func (m *MeshReceivers) Disconnect(sid string) {
	m.mu.Lock()
	r := m.ws[sid]
	delete(m.ws, sid)
	m.mu.Unlock()
	if r != nil {
		_ = r.Close()
	}
}

// ConnectAll attaches every listed session, `parallel` at a time.
func (m *MeshReceivers) ConnectAll(ctx context.Context, sids []string, parallel int) error {
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, sid := range sids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := m.Connect(ctx, sid); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Wait blocks until every listed socket has been ended by the mesh (an
// instance that died) or ctx ends.
func (m *MeshReceivers) Wait(ctx context.Context) {
	m.mu.Lock()
	rs := make([]*marconi.Receiver, 0, len(m.ws))
	for _, r := range m.ws {
		rs = append(rs, r)
	}
	m.mu.Unlock()
	for _, r := range rs {
		select {
		case <-r.Done():
		case <-ctx.Done():
			return
		}
	}
}

// Close closes every socket.
func (m *MeshReceivers) Close() {
	m.mu.Lock()
	rs := m.ws
	m.ws = map[string]*marconi.Receiver{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { _ = r.Close() })
	}
	wg.Wait()
}

// MeshBurst sends Senders×PerSender signals, each to a recipient drawn
// from Recipients with the scenario's RNG, Senders concurrently.
type MeshBurst struct {
	Recipients []marconi.RouteKey
	Senders    int
	PerSender  int
	Kind       string
	Rand       *rand.Rand
}

// Run sends the burst through rec and returns when every send answered.
func (b MeshBurst) Run(ctx context.Context, rec *MeshRecorder) {
	plan := make([][]marconi.RouteKey, b.Senders)
	for i := range plan { // drawn up front: one RNG, no data race
		for range b.PerSender {
			plan[i] = append(plan[i], b.Recipients[b.Rand.IntN(len(b.Recipients))])
		}
	}
	var wg sync.WaitGroup
	for i, keys := range plan {
		wg.Go(func() {
			for n, k := range keys {
				if ctx.Err() != nil {
					return
				}
				_, _ = rec.Send(ctx, marconi.SendRequest{Tenant: k.Tenant, Project: k.Project, Recipient: k.Identity,
					Sender: fmt.Sprintf("sender-%d", i), Kind: b.Kind, Payload: []byte(fmt.Sprintf("%d/%d", i, n))})
			}
		})
	}
	wg.Wait()
}

// AwaitDeliveries waits until every send answered 200 with an outcome in
// outcomes has a delivery, or ctx ends; it returns how many are missing.
func AwaitDeliveries(ctx context.Context, rec *MeshRecorder, outcomes ...string) int {
	for {
		h := rec.History()
		got := map[string]bool{}
		for _, d := range h.Deliveries {
			got[d.SignalID] = true
		}
		missing := 0
		for _, s := range h.Sends {
			if s.OK() && slices.Contains(outcomes, s.Outcome) && s.SessionID != "" && !got[s.SignalID] {
				missing++
			}
		}
		if missing == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return missing
		case <-time.After(10 * time.Millisecond):
		}
	}
}
