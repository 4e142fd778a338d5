package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/registry"
	"github.com/slotgate/slotgate/rows/registry/judge"
	"github.com/slotgate/slotgate/traffic"
)

// Discoverer is a discovery strategy: registry.Registry's Discover (the
// scored index) or ScanReady (the legacy SCAN).
type Discoverer func(ctx context.Context) (registry.Discovery, error)

// Mesh is the registry workload (spec 000 §Mesh Registry Discovery): a
// known population of runtimes, each a goroutine heartbeating on its own
// ticker, with churn — joins, clean leaves (deregister) and crashes (stop
// without deregistering) — while observers discover on their own cadence.
// Everything is recorded as a judge.RegistryHistory; Mesh asserts nothing.
type Mesh struct {
	Registry *registry.Registry
	Discover Discoverer
	// Min and Max bound the population under churn; Initial joins at Start.
	Min, Max, Initial int
	// ChurnEvery paces churn events; zero disables churn.
	ChurnEvery time.Duration
	// Observers discover every DiscoverEvery each.
	Observers     int
	DiscoverEvery time.Duration
	Rand          *rand.Rand
	// Name prefixes runtime ids, so several meshes never share one.
	Name string
	// Skipped totals what successful discoveries skipped.
	Skipped struct{ Missing, Undecodable, Unattested atomic.Int64 }

	clock  *traffic.Clock
	mu     sync.Mutex
	ops    []judge.RegistryOp
	pop    map[string]string
	live   map[string]*runtime
	order  []string
	churn  int
	seq    int
	wg     sync.WaitGroup
	cancel context.CancelFunc
	stopCh chan struct{}
}

type runtime struct {
	id, addr string
	stop     chan bool // true: deregister (leave); false: crash
	done     chan struct{}
}

// Start joins the initial population and starts churn and observers. It
// returns once every initial runtime has sent its first heartbeat.
func (m *Mesh) Start(ctx context.Context, clock *traffic.Clock) {
	m.clock, m.pop, m.live = clock, map[string]string{}, map[string]*runtime{}
	ctx, m.cancel = context.WithCancel(ctx)
	m.stopCh = make(chan struct{})
	var first sync.WaitGroup
	for range m.Initial {
		first.Add(1)
		m.join(ctx, &first)
	}
	first.Wait()
	for i := range m.Observers {
		m.wg.Add(1)
		go m.observe(ctx, i)
	}
	if m.ChurnEvery > 0 {
		m.wg.Add(1)
		go m.churnLoop(ctx)
	}
}

// Stop ends churn and observers, then stops every runtime: cleanly when
// deregister is true, as a crash otherwise.
func (m *Mesh) Stop(deregister bool) {
	close(m.stopCh)
	m.wg.Wait()
	m.mu.Lock()
	var rts []*runtime
	for _, id := range m.order {
		if rt, ok := m.live[id]; ok {
			rts = append(rts, rt)
		}
	}
	m.mu.Unlock()
	for _, rt := range rts {
		m.end(rt, deregister)
	}
	m.cancel()
}

// Crash stops n random live runtimes without deregistering (counted as churn).
func (m *Mesh) Crash(n int) {
	for range n {
		if rt := m.pick(); rt != nil {
			m.end(rt, false)
			m.mu.Lock()
			m.churn++
			m.mu.Unlock()
		}
	}
}

// History returns the population and every recorded operation.
func (m *Mesh) History() judge.RegistryHistory {
	m.mu.Lock()
	defer m.mu.Unlock()
	pop := make(map[string]string, len(m.pop))
	for k, v := range m.pop {
		pop[k] = v
	}
	return judge.RegistryHistory{Population: pop, Ops: append([]judge.RegistryOp(nil), m.ops...)}
}

// ChurnEvents counts joins (after the initial population), leaves and crashes.
func (m *Mesh) ChurnEvents() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.churn
}

// Live is the current population size.
func (m *Mesh) Live() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

func (m *Mesh) record(ctx context.Context, op judge.RegistryOp, err error) {
	traffic.RecordOp(ctx, op.Runtime, string(op.Kind), -1, op.Call, op.Return, err)
	op.ErrKind = traffic.ErrKind(err)
	if err != nil {
		op.Err = err.Error()
		if client.IsRefused(err) {
			op.Err = "refused by the client library before sending: " + op.Err
		}
	}
	m.mu.Lock()
	m.ops = append(m.ops, op)
	m.mu.Unlock()
}

