// Package workload is the failure-drills row's traffic (spec 000
// §Conformance, Failure drills): one sequential writer per key on every
// shard while a shard fails over, recording every write and the read-back
// after the drills as a judge.DrillOp for the row's checkers and into the
// scenario history, and the adapters that draw the row's recorded
// operations on the report's timeline. It asserts nothing.
package workload

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/failuredrills/judge"
	"github.com/slotgate/slotgate/traffic"
)

// Key is one key of the drill workload and the shard owning it.
type Key struct {
	Key   string
	Shard int
}

// Writers runs one sequential writer per key — SET key <seq> with an
// increasing seq and a per-operation timeout — recording every write. It
// asserts nothing.
type Writers struct {
	Pool    client.Pool
	Clock   *traffic.Clock
	Keys    []Key
	Timeout time.Duration
	// Pace is the pause between one writer's writes.
	Pace time.Duration
	mu   sync.Mutex
	ops  []judge.DrillOp
}

// Run drives every writer until stop is closed or ctx ends.
func (w *Writers) Run(ctx context.Context, stop <-chan struct{}) {
	traffic.UntilStopped(ctx, stop, len(w.Keys), w.Pace, func(i, round int) {
		k, seq := w.Keys[i], int64(round+1)
		o := judge.DrillOp{Key: k.Key, Shard: k.Shard, Seq: seq, Call: w.Clock.Now()}
		octx, cancel := context.WithTimeout(ctx, w.Timeout)
		_, err := w.Pool.Do(octx, client.NewCmd("SET", []string{k.Key}, strconv.FormatInt(seq, 10)))
		cancel()
		w.record(ctx, o, err)
	})
}

// ReadBack reads every key through p and records the reads as Final.
func (w *Writers) ReadBack(ctx context.Context, p client.Pool) {
	for _, k := range w.Keys {
		o := judge.DrillOp{Key: k.Key, Shard: k.Shard, Final: true, Call: w.Clock.Now()}
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
func (w *Writers) Ops() []judge.DrillOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.DrillOp(nil), w.ops...)
}

func (w *Writers) record(ctx context.Context, o judge.DrillOp, err error) {
	o.Return = w.Clock.Now()
	kind := "set"
	if o.Final {
		kind = "get"
	}
	traffic.RecordPoolOp(ctx, w.Pool, o.Key, kind, slot.Of(o.Key), o.Call, o.Return, err)
	if err != nil {
		o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

// outcome is an operation's outcome from its recorded error kind: "" is
// ok; a call that got no reply ("network") or that the scenario cut short
// (traffic.ErrKindStopped) may have taken effect, so it is unknown; any
// error reply is failed.
func outcome(errKind string) history.Outcome {
	switch errKind {
	case "":
		return history.OK
	case "network", traffic.ErrKindStopped:
		return history.Unknown
	}
	return history.Failed
}

// TimelineOps converts a drill workload's writes for the report's timeline
// (read-back excluded); series names the client series they are drawn as
// (the backend, or a control's name).
func TimelineOps(series string, ops []judge.DrillOp) []history.Op {
	out := make([]history.Op, 0, len(ops))
	for _, o := range ops {
		if o.Final {
			continue
		}
		out = append(out, history.Op{Start: o.Call, End: o.Return, Backend: series, Kind: "set",
			Outcome: outcome(o.ErrKind), ErrKind: o.ErrKind, Err: o.Err})
	}
	return out
}

// ReplicaTimelineOps converts a replica-repair workload's operations for
// the report's timeline: reads as series+" reads", writes as
// series+" writes".
func ReplicaTimelineOps(series string, ops []judge.ReplicaOp) []history.Op {
	out := make([]history.Op, 0, len(ops))
	for _, o := range ops {
		name, kind := series+" writes", "set"
		if o.Read {
			name, kind = series+" reads", "get"
		}
		out = append(out, history.Op{Start: o.Call, End: o.Return, Backend: name, Kind: kind,
			Outcome: outcome(o.ErrKind), ErrKind: o.ErrKind, Err: o.Err})
	}
	return out
}
