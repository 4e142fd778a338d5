package workload

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/routing/judge"
	"github.com/slotgate/slotgate/traffic"
)

// countScript increments its one declared key: the non-idempotent write a
// relay runs as Lua.
var countScript = client.NewScript("routing/count", "return redis.call('INCR', KEYS[1])")

// Counters runs one sequential worker per counter key, alternating
// INCR and the counting script, each call under its own deadline when
// OpTimeout is set, and records every call (spec 000 §Conformance, Routing:
// non-idempotent operations judged exactly). Every call either adds one to
// its key or, when it failed, did nothing (a redirect or refusal) or may
// have (a timeout: unknown outcome). It asserts nothing.
type Counters struct {
	Pool  client.Pool
	Clock *traffic.Clock
	Keys  []string
	// OpTimeout, when positive, is each call's context deadline: valkey-go
	// has no read timeout, the caller's deadline is how a call times out
	// (go-redis ignores it for socket I/O and uses Options.ReadTimeout).
	OpTimeout time.Duration
	mu        sync.Mutex
	ops       []judge.Op
}

// Run drives every worker until stop is closed or ctx ends.
func (w *Counters) Run(ctx context.Context, stop <-chan struct{}) {
	traffic.UntilStopped(ctx, stop, len(w.Keys), 0, func(i, round int) {
		if round%2 == 0 {
			w.incr(ctx, i, w.Keys[i])
		} else {
			w.script(ctx, i, w.Keys[i])
		}
	})
}

// ReadBack reads every counter once through p (a correct pool, no latency)
// and records the reads as Final.
func (w *Counters) ReadBack(ctx context.Context, p client.Pool) {
	for i, k := range w.Keys {
		o := judge.Op{Worker: i, Kind: judge.Get, Keys: []string{k}, Final: true, Call: w.Clock.Now()}
		reply, err := p.Do(ctx, client.NewCmd("GET", []string{k}))
		if err == nil && reply != nil {
			var s string
			if s, err = client.AsString(reply); err == nil {
				o.Got = []string{s}
				o.Int, err = strconv.ParseInt(s, 10, 64)
			}
		}
		w.record(ctx, o, err)
	}
}

// Ops returns a copy of the recorded history.
func (w *Counters) Ops() []judge.Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.Op(nil), w.ops...)
}

func (w *Counters) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.OpTimeout > 0 {
		return context.WithTimeout(ctx, w.OpTimeout)
	}
	return ctx, func() {}
}

func (w *Counters) record(ctx context.Context, o judge.Op, err error) {
	o.Return = w.Clock.Now()
	traffic.RecordPoolOp(ctx, w.Pool, "worker-"+strconv.Itoa(o.Worker), string(o.Kind), slot.Of(o.Keys[0]), o.Call, o.Return, err)
	if err != nil {
		o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

func (w *Counters) incr(ctx context.Context, worker int, key string) {
	o := judge.Op{Worker: worker, Kind: judge.Incr, Keys: []string{key}, Call: w.Clock.Now()}
	octx, cancel := w.opCtx(ctx)
	reply, err := w.Pool.Do(octx, client.NewCmd("INCR", []string{key}))
	cancel()
	if err == nil {
		o.Int, _ = client.AsInt64(reply)
	}
	w.record(ctx, o, err)
}

func (w *Counters) script(ctx context.Context, worker int, key string) {
	o := judge.Op{Worker: worker, Kind: judge.EvalIncr, Keys: []string{key}, Call: w.Clock.Now()}
	octx, cancel := w.opCtx(ctx)
	reply, _, err := client.RunScript(octx, w.Pool, countScript, []string{key})
	cancel()
	if err == nil {
		o.Int, _ = client.AsInt64(reply)
	}
	w.record(ctx, o, err)
}

// RepliesShowDouble says the counters' own acknowledged replies already
// prove a write applied twice: each counter has one sequential writer and
// starts at zero, so a reply above the number of calls its worker has made
// so far (whatever their outcome) counts an increment applied more than
// once. A run uses it to end early once its at-least-once variant has shown
// its hazard; the verdict stays the counters checker's, on the read-back.
func RepliesShowDouble(ops []judge.Op) bool {
	calls := map[int]int64{}
	for _, o := range ops { // each worker's calls in the order it made them
		if o.Final {
			continue
		}
		calls[o.Worker]++
		if o.Acked() && o.Int > calls[o.Worker] {
			return true
		}
	}
	return false
}
