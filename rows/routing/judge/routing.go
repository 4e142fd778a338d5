package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// notExecuted is an error reply that means the server did not run the
// command (it redirected or refused it); any other failure has an unknown
// outcome.
func notExecuted(kind string) bool {
	switch kind {
	case "MOVED", "ASK", "TRYAGAIN", "CROSSSLOT", "CLUSTERDOWN":
		return true
	}
	return false
}

// acknowledged is the silently-wrong checker of the routing row (spec
// 000 §Conformance, Routing): across slot migrations, every key reads back
// its last acknowledged write — a register reads the value of its last
// acknowledged SET/EVAL (or of a later write whose outcome is unknown), a
// counter's INCR replies and final value account for exactly the
// acknowledged increments (plus at most the unknown ones). A read that
// starts after an acknowledged write and returns an older value is a stale
// read; a final value older than the last acknowledged write is a lost
// write.
//
// Premises, checked: minOps acknowledged operations; every operation returns
// after its call; every key read back at the end. A key's operations need
// not come from one sequential writer: a key whose operations overlap in
// time (two workers, or a write whose outcome is unknown) is judged exactly
// by porcupine against a register or counter (routingKeyModel), and so is
// every key the sequential walk flags, so overlapping writes never read as
// stale. The walk, exact for a sequential key, gives the readable lines.
func acknowledged(ops []Op, minOps int) check.Result {
	const name = "routing-acknowledged"
	byKey := map[string][]int{}
	acked := 0
	for i, o := range ops {
		if o.Return < o.Call {
			return check.Unknownf(name, "premise broken: operation %d (%s %v) returns at %v, before its call at %v", i, o.Kind, o.Keys, o.Return, o.Call)
		}
		if o.Acked() && !o.Final {
			acked++
		}
		for _, k := range o.Keys {
			byKey[k] = append(byKey[k], i)
		}
	}
	if acked < minOps {
		return check.Unknownf(name, "only %d acknowledged operations, need %d", acked, minOps)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var bad []string
	stale, lost, unread, judged, concurrent, undecided := 0, 0, 0, 0, 0, 0
	for _, k := range keys {
		idx := byKey[k]
		sort.SliceStable(idx, func(a, b int) bool { return ops[idx[a]].Call < ops[idx[b]].Call })
		w := walkRoutingKey(ops, idx, k)
		judged += w.judged
		if !w.finalSeen {
			unread++
		}
		overlap := routingOverlap(ops, idx)
		if overlap {
			concurrent++
		}
		if w.stale+w.lost == 0 && !overlap {
			continue
		}
		switch routingKeyLinearizable(ops, idx, k, 2*time.Second) {
		case porcupine.Ok:
			continue // the walk's lines came from an order it could not know
		case porcupine.Unknown:
			undecided++
			continue
		}
		if w.stale+w.lost == 0 {
			// Overlapping operations the walk accepted in call order, in no
			// real-time order a register or counter allows.
			w.stale++
			w.bad = append(w.bad, fmt.Sprintf("%s: its %d operations (overlapping) are not linearizable as one %s", k, len(idx), w.shape()))
		}
		stale, lost, bad = stale+w.stale, lost+w.lost, append(bad, w.bad...)
	}
	if stale+lost > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 6), "\n"), "%d stale reads and %d lost acknowledged writes over %d keys", stale, lost, len(keys))
	}
	if undecided > 0 {
		return check.Unknownf(name, "%d keys undecided: their concurrent operations were not checked within the time limit", undecided)
	}
	if unread > 0 {
		return check.Unknownf(name, "%d of %d keys were never read back at the end", unread, len(keys))
	}
	msg := fmt.Sprintf("%d keys, %d acknowledged operations, %d reads judged: every read returned the last acknowledged write", len(keys), acked, judged)
	if concurrent > 0 {
		msg += fmt.Sprintf(" (%d keys with overlapping operations judged for linearizability)", concurrent)
	}
	return check.Passf(name, "%s", msg)
}

// routingWalk is the sequential walk of one key's operations in call order.
type routingWalk struct {
	bad                 []string
	stale, lost, judged int
	finalSeen, counter  bool
}

func (w routingWalk) shape() string {
	if w.counter {
		return "counter"
	}
	return "register"
}

