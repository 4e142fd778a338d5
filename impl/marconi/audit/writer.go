package audit

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/impl/client"
)

//go:embed lua/append.lua
var appendSource string

// DefaultRetention is the Marconi Cache's rolling window (spec 002 §0.2:
// "MAXLEN ~7d").
const DefaultRetention = 7 * 24 * time.Hour

// DefaultWriterBatch is the writer's default batch: the most entries it
// takes from a queue at once, and so the most a stalled writer holds out
// of the queue's reach (the loss-budget set check relies on this bound).
const DefaultWriterBatch = 64

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Pool is the command pool the writer appends through (shared with
	// other callers is fine: the writer sends no blocking command).
	Pool client.Pool
	// Queue is the audit queue the writer drains.
	Queue *Queue
	// Metrics defaults to the queue's.
	Metrics *Metrics
	// Retention is the stream's time window (default DefaultRetention);
	// tests shrink it to watch the trim. The trim by time never passes
	// what Group has not consumed (its last-delivered id and its lowest
	// pending id) — a departure from §4.2 Recoverability, which accepts
	// "the trimmed window is the audit gap" once the archiver lags past
	// 7 d: entries trimmed before the group read them vanish without a
	// trace (XREADGROUP ">" skips them; only pending ones come back as
	// deleted from XAUTOCLAIM), so the gap would not be the "operator-
	// visible" one the spec promises. Kept, they cost Redis memory while
	// the archiver is down, which marconi_pg_archiver_lag_seconds alerts
	// on.
	Retention time.Duration
	// Group is the archiver's consumer group the trim respects (default
	// DefaultGroup).
	Group string
	// MaxLen is the count MutantTrimByCount trims to (ignored otherwise).
	MaxLen int
	// Crash, if set, is asked after every successful append (with the
	// batch's size), before the appended batch is released; true makes the writer die there (Run
	// returns ErrCrashed) with the batch handed back to the queue
	// unsettled, as a writer task restarted by its supervisor would leave
	// it (§4.1 Restart: its successor must resume from the Redis offset).
	Crash func(tenant string, appended int) bool
	// Batch is the most entries one append script carries (default
	// DefaultWriterBatch).
	Batch int
	// Timeout bounds one append (default 2 s); RetryMin and RetryMax bound
	// the backoff between failed appends (defaults 10 ms, 250 ms).
	Timeout, RetryMin, RetryMax time.Duration
	// LagEvery is how often the lag gauge is refreshed (default 100 ms).
	LagEvery time.Duration
	// OnError, if set, is told about every counted error.
	OnError func(PipelineError)
	// OnAppended, if set, is told about the entries each append put in the
	// stream (and those an unknown outcome turned out to have put there):
	// the obligation index marks their obligations durable, the stream
	// being "the durable boundary for v0.4" (spec 002 §4.1, §3.4).
	OnAppended func(entries []Entry)
	// Mutant selects a known-bad variant (negative controls only).
	Mutant Mutant
}

// Writer is the Redis Stream writer (spec 002 §4.1): one goroutine per
// tenant drains that tenant's audit queue into marconi:signals:{tenant_id}
// with XADD, trims by time, and keeps its resume offset next to the stream.
// A tenant whose shard is down does not hold up the others.
type Writer struct {
	o      WriterOptions
	script *client.Script
}