// join starts one runtime; first (if not nil) is released after its first
// heartbeat.
func (m *Mesh) join(ctx context.Context, first *sync.WaitGroup) {
	m.mu.Lock()
	m.seq++
	id := fmt.Sprintf("%s-rt%d-%x", m.Name, m.seq, m.Rand.Uint32())
	addr := fmt.Sprintf("10.%d.%d.%d:%d", m.Rand.IntN(256), m.Rand.IntN(256), m.Rand.IntN(256), 7000+m.Rand.IntN(1000))
	rt := &runtime{id: id, addr: addr, stop: make(chan bool, 1), done: make(chan struct{})}
	m.pop[id], m.live[id] = addr, rt
	m.order = append(m.order, id)
	jitter := time.Duration(m.Rand.Int64N(int64(m.Registry.Options().Interval)))
	m.mu.Unlock()
	go m.runtimeLoop(ctx, rt, first, jitter)
}

// runtimeLoop is spawn_registry_heartbeat: heartbeat now, then every
// interval, until told to leave (deregister) or crash (just stop). An
// in-flight heartbeat always completes first, so a crash's time is after
// the last heartbeat's return.
func (m *Mesh) runtimeLoop(ctx context.Context, rt *runtime, first *sync.WaitGroup, jitter time.Duration) {
	defer close(rt.done)
	interval := m.Registry.Options().Interval
	var seq int64
	beat := func() {
		seq++
		op := judge.RegistryOp{Kind: judge.RegHeartbeat, Runtime: rt.id, Call: m.clock.Now()}
		err := m.Registry.Heartbeat(ctx, registry.Record{ID: rt.id, Addr: rt.addr, Seq: seq})
		op.Return = m.clock.Now()
		m.record(ctx, op, err)
	}
	beat()
	if first != nil {
		first.Done()
	}
	timer := time.NewTimer(interval - jitter/2)
	defer timer.Stop()
	for {
		select {
		case leave := <-rt.stop:
			if leave {
				op := judge.RegistryOp{Kind: judge.RegDeregister, Runtime: rt.id, Call: m.clock.Now()}
				err := m.Registry.Deregister(ctx, rt.id)
				op.Return = m.clock.Now()
				m.record(ctx, op, err)
			} else {
				now := m.clock.Now()
				m.record(ctx, judge.RegistryOp{Kind: judge.RegCrash, Runtime: rt.id, Call: now, Return: now}, nil)
			}
			return
		case <-ctx.Done():
			return
		case <-timer.C:
			beat()
			timer.Reset(interval)
		}
	}
}