// walkRoutingKey replays key k's operations (idx, in call order) as one
// sequential writer made them: exact when no two overlap.
func walkRoutingKey(ops []Op, idx []int, k string) routingWalk {
	var w routingWalk
	var last string // last acknowledged register value ("" = nil)
	var pending []string
	var lo, hi int64 // counter bounds
	for _, i := range idx {
		o := ops[i]
		pos := indexOf(o.Keys, k)
		switch o.Kind {
		case Set, EvalSet:
			switch {
			case o.Acked():
				last, pending = o.Value, nil
			case !notExecuted(o.ErrKind):
				pending = append(pending, o.Value)
			}
		case Incr:
			w.counter = true
			switch {
			case o.Acked():
				w.judged++
				if o.Int < lo+1 || o.Int > hi+1 {
					w.stale++
					w.bad = append(w.bad, fmt.Sprintf("%s: INCR @%v answered %d, want %d..%d from the acknowledged increments", k, o.Call.Round(time.Millisecond), o.Int, lo+1, hi+1))
				}
				lo, hi = o.Int, o.Int
			case !notExecuted(o.ErrKind):
				hi++
			}
		case Get, EvalGet:
			if !o.Acked() {
				continue
			}
			w.finalSeen = w.finalSeen || o.Final
			w.judged++
			if w.counter {
				if o.Int < lo || o.Int > hi {
					w.lost++
					w.bad = append(w.bad, fmt.Sprintf("%s: read %d @%v (final %v), want %d..%d acknowledged increments", k, o.Int, o.Call.Round(time.Millisecond), o.Final, lo, hi))
				}
				lo, hi = o.Int, o.Int
				continue
			}
			got := ""
			if pos >= 0 && pos < len(o.Got) {
				got = o.Got[pos]
			}
			if got == last {
				pending = nil
				continue
			}
			if j := indexOf(pending, got); j >= 0 {
				last, pending = got, pending[j+1:]
				continue
			}
			if o.Final {
				w.lost++
			} else {
				w.stale++
			}
			w.bad = append(w.bad, fmt.Sprintf("%s: read %s @%v (final %v), want the last acknowledged write %s", k, show(got), o.Call.Round(time.Millisecond), o.Final, show(last)))
			last, pending = got, nil
		}
	}
	return w
}

// routingOverlap says whether two of a key's executed operations (idx, in
// call order) overlap in time; a write whose outcome is unknown overlaps
// everything after its call.
func routingOverlap(ops []Op, idx []int) bool {
	var end time.Duration = -1
	for _, i := range idx {
		o := ops[i]
		if !routingExecuted(o) {
			continue
		}
		if o.Call < end {
			return true
		}
		ret := o.Return
		if !o.Acked() {
			ret = math.MaxInt64
		}
		end = max(end, ret)
	}
	return false
}

// routingExecuted says whether an operation is in a key's linearizable
// history: acknowledged, or a write whose outcome is unknown. A refused or
// redirected command did not run; a failed read observed nothing.
func routingExecuted(o Op) bool {
	if o.Acked() {
		return true
	}
	switch o.Kind {
	case Set, EvalSet, Incr, EvalIncr:
		return !notExecuted(o.ErrKind)
	}
	return false
}

// routingKeyOp is one operation as one key sees it.
type routingKeyOp struct {
	op      Op
	key     string
	counter bool
}

type routingState struct {
	reg string
	n   int64
}

// routingKeyModel is one key's sequential specification: a register (SET,
// GET) or a counter (INCR, GET). A write whose outcome is unknown returns at
// infinity, so porcupine may order it after everything: it happened or not.
var routingKeyModel = porcupine.Model{
	Init: func() interface{} { return routingState{} },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		s, in := state.(routingState), input.(routingKeyOp)
		o := in.op
		switch o.Kind {
		case Set, EvalSet:
			return true, routingState{reg: o.Value, n: s.n}
		case Incr, EvalIncr:
			if o.Acked() && o.Int != s.n+1 {
				return false, s
			}
			return true, routingState{reg: s.reg, n: s.n + 1}
		}
		if in.counter {
			return o.Int == s.n, s
		}
		got := ""
		if pos := indexOf(o.Keys, in.key); pos >= 0 && pos < len(o.Got) {
			got = o.Got[pos]
		}
		return got == s.reg, s
	},
	DescribeOperation: func(input, _ interface{}) string {
		in := input.(routingKeyOp)
		return fmt.Sprintf("%s %s value=%q int=%d err=%s", in.op.Kind, in.key, in.op.Value, in.op.Int, in.op.ErrKind)
	},
}

