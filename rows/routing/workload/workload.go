// Package workload is the routing row's traffic (spec 000 §Conformance,
// Routing): seeded workers that SET, GET, INCR and run tagged-pair scripts,
// or only increment counters, on keys in the slots being moved, recording
// every operation as a judge.Op for the row's checkers and into the
// scenario history. It asserts nothing.
package workload

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/routing/judge"
	"github.com/slotgate/slotgate/traffic"
)

// pairSet writes ARGV[1] to both keys of a tagged pair; pairGet reads both.
// Both declare their keys, as the locality contract requires.
var (
	pairSet = client.NewScript("routing/pair-set", "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[1]); return 1")
	pairGet = client.NewScript("routing/pair-get", "return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or ''}")
)

// Routing runs one sequential worker per traffic.RoutingKeys: SET, GET,
// INCR, EVAL pair-set, EVAL pair-get, round after round, recording every
// operation. It asserts nothing.
type Routing struct {
	Pool  client.Pool
	Clock *traffic.Clock
	Keys  []traffic.RoutingKeys
	// Tag distinguishes this workload's written values.
	Tag string
	mu  sync.Mutex
	ops []judge.Op
}

// Run drives every worker until stop is closed or ctx ends.
func (w *Routing) Run(ctx context.Context, stop <-chan struct{}) {
	traffic.UntilStopped(ctx, stop, len(w.Keys), 0, func(i, round int) {
		k := w.Keys[i]
		v := fmt.Sprintf("%s-%d-%d", w.Tag, i, round)
		w.set(ctx, i, k.Reg, v)
		w.get(ctx, i, k.Reg, false, false)
		w.incr(ctx, i, k.Ctr)
		w.eval(ctx, i, pairSet, []string{k.A, k.B}, v)
		w.eval(ctx, i, pairGet, []string{k.A, k.B}, "")
	})
}

// ReadBack reads every key once through p (a correct cluster pool) and
// records the reads as Final, so the checker sees what survived.
func (w *Routing) ReadBack(ctx context.Context, p client.Pool) {
	saved := w.Pool
	w.Pool = p
	defer func() { w.Pool = saved }()
	for i, k := range w.Keys {
		w.get(ctx, i, k.Reg, false, true)
		w.get(ctx, i, k.Ctr, true, true)
		w.eval(ctx, i, pairGet, []string{k.A, k.B}, "final")
	}
}

// Ops returns a copy of the recorded history.
func (w *Routing) Ops() []judge.Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.Op(nil), w.ops...)
}

func (w *Routing) record(ctx context.Context, o judge.Op, err error) {
	o.Return = w.Clock.Now()
	traffic.RecordPoolOp(ctx, w.Pool, "worker-"+strconv.Itoa(o.Worker), string(o.Kind), slot.Of(o.Keys[0]), o.Call, o.Return, err)
	if err != nil {
		o.ErrKind, o.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

func (w *Routing) set(ctx context.Context, worker int, key, v string) {
	o := judge.Op{Worker: worker, Kind: judge.Set, Keys: []string{key}, Value: v, Call: w.Clock.Now()}
	_, err := w.Pool.Do(ctx, client.NewCmd("SET", []string{key}, v))
	w.record(ctx, o, err)
}

func (w *Routing) get(ctx context.Context, worker int, key string, counter, final bool) {
	o := judge.Op{Worker: worker, Kind: judge.Get, Keys: []string{key}, Final: final, Call: w.Clock.Now()}
	reply, err := w.Pool.Do(ctx, client.NewCmd("GET", []string{key}))
	if err == nil && reply != nil {
		var s string
		if s, err = client.AsString(reply); err == nil {
			o.Got = []string{s}
			if counter {
				o.Int, err = strconv.ParseInt(s, 10, 64)
			}
		}
	}
	w.record(ctx, o, err)
}

func (w *Routing) incr(ctx context.Context, worker int, key string) {
	o := judge.Op{Worker: worker, Kind: judge.Incr, Keys: []string{key}, Call: w.Clock.Now()}
	reply, err := w.Pool.Do(ctx, client.NewCmd("INCR", []string{key}))
	if err == nil {
		o.Int, _ = client.AsInt64(reply)
	}
	w.record(ctx, o, err)
}

// eval runs a pair script; v is the value pair-set writes, or "final" to mark
// a pair-get as the read-back.
func (w *Routing) eval(ctx context.Context, worker int, s *client.Script, keys []string, v string) {
	o := judge.Op{Worker: worker, Kind: judge.EvalSet, Keys: keys, Value: v, Call: w.Clock.Now()}
	var args []string
	if s == pairGet {
		o.Kind, o.Value, o.Final = judge.EvalGet, "", v == "final"
	} else {
		args = []string{v}
	}
	reply, _, err := client.RunScript(ctx, w.Pool, s, keys, args...)
	if err == nil && s == pairGet {
		var vals []string
		if vals, _, err = client.AsStrings(reply); err == nil {
			o.Got = vals
		}
	}
	w.record(ctx, o, err)
}

// PairSet runs the pair-set script once for worker on k (a single recorded
// write), for scenarios that drive calls one by one.
func (w *Routing) PairSet(ctx context.Context, worker int, k traffic.RoutingKeys) {
	w.eval(ctx, worker, pairSet, []string{k.A, k.B}, fmt.Sprintf("%s-%d", w.Tag, worker))
}

// TimelineOps converts a routing workload's operations for the report's
// timeline; series names the client series they are drawn as (the backend,
// or a control's name). The read-back after the run is not part of the
// timeline. A call that got no reply ("network") or that the scenario cut
// short (traffic.ErrKindStopped) may have taken effect, so it is unknown;
// any error reply is failed.
func TimelineOps(series string, ops []judge.Op) []history.Op {
	out := make([]history.Op, 0, len(ops))
	for _, o := range ops {
		if o.Final {
			continue
		}
		outcome := history.Failed
		switch o.ErrKind {
		case "":
			outcome = history.OK
		case "network", traffic.ErrKindStopped:
			outcome = history.Unknown
		}
		out = append(out, history.Op{Start: o.Call, End: o.Return, Backend: series, Kind: string(o.Kind),
			Outcome: outcome, ErrKind: o.ErrKind, Err: o.Err})
	}
	return out
}
