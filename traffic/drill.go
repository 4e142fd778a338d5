package traffic

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// DrillKey is one key of the failure-drill workload and the shard owning it.
type DrillKey struct {
	Key   string
	Shard int
}

// DrillWorkload runs one sequential writer per key — SET key <seq> with an
// increasing seq and a per-operation timeout — recording every write. It
// asserts nothing.
type DrillWorkload struct {
	Pool    client.Pool
	Clock   *Clock
	Keys    []DrillKey
	Timeout time.Duration
	// Pace is the pause between one writer's writes.
	Pace time.Duration
	mu   sync.Mutex
	ops  []history.DrillOp
}

// Run drives every writer until stop is closed or ctx ends.
func (w *DrillWorkload) Run(ctx context.Context, stop <-chan struct{}) {
	untilStopped(ctx, stop, len(w.Keys), w.Pace, func(i, round int) {
		k, seq := w.Keys[i], int64(round+1)
		o := history.DrillOp{Key: k.Key, Shard: k.Shard, Seq: seq, Call: w.Clock.Now()}
		octx, cancel := context.WithTimeout(ctx, w.Timeout)
		_, err := w.Pool.Do(octx, client.NewCmd("SET", []string{k.Key}, strconv.FormatInt(seq, 10)))
		cancel()
		w.record(ctx, o, err)
	})
}

// ReadBack reads every key through p and records the reads as Final.
func (w *DrillWorkload) ReadBack(ctx context.Context, p client.Pool) {
	for _, k := range w.Keys {
		o := history.DrillOp{Key: k.Key, Shard: k.Shard, Final: true, Call: w.Clock.Now()}
		// A read-back is retried for a while: it must see what survived, not
		// the tail of the failover.
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; {
			var reply any
			reply, err = p.Do(ctx, client.NewCmd("GET", []string{k.Key}))
			if err == nil && reply != nil {
				o.Seq, err = client.AsInt64(reply)
			}
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		w.record(ctx, o, err)
	}
}

// Ops returns a copy of the recorded history.
func (w *DrillWorkload) Ops() []history.DrillOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]history.DrillOp(nil), w.ops...)
}

func (w *DrillWorkload) record(ctx context.Context, o history.DrillOp, err error) {
	o.Return = w.Clock.Now()
	kind := "set"
	if o.Final {
		kind = "get"
	}
	recordOp(ctx, opRecord{client: o.Key, backend: backendOf(w.Pool), kind: kind, slot: slot.Of(o.Key), start: o.Call, end: o.Return}, err)
	if err != nil {
		o.ErrKind, o.Err = ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}