// NewWriter validates o and fills its defaults.
func NewWriter(o WriterOptions) (*Writer, error) {
	if o.Pool == nil || o.Queue == nil {
		return nil, fmt.Errorf("new writer: pool and queue are required: %w", ErrBadConfig)
	}
	if o.Metrics == nil {
		o.Metrics = o.Queue.Metrics()
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Batch <= 0 {
		o.Batch = DefaultWriterBatch
	}
	if o.Group == "" {
		o.Group = DefaultGroup
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 10 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 250 * time.Millisecond
	}
	if o.LagEvery <= 0 {
		o.LagEvery = 100 * time.Millisecond
	}
	return &Writer{o: o, script: client.NewScript("marconi/audit-append", appendSource)}, nil
}

// Script is the append script, for reports (EVALSHA fallbacks).
func (w *Writer) Script() *client.Script { return w.script }

// ErrWriterCrashed is returned by Writer.Run when its crash hook fired.
var ErrWriterCrashed = errors.New("writer crashed")

// Run drains every tenant's queue until ctx ends, then hands whatever a
// tenant loop held back to the queue and returns (nil), or until the crash
// hook fires (ErrWriterCrashed).
func (w *Writer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	running := map[string]bool{}
	for {
		for _, t := range w.o.Queue.Tenants() {
			if !running[t] {
				running[t] = true
				wg.Go(func() {
					if w.runTenant(ctx, t) {
						cancel(ErrWriterCrashed)
					}
				})
			}
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			if errors.Is(context.Cause(ctx), ErrWriterCrashed) {
				return ErrWriterCrashed
			}
			return nil
		case <-w.o.Queue.NewTenants():
		}
	}
}

// tenantWriter is one tenant loop's state.
type tenantWriter struct {
	w       *Writer
	tenant  string
	keys    Keys
	lag     prometheus.Gauge
	errs    *prometheus.CounterVec
	appends prometheus.Counter

	// mu guards what the lag ticker reads: the arrival time of the held
	// batch's head (zero when none is held).
	mu   sync.Mutex
	held time.Time
}

// runTenant drains tenant's queue until ctx ends; it reports whether the
// crash hook fired.
func (w *Writer) runTenant(ctx context.Context, tenant string) (crashed bool) {
	keys, err := KeysFor(tenant)
	if err != nil { // the queue only creates valid tenants
		return false
	}
	tw := &tenantWriter{
		w: w, tenant: tenant, keys: keys,
		lag:     w.o.Metrics.writerLag.WithLabelValues(tenant),
		errs:    w.o.Metrics.writerErrors,
		appends: w.o.Metrics.writerAppended.WithLabelValues(tenant),
	}
	q := w.o.Queue
	var inflight []Item
	defer func() { q.Requeue(tenant, inflight) }()
	tw.resume(ctx)

	// The lag gauge has its own ticker: an append can hang for seconds
	// against a dead node (client retries, timeouts), and the gauge must
	// keep growing meanwhile — it is what the operator alerts on (§4.1).
	var lagLoop sync.WaitGroup
	lagCtx, stopLag := context.WithCancel(ctx)
	defer func() { stopLag(); lagLoop.Wait() }()
	lagLoop.Go(func() {
		t := time.NewTicker(w.o.LagEvery)
		defer t.Stop()
		for {
			tw.publishLag()
			select {
			case <-lagCtx.Done():
				return
			case <-t.C:
			}
		}
	})

	b := backoff{min: w.o.RetryMin, max: w.o.RetryMax}
	for ctx.Err() == nil {
		if len(inflight) == 0 {
			inflight = q.Take(tenant, w.o.Batch)
			tw.hold(inflight)
			if w.o.Mutant == MutantAnnounceBeforeAppend {
				tw.appended(inflight)
			}
		}
		if len(inflight) == 0 {
			select {
			case <-ctx.Done():
			case <-q.Ready(tenant):
			}
			continue
		}
		if err := tw.append(ctx, inflight); err != nil {
			if ctx.Err() != nil {
				// Unknown outcome: the append may have run. What the offset
				// shows appended is not handed back — a shutdown would count
				// it lost though the stream holds it (a phantom loss); the
				// rest is requeued, and the offset makes a retry safe.
				rest := tw.settle(ctx, inflight)
				tw.appended(inflight[:len(inflight)-len(rest)])
				inflight = rest
				return false
			}
			q.SetWriterHealthy(tenant, false)
			tw.report("append", err)
			sleep(ctx, b.next())
			continue
		}
		q.SetWriterHealthy(tenant, true)
		b.reset()
		if w.o.Crash != nil && w.o.Crash(tenant, len(inflight)) {
			// inflight goes back to the queue unsettled and unannounced,
			// as a dead writer leaves it; the next writer's resume drops
			// it by offset and announces it then.
			return true
		}
		if w.o.Mutant != MutantAnnounceBeforeAppend {
			tw.appended(inflight)
		}
		inflight = nil
		tw.hold(nil)
		tw.publishLag()
	}
	return false
}

func (tw *tenantWriter) hold(items []Item) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.held = time.Time{}
	if len(items) > 0 {
		tw.held = items[0].Entry.ArrivedAt
		if tw.w.o.Mutant == MutantLagNewest {
			tw.held = items[len(items)-1].Entry.ArrivedAt
		}
	}
}

// resume is §4.1 Restart: entries at or below the stored offset are already
// in the stream and leave the queue without being appended again. Only an
// offset of this queue's generation can match (a new process starts a new
// generation; what its predecessor held in memory is the §6 loss). Best
// effort: the append script skips them anyway.
func (tw *tenantWriter) resume(ctx context.Context) {
	switch tw.w.o.Mutant {
	case MutantIgnoreOffset:
		return
	case MutantResumeFromTail:
		tw.w.o.Queue.DiscardThrough(tw.tenant, Offset{Gen: tw.w.o.Queue.Generation(), Seq: math.MaxUint64})
		return
	}
	cctx, cancel := context.WithTimeout(ctx, tw.w.o.Timeout)
	defer cancel()
	v, err := tw.w.o.Pool.Do(cctx, client.NewCmd("GET", []string{tw.keys.Offset}))
	if err != nil {
		if ctx.Err() == nil {
			tw.report("resume", err)
		}
		return
	}
	s, err := client.AsString(v)
	if v == nil || err != nil {
		return
	}
	if off, err := ParseOffset(s); err == nil {
		// What the offset covers is in the stream: a predecessor appended
		// it and died before saying so (the crash hook, a stopped writer),
		// so this writer announces it (OnAppended: the obligation becomes
		// durable) as it drops it.
		tw.appended(tw.w.o.Queue.DiscardThrough(tw.tenant, off))
	}
}