// pick removes and returns a random live runtime, or nil.
func (m *Mesh) pick() *runtime {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, id := range m.order {
		if _, ok := m.live[id]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	id := ids[m.Rand.IntN(len(ids))]
	rt := m.live[id]
	delete(m.live, id)
	return rt
}

// end stops rt and waits for it.
func (m *Mesh) end(rt *runtime, deregister bool) {
	rt.stop <- deregister
	<-rt.done
	m.mu.Lock()
	delete(m.live, rt.id)
	m.mu.Unlock()
}

func (m *Mesh) churnLoop(ctx context.Context) {
	defer m.wg.Done()
	t := time.NewTicker(m.ChurnEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stopCh:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := m.Live()
		m.mu.Lock()
		action := m.Rand.IntN(3)
		m.mu.Unlock()
		if n < m.Min || (n < m.Max && action == 0) {
			m.join(ctx, nil)
		} else {
			rt := m.pick()
			if rt == nil {
				continue // a tick with no one to stop is no churn
			}
			leave := action == 1 || n >= m.Max // a clean leave (deregister); a crash otherwise
			m.wg.Add(1)
			go func() { defer m.wg.Done(); m.end(rt, leave) }()
		}
		m.mu.Lock()
		m.churn++
		m.mu.Unlock()
	}
}

func (m *Mesh) observe(ctx context.Context, i int) {
	defer m.wg.Done()
	m.mu.Lock()
	offset := time.Duration(m.Rand.Int64N(int64(m.DiscoverEvery)))
	m.mu.Unlock()
	t := time.NewTimer(offset)
	defer t.Stop()
	for {
		select {
		case <-m.stopCh:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		op := judge.RegistryOp{Kind: judge.RegDiscover, Runtime: "observer-" + strconv.Itoa(i), Call: m.clock.Now()}
		d, err := m.Discover(ctx)
		op.Return = m.clock.Now()
		for _, r := range d.Runtimes {
			op.Found = append(op.Found, judge.RegistryEntry{ID: r.ID, Addr: r.Addr})
		}
		m.record(ctx, op, err)
		m.Skipped.Missing.Add(int64(d.Missing))
		m.Skipped.Undecodable.Add(int64(d.Undecodable))
		m.Skipped.Unattested.Add(int64(d.Unattested))
		if err == nil && d.PruneErr != nil {
			m.record(ctx, judge.RegistryOp{Kind: judge.RegPrune, Runtime: op.Runtime, Call: op.Call, Return: op.Return}, d.PruneErr)
		}
		t.Reset(m.DiscoverEvery)
	}
}

// ForgeKind is one way an attacker or a broken writer puts a record in the
// registry that must never be returned.
type ForgeKind string

const (
	ForgeWrongKey ForgeKind = "wrong-key" // attested with another key
	ForgeUnsigned ForgeKind = "unsigned"  // plain JSON, no attestation
	ForgeGarbage  ForgeKind = "garbage"   // not a record at all
	ForgeReplayed ForgeKind = "replayed"  // a valid record copied under another id
	// ForgeTruncated is a record cut short: the v1 header and attestation
	// intact, the JSON body torn (a writer that died mid-value).
	ForgeTruncated ForgeKind = "truncated"
)

// ForgeKinds lists every forgery.
var ForgeKinds = []ForgeKind{ForgeWrongKey, ForgeUnsigned, ForgeGarbage, ForgeReplayed, ForgeTruncated}

// Unattested says whether Decode classes a forgery of kind k unattested (a
// well-formed record whose attestation does not verify or binds another
// id) rather than undecodable (not a record at all).
func (k ForgeKind) Unattested() bool { return k == ForgeWrongKey || k == ForgeReplayed }

// Forge writes n forged records of each kind straight through pool under
// r's key layout, indexed with a score ttl ahead and the record living ttl,
// and returns their ids (none belongs to the population).
func Forge(ctx context.Context, pool client.Pool, r *registry.Registry, rng *rand.Rand, n int, ttl time.Duration) ([]string, error) {
	var ids []string
	for _, kind := range ForgeKinds {
		for i := range n {
			id := fmt.Sprintf("forged-%s-%d-%x", kind, i, rng.Uint32())
			rec := registry.Record{ID: id, Addr: "6.6.6.6:666", IssuedMs: time.Now().UnixMilli()}
			var val string
			switch kind {
			case ForgeWrongKey:
				val = registry.Encode([]byte("not-the-mesh-key"), rec)
			case ForgeUnsigned:
				b, _ := json.Marshal(rec)
				val = string(b)
			case ForgeGarbage:
				val = "\x00garbage\xff" + strconv.Itoa(i)
			case ForgeTruncated:
				full := registry.Encode(r.Options().Key, rec)
				val = full[:len(full)-2] // the JSON's closing brace and a byte before it
			case ForgeReplayed:
				victim := rec
				victim.ID = "someone-else"
				val = registry.Encode(r.Options().Key, victim) // attested, but for another id
			}
			px := strconv.FormatInt(ttl.Milliseconds(), 10)
			if _, err := pool.Do(ctx, client.NewCmd("SET", []string{r.RecordKey(id)}, val, "PX", px)); err != nil {
				return ids, fmt.Errorf("forge %s: %w", id, err)
			}
			score := strconv.FormatInt(time.Now().Add(ttl).UnixMilli(), 10)
			if _, err := pool.Do(ctx, client.NewCmd("ZADD", []string{r.IndexKey()}, score, id)); err != nil {
				return ids, fmt.Errorf("forge %s: index: %w", id, err)
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}
