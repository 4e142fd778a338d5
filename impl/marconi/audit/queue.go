package audit

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"
)

// backPressureStall is how many back-pressure waits may pass without the
// writer taking anything before the queue stops waiting for it.
const backPressureStall = 4

// DropReason says why the audit queue lost an entry; it is the reason label
// of marconi_audit_queue_overwrite_total.
type DropReason string

const (
	// DropOverwritten: PolicyOldest evicted the entry to make room
	// (max_entries).
	DropOverwritten DropReason = "overwritten"
	// DropMaxBytes: PolicyOldest evicted the entry to stay under max_bytes.
	DropMaxBytes DropReason = "max_bytes"
	// DropMaxAge: the entry outlived max_age_seconds before the writer took
	// it.
	DropMaxAge DropReason = "max_age"
	// DropRejected: PolicyRejectNew refused the new entry.
	DropRejected DropReason = "rejected"
	// DropBackPressure: PolicyBoundedBackPressure refused the new entry
	// after its bounded wait.
	DropBackPressure DropReason = "back_pressure"
	// DropTooLarge: the entry alone is bigger than max_bytes.
	DropTooLarge DropReason = "too_large"
	// DropBadTenant: the entry's tenant cannot be keyed (ValidateTenant).
	DropBadTenant DropReason = "bad_tenant"
	// DropShutdown: the entry was still queued when the process stopped
	// (Queue.Close), or was offered after it (§6: in-flight audit-queue
	// entries die with the instance — counted, not hidden).
	DropShutdown DropReason = "shutdown"
)

// DropReasons lists every reason, in report order.
var DropReasons = []DropReason{DropOverwritten, DropMaxBytes, DropMaxAge, DropRejected, DropBackPressure, DropTooLarge, DropBadTenant, DropShutdown}

// Offset is an entry's position in its tenant's audit queue: the queue's
// generation (fixed-width decimal start time, so a restarted process never
// reuses an offset of its predecessor) and a sequence number from 1.
type Offset struct {
	Gen string
	Seq uint64
}

// String is the stored form, "<gen>:<seq>".
func (o Offset) String() string { return o.Gen + ":" + strconv.FormatUint(o.Seq, 10) }

// ParseOffset parses Offset.String's form.
func ParseOffset(s string) (Offset, error) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			seq, err := strconv.ParseUint(s[i+1:], 10, 64)
			if err != nil || i == 0 {
				break
			}
			return Offset{Gen: s[:i], Seq: seq}, nil
		}
	}
	return Offset{}, fmt.Errorf("parse audit offset %q: want <gen>:<seq>", s)
}

// Item is one queued entry with its offset and estimated size.
type Item struct {
	Offset Offset
	Entry  Entry
	Size   int64
}

// QueueStats is one tenant queue's state and lifetime counts.
type QueueStats struct {
	Depth   int
	Bytes   int64
	Offered int64
	Kept    int64
	// Dropped counts lost entries by reason (what the overwrite counter
	// says, unless the queue is MutantUncountedDrop).
	Dropped map[DropReason]int64
	// Oldest is the arrival time of the oldest queued entry (zero if none).
	Oldest time.Time
}

// QueueOptions configures a Queue.
type QueueOptions struct {
	// Default applies to every tenant not in Tenants; zero means
	// DefaultQueueConfig.
	Default QueueConfig
	// Tenants overrides the configuration per tenant (§3.6: sizing is
	// per-tenant config).
	Tenants map[string]QueueConfig
	// Metrics receives depth, bytes and overwrite counts; nil makes a
	// private registry.
	Metrics *Metrics
	// Mutant selects a known-bad variant (negative controls only).
	Mutant Mutant
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// OnLost, if set, is told about every entry the queue accepted and
	// then lost before the writer took it (overwritten, max_bytes,
	// max_age, shutdown): the obligation index marks its obligation
	// degraded_not_durable (spec 002 §3.4, §9). It runs under the tenant
	// queue's lock and must not call back into the queue.
	OnLost func(e Entry, r DropReason)
}