// routingKeyLinearizable checks key k's executed operations against
// routingKeyModel.
func routingKeyLinearizable(ops []Op, idx []int, k string, timeout time.Duration) porcupine.CheckResult {
	counter := false
	for _, i := range idx {
		counter = counter || ops[i].Kind == Incr || ops[i].Kind == EvalIncr
	}
	var in []porcupine.Operation
	for _, i := range idx {
		o := ops[i]
		if !routingExecuted(o) {
			continue
		}
		ret := int64(o.Return)
		if !o.Acked() {
			ret = math.MaxInt64
		}
		in = append(in, porcupine.Operation{ClientId: o.Worker, Input: routingKeyOp{op: o, key: k, counter: counter}, Call: int64(o.Call), Return: ret})
	}
	return porcupine.CheckOperationsTimeout(routingKeyModel, in, timeout)
}

// CounterTally is one counter's accounting in Counters.
type CounterTally struct {
	Key string
	// Acked counts increments that returned success, Unknown those whose
	// outcome is unknown (a timeout, a broken connection), NotExecuted those
	// the server redirected or refused.
	Acked, Unknown, NotExecuted int64
	// Final is the value read back at the end; Read says it was.
	Final int64
	Read  bool
}

// CounterTallies tallies every counter of a Counters history, by key.
func CounterTallies(ops []Op) []CounterTally {
	byKey := map[string]*CounterTally{}
	var keys []string
	for _, o := range ops {
		if len(o.Keys) == 0 {
			continue
		}
		k := o.Keys[0]
		t := byKey[k]
		if t == nil {
			t = &CounterTally{Key: k}
			byKey[k] = t
			keys = append(keys, k)
		}
		switch {
		case o.Final:
			if o.Acked() && o.Kind == Get {
				t.Final, t.Read = o.Int, true
			}
		case o.Kind != Incr && o.Kind != EvalIncr:
		case o.Acked():
			t.Acked++
		case notExecuted(o.ErrKind):
			t.NotExecuted++
		default:
			t.Unknown++
		}
	}
	sort.Strings(keys)
	out := make([]CounterTally, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// counters is the routing row's exact check of non-idempotent writes
// (spec 000 §Conformance, Routing): every counter, written only
// by INCR and a counting script, ends between its acknowledged increments
// and its acknowledged plus unknown-outcome increments. Below is a lost
// acknowledged write; above is a write applied twice — a re-send after a
// timeout — which every caller saw succeed once. A history with fewer than
// minAcked acknowledged or minUnknown unknown-outcome increments is unknown:
// without timeouts the retry paths never ran.
func counters(ops []Op, minAcked, minUnknown int64) check.Result {
	const name = "routing-counters"
	tallies := CounterTallies(ops)
	var acked, unknownOps int64
	var bad []string
	over, under, unread := 0, 0, 0
	for _, t := range tallies {
		acked += t.Acked
		unknownOps += t.Unknown
		switch {
		case !t.Read:
			unread++
		case t.Final < t.Acked:
			under++
			bad = append(bad, fmt.Sprintf("%s: final %d < %d acknowledged increments (%d unknown): acknowledged writes lost", t.Key, t.Final, t.Acked, t.Unknown))
		case t.Final > t.Acked+t.Unknown:
			over++
			bad = append(bad, fmt.Sprintf("%s: final %d > %d acknowledged + %d unknown-outcome increments: %d applied more than once", t.Key, t.Final, t.Acked, t.Unknown, t.Final-t.Acked-t.Unknown))
		}
	}
	if over+under > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 6), "\n"), "%d of %d counters applied writes twice, %d lost acknowledged writes (%d acknowledged, %d unknown-outcome increments)", over, len(tallies), under, acked, unknownOps)
	}
	switch {
	case unread > 0:
		return check.Unknownf(name, "%d of %d counters were never read back", unread, len(tallies))
	case acked < minAcked:
		return check.Unknownf(name, "only %d acknowledged increments, need %d", acked, minAcked)
	case unknownOps < minUnknown:
		return check.Unknownf(name, "only %d increments timed out, need %d: the retry paths did not run", unknownOps, minUnknown)
	}
	return check.Passf(name, "%d counters, %d acknowledged and %d unknown-outcome increments: every final value within [acknowledged, acknowledged + unknown]", len(tallies), acked, unknownOps)
}

