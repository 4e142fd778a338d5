package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

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

// RoutingAcknowledged is the silently-wrong checker of the routing row (spec
// 000 §Conformance, Routing): across slot migrations, every key reads back
// its last acknowledged write — a register reads the value of its last
// acknowledged SET/EVAL (or of a later write whose outcome is unknown), a
// counter's INCR replies and final value account for exactly the
// acknowledged increments (plus at most the unknown ones). A read that
// starts after an acknowledged write and returns an older value is a stale
// read; a final value older than the last acknowledged write is a lost
// write. minOps acknowledged operations are needed, and every key must have
// been read back at the end.
func RoutingAcknowledged(ops []history.RoutingOp, minOps int) Result {
	const name = "routing-acknowledged"
	byKey := map[string][]int{}
	acked := 0
	for i, o := range ops {
		if o.Acked() && !o.Final {
			acked++
		}
		for _, k := range o.Keys {
			byKey[k] = append(byKey[k], i)
		}
	}
	if acked < minOps {
		return unknown(name, "only %d acknowledged operations, need %d", acked, minOps)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var bad []string
	stale, lost, unread, judged := 0, 0, 0, 0
	for _, k := range keys {
		idx := byKey[k]
		sort.SliceStable(idx, func(a, b int) bool { return ops[idx[a]].Call < ops[idx[b]].Call })
		var last string // last acknowledged register value ("" = nil)
		var pending []string
		var lo, hi int64 // counter bounds
		counter, finalSeen := false, false
		for _, i := range idx {
			o := ops[i]
			pos := indexOf(o.Keys, k)
			switch o.Kind {
			case history.RoutingSet, history.RoutingEvalSet:
				switch {
				case o.Acked():
					last, pending = o.Value, nil
				case !notExecuted(o.ErrKind):
					pending = append(pending, o.Value)
				}
			case history.RoutingIncr:
				counter = true
				switch {
				case o.Acked():
					judged++
					if o.Int < lo+1 || o.Int > hi+1 {
						stale++
						bad = append(bad, fmt.Sprintf("%s: INCR @%v answered %d, want %d..%d from the acknowledged increments", k, o.Call.Round(time.Millisecond), o.Int, lo+1, hi+1))
					}
					lo, hi = o.Int, o.Int
				case !notExecuted(o.ErrKind):
					hi++
				}
			case history.RoutingGet, history.RoutingEvalGet:
				if !o.Acked() {
					continue
				}
				finalSeen = finalSeen || o.Final
				judged++
				if counter {
					if o.Int < lo || o.Int > hi {
						lost++
						bad = append(bad, fmt.Sprintf("%s: read %d @%v (final %v), want %d..%d acknowledged increments", k, o.Int, o.Call.Round(time.Millisecond), o.Final, lo, hi))
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
					lost++
				} else {
					stale++
				}
				bad = append(bad, fmt.Sprintf("%s: read %s @%v (final %v), want the last acknowledged write %s", k, show(got), o.Call.Round(time.Millisecond), o.Final, show(last)))
				last, pending = got, nil
			}
		}
		if !finalSeen {
			unread++
		}
	}
	if stale+lost > 0 {
		return fail(name, strings.Join(first(bad, 6), "\n"), "%d stale reads and %d lost acknowledged writes over %d keys", stale, lost, len(keys))
	}
	if unread > 0 {
		return unknown(name, "%d of %d keys were never read back at the end", unread, len(keys))
	}
	return pass(name, "%d keys, %d acknowledged operations, %d reads judged: every read returned the last acknowledged write", len(keys), acked, judged)
}

// CounterTally is one counter's accounting in RoutingCounters.
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

// CounterTallies tallies every counter of a RoutingCounters history, by key.
func CounterTallies(ops []history.RoutingOp) []CounterTally {
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
			if o.Acked() && o.Kind == history.RoutingGet {
				t.Final, t.Read = o.Int, true
			}
		case o.Kind != history.RoutingIncr && o.Kind != history.RoutingEvalIncr:
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

// RoutingCounters is the routing row's exact check of non-idempotent writes
// (spec 000 §Conformance, Routing; issue 12 §1): every counter, written only
// by INCR and a counting script, ends between its acknowledged increments
// and its acknowledged plus unknown-outcome increments. Below is a lost
// acknowledged write; above is a write applied twice — a re-send after a
// timeout — which every caller saw succeed once. A history with fewer than
// minAcked acknowledged or minUnknown unknown-outcome increments is unknown:
// without timeouts the retry paths never ran.
func RoutingCounters(ops []history.RoutingOp, minAcked, minUnknown int64) Result {
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
		return fail(name, strings.Join(first(bad, 6), "\n"), "%d of %d counters applied writes twice, %d lost acknowledged writes (%d acknowledged, %d unknown-outcome increments)", over, len(tallies), under, acked, unknownOps)
	}
	switch {
	case unread > 0:
		return unknown(name, "%d of %d counters were never read back", unread, len(tallies))
	case acked < minAcked:
		return unknown(name, "only %d acknowledged increments, need %d", acked, minAcked)
	case unknownOps < minUnknown:
		return unknown(name, "only %d increments timed out, need %d: the retry paths did not run", unknownOps, minUnknown)
	}
	return pass(name, "%d counters, %d acknowledged and %d unknown-outcome increments: every final value within [acknowledged, acknowledged + unknown]", len(tallies), acked, unknownOps)
}

// RoutingOutcomes turns the non-final operations into loud outcomes for
// NoErrors.
func RoutingOutcomes(ops []history.RoutingOp) []history.OpOutcome {
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
func StaleRead(ops []history.RoutingOp) ([]history.RoutingOp, bool) {
	out := append([]history.RoutingOp(nil), ops...)
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
		case history.RoutingSet, history.RoutingEvalSet:
			if last[k] != "" && last[k] != o.Value {
				prev[k] = last[k]
			}
			last[k] = o.Value
		case history.RoutingGet, history.RoutingEvalGet:
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

// RoutingOnlyUnknown is the errors column of the routing row under latency:
// the only errors that reach the caller are unknown outcomes (a timeout, a
// broken connection) — never a redirect, which the call path must absorb,
// nor any other refusal. minOps non-final operations are needed.
func RoutingOnlyUnknown(ops []history.RoutingOp, minOps int) Result {
	const name = "routing-only-unknown"
	var kept []history.OpOutcome
	timeouts := 0
	for _, o := range RoutingOutcomes(ops) {
		if o.ErrKind == "network" {
			timeouts++
			continue
		}
		kept = append(kept, o)
	}
	if len(kept)+timeouts < minOps {
		return unknown(name, "only %d operations recorded, need %d", len(kept)+timeouts, minOps)
	}
	r := NoErrors(kept, 0)
	r.Checker = name
	if r.Status == Pass {
		r.Message = fmt.Sprintf("%d operations: %d timed out (outcome unknown), no other error", len(kept)+timeouts, timeouts)
	}
	return r
}