// Queue is Marconi's per-tenant in-memory audit queue (spec 002 §3.6): it
// holds accepted signal entries between send_signal's 200 and the Redis
// Stream writer's append. Offer is the only call on the hot path; it does no
// I/O, and every entry it loses is counted. Safe for concurrent use.
type Queue struct {
	opts    QueueOptions
	gen     string
	metrics *Metrics

	mu        sync.RWMutex
	tenants   map[string]*tenantQueue
	newTenant chan struct{}
	closed    bool
}

// The queue is what send_signal offers to (envelope.go's Sink).
var _ Sink = (*Queue)(nil)

// NewQueue validates the configuration and makes an empty queue whose
// generation is its start time.
func NewQueue(o QueueOptions) (*Queue, error) {
	if o.Default == (QueueConfig{}) {
		o.Default = DefaultQueueConfig()
	}
	if err := o.Default.validate(); err != nil {
		return nil, fmt.Errorf("default queue config: %w", err)
	}
	for t, c := range o.Tenants {
		if err := ValidateTenant(t); err != nil {
			return nil, fmt.Errorf("queue config: %w", err)
		}
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("queue config of tenant %q: %w", t, err)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	return &Queue{
		opts:      o,
		gen:       fmt.Sprintf("%020d", time.Now().UnixNano()),
		metrics:   o.Metrics,
		tenants:   map[string]*tenantQueue{},
		newTenant: make(chan struct{}, 1),
	}, nil
}

// Close is the queue's part of a process exit (spec 002 §6): every entry
// still queued — accepted, never appended — is lost with the process, and
// Close counts it in marconi_audit_queue_overwrite_total{reason="shutdown"}
// before the registry is scraped for the last time, so the loss is what
// the instance itself reported, not a number an observer inferred. Offers
// after Close are refused and counted the same way. The writer must be
// stopped first (entries it holds are not the queue's). Close returns how
// many entries it dropped; it is idempotent.
func (q *Queue) Close() int {
	q.mu.Lock()
	q.closed = true
	tenants := make([]*tenantQueue, 0, len(q.tenants))
	for _, tq := range q.tenants {
		tenants = append(tenants, tq)
	}
	q.mu.Unlock()
	n := 0
	for _, tq := range tenants {
		tq.mu.Lock()
		tq.closed = true
		lost := tq.items.len()
		for tq.items.len() > 0 {
			tq.lostLocked(tq.items.popFront().Entry, DropShutdown)
		}
		tq.bytes = 0
		if lost > 0 {
			tq.dropLocked(DropShutdown, lost)
		}
		tq.publishLocked()
		tq.freedLocked()
		tq.mu.Unlock()
		n += lost
	}
	return n
}

// Generation is the queue's offset generation.
func (q *Queue) Generation() string { return q.gen }

// Metrics returns the queue's collectors (shared with its writer).
func (q *Queue) Metrics() *Metrics { return q.metrics }

// Offer appends e to its tenant's queue (spec 002 Stage 3: synchronously
// inside send_signal, after the delivery decision) and reports whether the
// queue kept it. It never does I/O; only PolicyBoundedBackPressure waits,
// and at most its bounded wait. A zero ArrivedAt is set to now.
func (q *Queue) Offer(e Entry) bool {
	tq, err := q.tenant(e.Envelope.TenantID)
	if err != nil {
		if q.opts.Mutant != MutantUncountedDrop {
			q.metrics.overwrite.WithLabelValues(e.Envelope.TenantID, string(DropBadTenant)).Inc()
		}
		return false
	}
	if e.ArrivedAt.IsZero() {
		e.ArrivedAt = q.opts.Now()
	}
	return tq.offer(e, EntrySize(e))
}

// Take removes up to max entries from the head of tenant's queue, oldest
// first, for the writer to append; expired entries are ejected (and
// counted) first. The caller owns what it took: it appends it or hands it
// back with Requeue.
func (q *Queue) Take(tenant string, max int) []Item {
	tq := q.lookup(tenant)
	if tq == nil || max <= 0 {
		return nil
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	now := q.opts.Now()
	tq.lastTake = now
	tq.expireLocked(now)
	n := min(max, tq.items.len())
	if n == 0 {
		return nil
	}
	out := make([]Item, n)
	for i := range out {
		out[i] = tq.items.popFront()
		tq.bytes -= out[i].Size
	}
	if q.opts.Mutant != MutantStaleDepth {
		tq.publishLocked()
	}
	tq.freedLocked()
	return out
}

// Requeue puts items a writer took but did not append back at the head of
// the queue, in order (a writer stopping mid-outage). They were accepted
// once and are not re-checked against the caps now; later evictions count
// them as usual.
func (q *Queue) Requeue(tenant string, items []Item) {
	tq := q.lookup(tenant)
	if tq == nil || len(items) == 0 {
		return
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	tq.items.pushFront(items)
	for _, it := range items {
		tq.bytes += it.Size
	}
	tq.publishLocked()
	tq.signalReadyLocked()
}

// DiscardThrough drops queued entries of tenant up to and including off,
// which the stream already holds (the writer's resume, §4.1 Restart). They
// are not losses and are not counted as such. It returns what it
// dropped, for the writer to announce as appended.
func (q *Queue) DiscardThrough(tenant string, off Offset) []Item {
	tq := q.lookup(tenant)
	if tq == nil || off.Gen != q.gen {
		return nil
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	var dropped []Item
	for tq.items.len() > 0 && tq.items.at(0).Offset.Seq <= off.Seq {
		it := tq.items.popFront()
		tq.bytes -= it.Size
		dropped = append(dropped, it)
	}
	tq.publishLocked()
	if len(dropped) > 0 {
		tq.freedLocked()
	}
	return dropped
}

// Ready is signalled when tenant's queue receives entries (buffered, one
// pending signal at most).
func (q *Queue) Ready(tenant string) <-chan struct{} {
	if tq := q.lookup(tenant); tq != nil {
		return tq.ready
	}
	return nil
}

// NewTenants is signalled when a tenant's queue is created.
func (q *Queue) NewTenants() <-chan struct{} { return q.newTenant }

// Tenants lists the tenants that have a queue, sorted.
func (q *Queue) Tenants() []string {
	q.mu.RLock()
	out := make([]string, 0, len(q.tenants))
	for t := range q.tenants {
		out = append(out, t)
	}
	q.mu.RUnlock()
	sort.Strings(out)
	return out
}

// Stats returns tenant's queue state (zero if it has none).
func (q *Queue) Stats(tenant string) QueueStats {
	tq := q.lookup(tenant)
	if tq == nil {
		return QueueStats{Dropped: map[DropReason]int64{}}
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	s := QueueStats{Depth: tq.items.len(), Bytes: tq.bytes, Offered: tq.offered, Kept: tq.kept, Dropped: map[DropReason]int64{}}
	for r, n := range tq.dropped {
		s.Dropped[r] = n
	}
	if tq.items.len() > 0 {
		s.Oldest = tq.items.at(0).Entry.ArrivedAt
	}
	return s
}

// SetWriterHealthy is how the writer tells the queue whether its appends
// for tenant succeed. PolicyBoundedBackPressure waits only while they do:
// a queue that is full because Redis is down will not drain within the
// wait, so then it refuses (and counts) at once instead of taxing every
// send with a wait that cannot help.
func (q *Queue) SetWriterHealthy(tenant string, healthy bool) {
	if tq := q.lookup(tenant); tq != nil {
		tq.mu.Lock()
		tq.writerFailing = !healthy
		if !healthy {
			tq.freedLocked() // wake waiters: there will be no space
		}
		tq.mu.Unlock()
	}
}

// Oldest is the arrival time of tenant's oldest queued entry (zero if
// none): the writer's lag when it holds nothing.
func (q *Queue) Oldest(tenant string) time.Time {
	tq := q.lookup(tenant)
	if tq == nil {
		return time.Time{}
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	if tq.items.len() == 0 {
		return time.Time{}
	}
	return tq.items.at(0).Entry.ArrivedAt
}

// newest is the arrival time of tenant's newest queued entry (zero when
// none): MutantLagNewest's wrong end of the queue.
func (q *Queue) newest(tenant string) time.Time {
	tq := q.lookup(tenant)
	if tq == nil {
		return time.Time{}
	}
	tq.mu.Lock()
	defer tq.mu.Unlock()
	if n := tq.items.len(); n > 0 {
		return tq.items.at(n - 1).Entry.ArrivedAt
	}
	return time.Time{}
}

func (q *Queue) lookup(tenant string) *tenantQueue {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.tenants[tenant]
}

// tenant returns tenant's queue, creating it on first use.
func (q *Queue) tenant(tenant string) (*tenantQueue, error) {
	if tq := q.lookup(tenant); tq != nil {
		return tq, nil
	}
	if err := ValidateTenant(tenant); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if tq := q.tenants[tenant]; tq != nil {
		return tq, nil
	}
	cfg, ok := q.opts.Tenants[tenant]
	if !ok {
		cfg = q.opts.Default
	}
	tq := &tenantQueue{
		q: q, tenant: tenant, cfg: cfg, closed: q.closed,
		ready: make(chan struct{}, 1), space: make(chan struct{}),
		dropped: map[DropReason]int64{}, m: q.metrics.forTenant(tenant),
	}
	q.tenants[tenant] = tq
	select {
	case q.newTenant <- struct{}{}:
	default:
	}
	return tq, nil
}

// tenantQueue is one tenant's FIFO. Entries are kept in arrival order, so
// age ejection only ever looks at the head.
type tenantQueue struct {
	q      *Queue
	tenant string
	cfg    QueueConfig
	m      tenantMetrics

	mu      sync.Mutex
	items   ring
	bytes   int64
	nextSeq uint64
	offered int64
	kept    int64
	dropped map[DropReason]int64
	ready   chan struct{}
	// writerFailing is set while the writer's appends fail
	// (Queue.SetWriterHealthy); lastTake is when the writer last took
	// entries. Back pressure waits only for a writer that is draining.
	writerFailing bool
	lastTake      time.Time
	// closed is set by Queue.Close: every later offer is a counted loss.
	closed bool
	// space is closed (and replaced) when entries leave the queue, waking
	// back-pressure waiters; waiters counts them so nobody pays for the
	// channel swap when nobody waits.
	space   chan struct{}
	waiters int
}

func (tq *tenantQueue) offer(e Entry, size int64) bool {
	var deadline time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	tq.mu.Lock()
	tq.offered++
	for {
		if tq.closed {
			tq.dropLocked(DropShutdown, 1)
			tq.mu.Unlock()
			return false
		}
		now := tq.q.opts.Now()
		tq.expireLocked(now)
		if size > tq.cfg.MaxBytes {
			tq.dropLocked(DropTooLarge, 1)
			tq.mu.Unlock()
			return false
		}
		if tq.fitsLocked(size) {
			tq.appendLocked(e, size)
			tq.mu.Unlock()
			return true
		}
		switch tq.cfg.Policy {
		case PolicyOldest:
			for !tq.fitsLocked(size) {
				reason := DropOverwritten
				if tq.items.len() < tq.cfg.MaxEntries {
					reason = DropMaxBytes
				}
				evict := tq.items.popFront
				if tq.q.opts.Mutant == MutantOldestEvictsNewest {
					evict = tq.items.popBack
				}
				lost := evict()
				tq.bytes -= lost.Size
				tq.dropLocked(reason, 1)
				tq.lostLocked(lost.Entry, reason)
			}
			tq.appendLocked(e, size)
			tq.mu.Unlock()
			return true
		case PolicyRejectNew:
			tq.dropLocked(DropRejected, 1)
			tq.mu.Unlock()
			return false
		case PolicyBoundedBackPressure:
			if tq.writerFailing || now.Sub(tq.lastTake) > backPressureStall*tq.cfg.BackPressureWait {
				// The writer is not freeing space (its last append failed,
				// or it has taken nothing for several waits: an append
				// hangs on a dead node): waiting would only tax the send.
				tq.dropLocked(DropBackPressure, 1)
				tq.mu.Unlock()
				return false
			}
			if deadline.IsZero() {
				deadline = now.Add(tq.cfg.BackPressureWait)
			}
			wait := deadline.Sub(now)
			if wait <= 0 {
				tq.dropLocked(DropBackPressure, 1)
				tq.mu.Unlock()
				return false
			}
			space := tq.space
			tq.waiters++
			tq.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-space:
			case <-timer.C:
			}
			tq.mu.Lock()
			tq.waiters--
		}
	}
}

func (tq *tenantQueue) fitsLocked(size int64) bool {
	if tq.q.opts.Mutant == MutantBytesCapExclusive {
		return tq.items.len() < tq.cfg.MaxEntries && tq.bytes+size < tq.cfg.MaxBytes
	}
	return tq.items.len() < tq.cfg.MaxEntries && tq.bytes+size <= tq.cfg.MaxBytes
}

func (tq *tenantQueue) appendLocked(e Entry, size int64) {
	tq.nextSeq++
	tq.items.pushBack(Item{Offset: Offset{Gen: tq.q.gen, Seq: tq.nextSeq}, Entry: e, Size: size})
	tq.bytes += size
	tq.kept++
	tq.publishLocked()
	tq.signalReadyLocked()
}

// expireLocked ejects head entries older than max_age.
func (tq *tenantQueue) expireLocked(now time.Time) {
	cutoff := now.Add(-tq.cfg.MaxAge)
	n := 0
	for tq.items.len() > 0 && tq.items.at(0).Entry.ArrivedAt.Before(cutoff) {
		it := tq.items.popFront()
		tq.bytes -= it.Size
		tq.lostLocked(it.Entry, DropMaxAge)
		n++
	}
	if n == 0 {
		return
	}
	tq.dropLocked(DropMaxAge, n)
	tq.publishLocked()
	tq.freedLocked()
}

// dropLocked counts n lost entries — unless the queue is an uncounted
// mutant, which loses them all the same.
func (tq *tenantQueue) dropLocked(r DropReason, n int) {
	switch m := tq.q.opts.Mutant; {
	case m == MutantUncountedDrop, m == MutantUncountedShutdown && r == DropShutdown:
		return
	}
	tq.dropped[r] += int64(n)
	tq.m.drops[r].Add(float64(n))
}

// lostLocked tells QueueOptions.OnLost about one lost entry.
func (tq *tenantQueue) lostLocked(e Entry, r DropReason) {
	if f := tq.q.opts.OnLost; f != nil {
		f(e, r)
	}
}

func (tq *tenantQueue) publishLocked() {
	tq.m.depth.Set(float64(tq.items.len()))
	tq.m.bytes.Set(float64(tq.bytes))
}

func (tq *tenantQueue) signalReadyLocked() {
	select {
	case tq.ready <- struct{}{}:
	default:
	}
}

// freedLocked wakes back-pressure waiters.
func (tq *tenantQueue) freedLocked() {
	if tq.waiters > 0 {
		close(tq.space)
		tq.space = make(chan struct{})
	}
}

// entryOverhead approximates the fixed cost of one queued entry (the Item,
// the Entry's headers, slice and map headers), so that max_bytes bounds
// memory even for tiny payloads.
const entryOverhead = 320

// EntrySize estimates e's memory footprint for max_bytes: the fixed
// overhead plus every string, payload byte, meta pair and trace event.
// It is an estimate, cheap enough for the hot path (no encoding).
func EntrySize(e Entry) int64 {
	env := e.Envelope
	n := entryOverhead + len(env.SignalID) + len(env.TenantID) + len(env.ProjectID) + len(env.Sender) +
		len(env.Recipient) + len(env.Kind) + len(env.Payload) + len(e.Outcome)
	for k, v := range env.Meta {
		n += len(k) + len(v) + 32
	}
	for _, t := range e.Trace {
		n += len(t.SignalID) + len(t.Event) + len(t.Detail) + 64
	}
	if o := env.Obligation; o != nil {
		n += 160 + len(o.Kind) + len(o.DurabilityStatus)
	}
	return int64(n)
}
