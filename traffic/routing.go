package traffic

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// pairSet writes ARGV[1] to both keys of a tagged pair; pairGet reads both.
// Both declare their keys, as the locality contract requires.
var (
	pairSet = client.NewScript("routing/pair-set", "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[1]); return 1")
	pairGet = client.NewScript("routing/pair-get", "return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or ''}")
)

// RoutingKeys are one worker's keys, all under one hash tag so they live in
// one slot: a register (SET/GET), a counter (INCR) and a pair written and
// read by Lua.
type RoutingKeys struct {
	Slot           int
	Reg, Ctr, A, B string
}

// RoutingKeysIn returns keys under a hash tag that hashes to slot s, with a
// prefix naming the run (a seeded search over a numeric suffix).
func RoutingKeysIn(prefix string, s int) RoutingKeys {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%s-%d", prefix, i)
		if slot.Of("{"+tag+"}") == s {
			k := "rt:{" + tag + "}:"
			return RoutingKeys{Slot: s, Reg: k + "reg", Ctr: k + "ctr", A: k + "a", B: k + "b"}
		}
	}
}

// RoutingWorkload runs one sequential worker per RoutingKeys: SET, GET,
// INCR, EVAL pair-set, EVAL pair-get, round after round, recording every
// operation. It asserts nothing.
type RoutingWorkload struct {
	Pool  client.Pool
	Clock *Clock
	Keys  []RoutingKeys
	// Tag distinguishes this workload's written values.
	Tag string
	mu  sync.Mutex
	ops []history.RoutingOp
}

// Run drives every worker until stop is closed or ctx ends.
func (w *RoutingWorkload) Run(ctx context.Context, stop <-chan struct{}) {
	untilStopped(ctx, stop, len(w.Keys), 0, func(i, round int) {
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
func (w *RoutingWorkload) ReadBack(ctx context.Context, p client.Pool) {
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
func (w *RoutingWorkload) Ops() []history.RoutingOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]history.RoutingOp(nil), w.ops...)
}

func (w *RoutingWorkload) record(ctx context.Context, o history.RoutingOp, err error) {
	o.Return = w.Clock.Now()
	recordOp(ctx, opRecord{client: "worker-" + strconv.Itoa(o.Worker), backend: backendOf(w.Pool), kind: string(o.Kind), slot: slot.Of(o.Keys[0]), start: o.Call, end: o.Return}, err)
	if err != nil {
		o.ErrKind, o.Err = ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.ops = append(w.ops, o)
	w.mu.Unlock()
}

func (w *RoutingWorkload) set(ctx context.Context, worker int, key, v string) {
	o := history.RoutingOp{Worker: worker, Kind: history.RoutingSet, Keys: []string{key}, Value: v, Call: w.Clock.Now()}
	_, err := w.Pool.Do(ctx, client.NewCmd("SET", []string{key}, v))
	w.record(ctx, o, err)
}

func (w *RoutingWorkload) get(ctx context.Context, worker int, key string, counter, final bool) {
	o := history.RoutingOp{Worker: worker, Kind: history.RoutingGet, Keys: []string{key}, Final: final, Call: w.Clock.Now()}
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

func (w *RoutingWorkload) incr(ctx context.Context, worker int, key string) {
	o := history.RoutingOp{Worker: worker, Kind: history.RoutingIncr, Keys: []string{key}, Call: w.Clock.Now()}
	reply, err := w.Pool.Do(ctx, client.NewCmd("INCR", []string{key}))
	if err == nil {
		o.Int, _ = client.AsInt64(reply)
	}
	w.record(ctx, o, err)
}

// eval runs a pair script; v is the value pair-set writes, or "final" to mark
// a pair-get as the read-back.
func (w *RoutingWorkload) eval(ctx context.Context, worker int, s *client.Script, keys []string, v string) {
	o := history.RoutingOp{Worker: worker, Kind: history.RoutingEvalSet, Keys: keys, Value: v, Call: w.Clock.Now()}
	var args []string
	if s == pairGet {
		o.Kind, o.Value, o.Final = history.RoutingEvalGet, "", v == "final"
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
func (w *RoutingWorkload) PairSet(ctx context.Context, worker int, k RoutingKeys) {
	w.eval(ctx, worker, pairSet, []string{k.A, k.B}, fmt.Sprintf("%s-%d", w.Tag, worker))
}