// Outcomes turns the non-final operations into loud outcomes for
// check.NoErrors.
func Outcomes(ops []Op) []history.OpOutcome {
	out := make([]history.OpOutcome, 0, len(ops))
	for _, o := range ops {
		if o.Final {
			continue
		}
		out = append(out, history.OpOutcome{Op: fmt.Sprintf("%s %s @%v", o.Kind, strings.Join(o.Keys, " "), o.Call.Round(time.Millisecond)), ErrKind: o.ErrKind, Err: o.Err})
	}
	return out
}

// StaleRead is a known-bad history for the routing checker's control: the
// first read that follows two acknowledged writes of different values
// answers the older one, as a cache that missed the newer write would. It
// returns ops unchanged and false when no such read exists.
func StaleRead(ops []Op) ([]Op, bool) {
	out := append([]Op(nil), ops...)
	sorted := make([]int, len(out))
	for i := range sorted {
		sorted[i] = i
	}
	sort.SliceStable(sorted, func(a, b int) bool { return out[sorted[a]].Call < out[sorted[b]].Call })
	prev, last := map[string]string{}, map[string]string{}
	for _, i := range sorted {
		o := out[i]
		if !o.Acked() || len(o.Keys) == 0 {
			continue
		}
		k := o.Keys[0]
		switch o.Kind {
		case Set, EvalSet:
			if last[k] != "" && last[k] != o.Value {
				prev[k] = last[k]
			}
			last[k] = o.Value
		case Get, EvalGet:
			if p := prev[k]; p != "" && len(o.Got) > 0 && o.Got[0] == last[k] {
				o.Got = append([]string{p}, o.Got[1:]...)
				out[i] = o
				return out, true
			}
		}
	}
	return out, false
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func show(v string) string {
	if v == "" {
		return "nil"
	}
	return fmt.Sprintf("%q", v)
}

// onlyUnknown is the errors column of the routing row under latency:
// the only errors that reach the caller are unknown outcomes (a timeout, a
// broken connection) — never a redirect, which the call path must absorb,
// nor any other refusal. minOps non-final operations are needed.
func onlyUnknown(ops []Op, minOps int) check.Result {
	const name = "routing-only-unknown"
	var kept []history.OpOutcome
	timeouts := 0
	for _, o := range Outcomes(ops) {
		if o.ErrKind == "network" {
			timeouts++
			continue
		}
		kept = append(kept, o)
	}
	if len(kept)+timeouts < minOps {
		return check.Unknownf(name, "only %d operations recorded, need %d", len(kept)+timeouts, minOps)
	}
	r := check.NoErrors(kept, 0)
	r.Checker = name
	if r.Status == check.Pass {
		r.Message = fmt.Sprintf("%d operations: %d timed out (outcome unknown), no other error", len(kept)+timeouts, timeouts)
	}
	return r
}

// AcknowledgedInput is a routing run's operations and the fewest
// acknowledged operations that make a verdict (acknowledged).
type AcknowledgedInput struct {
	Ops    []Op
	MinOps int
}

// CountersInput is a counter run's operations and the fewest acknowledged
// and unknown-outcome increments that make a verdict (counters).
type CountersInput struct {
	Ops        []Op
	MinAcked   int64
	MinUnknown int64
}

// OnlyUnknownInput is a run's operations and the fewest non-final ones that
// make a verdict (onlyUnknown).
type OnlyUnknownInput struct {
	Ops    []Op
	MinOps int
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	Acknowledged = check.Define("routing/acknowledged", func(in AcknowledgedInput) check.Result {
		return acknowledged(in.Ops, in.MinOps)
	}, "RoutingAcknowledged")
	Counters = check.Define("routing/counters", func(in CountersInput) check.Result {
		return counters(in.Ops, in.MinAcked, in.MinUnknown)
	}, "RoutingCounters")
	OnlyUnknown = check.Define("routing/only-unknown", func(in OnlyUnknownInput) check.Result {
		return onlyUnknown(in.Ops, in.MinOps)
	}, "RoutingOnlyUnknown")
)