// settle resolves an append whose outcome is unknown (the writer was
// stopped mid-call) by reading the co-located offset, which the append
// script advances in the same step as the XADDs: items at or below it are
// in the stream. It returns the items that are not (all of them when the
// offset cannot be read: requeued, they are at worst written twice and
// discarded by the next writer's resume).
func (tw *tenantWriter) settle(ctx context.Context, items []Item) []Item {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tw.w.o.Timeout)
	defer cancel()
	v, err := tw.w.o.Pool.Do(cctx, client.NewCmd("GET", []string{tw.keys.Offset}))
	s, serr := client.AsString(v)
	if err != nil || v == nil || serr != nil {
		return items
	}
	off, err := ParseOffset(s)
	if err != nil || off.Gen != tw.w.o.Queue.Generation() {
		return items
	}
	var rest []Item
	for _, it := range items {
		if it.Offset.Seq > off.Seq {
			rest = append(rest, it)
		}
	}
	return rest
}

// appended tells WriterOptions.OnAppended about items now in the stream.
func (tw *tenantWriter) appended(items []Item) {
	f := tw.w.o.OnAppended
	if f == nil || len(items) == 0 {
		return
	}
	entries := make([]Entry, len(items))
	for i, it := range items {
		entries[i] = it.Entry
	}
	f(entries)
}

// streamEntry is the JSON an XADD carries in its "entry" field.
func encodeEntry(e Entry) (string, error) {
	b, err := json.Marshal(e)
	return string(b), err
}

func (tw *tenantWriter) append(ctx context.Context, items []Item) error {
	o := tw.w.o
	trim, dedupe := "group", "1"
	switch o.Mutant {
	case MutantTrimIgnoresGroup:
		trim = "time"
	case MutantTrimByCount:
		trim = "count:" + strconv.Itoa(max(o.MaxLen, 1))
	case MutantIgnoreOffset:
		dedupe = "0"
	}
	args := make([]string, 0, 5+4*len(items))
	args = append(args, strconv.FormatInt(o.Retention.Milliseconds(), 10), o.Queue.Generation(), o.Group, trim, dedupe)
	for _, it := range items {
		js, err := encodeEntry(it.Entry)
		if err != nil {
			return fmt.Errorf("encode entry %s: %w", it.Entry.Envelope.SignalID, err)
		}
		args = append(args, strconv.FormatUint(it.Offset.Seq, 10), it.Entry.Envelope.SignalID,
			it.Entry.ArrivedAt.UTC().Format(time.RFC3339Nano), js)
	}
	cctx, cancel := context.WithTimeout(ctx, tw.w.o.Timeout)
	defer cancel()
	keys := []string{tw.keys.Stream, tw.keys.Offset}
	if o.Mutant == MutantOffsetPerGeneration {
		keys[1] += ":" + o.Queue.Generation()
	}
	//slotgate:same-slot both keys carry the {tenant_id} hash tag (KeysFor; TestKeysShareHashTag)
	reply, _, err := client.RunScript(cctx, tw.w.o.Pool, tw.w.script, keys, args...)
	if err != nil {
		return fmt.Errorf("append %d entries to %s: %w", len(items), tw.keys.Stream, err)
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != 2 {
		return fmt.Errorf("append to %s: reply %v: %w", tw.keys.Stream, reply, client.ErrUnexpectedReply)
	}
	appended, err := client.AsInt64(arr[0])
	if err != nil {
		return fmt.Errorf("append to %s: %w", tw.keys.Stream, err)
	}
	if o.Mutant == MutantAppendedPerCall && appended > 0 {
		appended = 1
	}
	tw.appends.Add(float64(appended))
	return nil
}

// publishLag sets the lag gauge to the age of the oldest entry not yet in
// the stream: the held batch's head, else the queue's head.
func (tw *tenantWriter) publishLag() {
	tw.mu.Lock()
	oldest := tw.held
	tw.mu.Unlock()
	if tw.w.o.Mutant == MutantLagNewest {
		if newest := tw.w.o.Queue.newest(tw.tenant); !newest.IsZero() {
			oldest = newest
		}
	}
	if oldest.IsZero() {
		oldest = tw.w.o.Queue.Oldest(tw.tenant)
	}
	if oldest.IsZero() {
		tw.lag.Set(0)
		return
	}
	tw.lag.Set(max(0, time.Since(oldest).Seconds()))
}

func (tw *tenantWriter) report(op string, err error) {
	if tw.w.o.Mutant == MutantSilentWriter {
		return
	}
	reason := errorReason(err)
	if tw.w.o.Mutant == MutantErrorLabelsSwapped {
		tw.errs.WithLabelValues(reason, tw.tenant).Inc()
	} else {
		tw.errs.WithLabelValues(tw.tenant, reason).Inc()
	}
	if tw.w.o.OnError != nil {
		tw.w.o.OnError(PipelineError{At: time.Now(), Stage: StageWriter, Tenant: tw.tenant, Op: op, Reason: reason, Err: err.Error()})
	}
}
