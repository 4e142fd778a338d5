package check

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/slotgate/slotgate/history"
)

// fencingState is the sequential specification's state for one session: the
// live lease (owner, gen) and the counter. TTL expiry is not modelled: the
// scenarios that use this model hold leases far shorter than their TTL.
type fencingState struct {
	owner   string
	gen     int64
	counter int64
}

// fencingStep is spec 000 §Per-phase operation table, C column, as a pure
// function. It returns every state the operation may leave behind (more than
// one only when the outcome is unknown).
func fencingStep(s fencingState, op history.FencingOp) []fencingState {
	held := s.owner != ""
	match := held && s.owner == op.Owner && s.gen == op.Gen
	var after fencingState
	var legal bool
	switch op.Kind {
	case history.OpAcquire:
		after = s
		if !held {
			after = fencingState{owner: op.Owner, gen: s.counter + 1, counter: s.counter + 1}
			legal = op.OK && op.Gen == s.counter+1
		} else {
			legal = !op.OK && op.HolderGen == s.gen && op.HolderOwner == s.owner
		}
	case history.OpRenew:
		after, legal = s, op.OK == match
	case history.OpRelease:
		after = s
		if match {
			after = fencingState{counter: s.counter}
		}
		legal = op.OK == match
	case history.OpKnown:
		after, legal = s, op.Gen == s.counter
	case history.OpValidate:
		want := -1
		switch {
		case match:
			want = 1
		case op.Gen < s.counter:
			want = 0
		}
		after, legal = s, op.Verdict == want
	}
	if op.Unknown {
		if after == s {
			return []fencingState{s}
		}
		return []fencingState{s, after}
	}
	if !legal {
		return nil
	}
	return []fencingState{after}
}

// FencingModel is the directory's sequential specification for porcupine,
// partitioned by session (sessions are independent: per-session keys).
var FencingModel = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		bySession := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range ops {
			s := op.Input.(history.FencingOp).Session
			if _, ok := bySession[s]; !ok {
				order = append(order, s)
			}
			bySession[s] = append(bySession[s], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, s := range order {
			out = append(out, bySession[s])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{fencingState{}} },
	Step: func(state, input, _ interface{}) []interface{} {
		next := fencingStep(state.(fencingState), input.(history.FencingOp))
		out := make([]interface{}, len(next))
		for i, n := range next {
			out[i] = n
		}
		return out
	},
	DescribeOperation: func(input, _ interface{}) string { return input.(history.FencingOp).String() },
	DescribeState: func(state interface{}) string {
		s := state.(fencingState)
		return fmt.Sprintf("lease=%s@%d counter=%d", s.owner, s.gen, s.counter)
	},
}

// FencingLinearizable checks a directory history against the sequential
// specification: single authority, generation +1 per acquisition, guarded
// renew/release and the fence, all at once and under real concurrency.
func FencingLinearizable(recorded []history.FencingOp, timeout time.Duration) Result {
	const name = "fencing-linearizable"
	if len(recorded) == 0 {
		return unknown(name, "empty history")
	}
	ops := make([]porcupine.Operation, len(recorded))
	for i, h := range recorded {
		ret := int64(h.Return)
		if h.Unknown {
			ret = math.MaxInt64
		}
		ops[i] = porcupine.Operation{ClientId: h.Client, Input: h, Output: nil, Call: int64(h.Call), Return: ret}
	}
	res := porcupine.CheckOperationsTimeout(FencingModel.ToModel(), ops, timeout)
	switch res {
	case porcupine.Ok:
		return pass(name, "%d operations linearizable against the C-phase specification", len(recorded))
	case porcupine.Unknown:
		return unknown(name, "linearizability check timed out after %v on %d operations", timeout, len(recorded))
	}
	return fail(name, "", "history of %d operations is not linearizable against the C-phase specification", len(recorded))
}

// FencingCounterexample returns the operations of the first session whose
// own history is not linearizable against the specification (sessions are
// independent, as FencingModel partitions them): the smallest history a
// reviewer can read as a per-session lease and generation timeline. It
// returns nil when every session is linearizable or undecided within
// timeout.
func FencingCounterexample(recorded []history.FencingOp, timeout time.Duration) []history.FencingOp {
	bySession := map[string][]history.FencingOp{}
	var order []string
	for _, op := range recorded {
		if _, ok := bySession[op.Session]; !ok {
			order = append(order, op.Session)
		}
		bySession[op.Session] = append(bySession[op.Session], op)
	}
	for _, s := range order {
		ops := bySession[s]
		in := make([]porcupine.Operation, len(ops))
		for i, h := range ops {
			ret := int64(h.Return)
			if h.Unknown {
				ret = math.MaxInt64 // may take effect any time after the call
			}
			in[i] = porcupine.Operation{ClientId: h.Client, Input: h, Call: int64(h.Call), Return: ret}
		}
		if porcupine.CheckOperationsTimeout(FencingModel.ToModel(), in, timeout) == porcupine.Illegal {
			return ops
		}
	}
	return nil
}

// SingleAuthority scans successful acquires and releases per session in
// return order and reports two owners holding one session at once (T1,
// spec 000 §Safety theorems). It needs no model, so its counterexample reads
// plainly; TTL expiry is assumed not to occur within the history. A release
// whose outcome is unknown ends the holder's known tenure (it may have
// happened), so only provable double ownership is reported.
func SingleAuthority(ops []history.FencingOp) Result {
	const name = "single-authority"
	events := ByEffect(ops)
	holder := map[string]history.FencingOp{}
	var bad []string
	acquires := 0
	for _, op := range events {
		if op.Unknown && op.Kind == history.OpRelease {
			// It may have taken effect: a later acquire by another owner
			// is then legal, so the holder is no longer known.
			if h, ok := holder[op.Session]; ok && h.Owner == op.Owner && h.Gen == op.Gen {
				delete(holder, op.Session)
			}
		}
		if op.Unknown || !op.OK {
			continue
		}
		switch op.Kind {
		case history.OpAcquire:
			acquires++
			if h, ok := holder[op.Session]; ok && h.Owner != op.Owner {
				bad = append(bad, fmt.Sprintf("%v\n  while held by %v", op, h))
			}
			holder[op.Session] = op
		case history.OpRelease:
			if h, ok := holder[op.Session]; ok && h.Owner == op.Owner && h.Gen == op.Gen {
				delete(holder, op.Session)
			}
		}
	}
	if acquires == 0 {
		return unknown(name, "no successful acquire in the history")
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d acquisitions took a session another owner held (two live leases)", len(bad))
	}
	return pass(name, "%d acquisitions, never two owners of one session", acquires)
}

// ByEffect orders ops by when they took effect as far as a scan can tell:
// their return, except an unknown release, which may have taken effect at
// its call (its holder's tenure cannot be proved past it).
func ByEffect(ops []history.FencingOp) []history.FencingOp {
	at := func(o history.FencingOp) time.Duration {
		if o.Unknown && o.Kind == history.OpRelease {
			return o.Call
		}
		return o.Return
	}
	out := append([]history.FencingOp(nil), ops...)
	sort.SliceStable(out, func(i, j int) bool { return at(out[i]) < at(out[j]) })
	return out
}

// GenerationsIncrease is T2 (spec 000 §Safety theorems): per session, the
// generations issued to successful acquires strictly increase and none is
// issued twice; with stepOne, each is exactly the previous + 1 (the C
// acquire's INCR).
func GenerationsIncrease(ops []history.FencingOp, stepOne bool) Result {
	const name = "generations-increase"
	last := map[string]history.FencingOp{}
	seen := map[string]map[int64]history.FencingOp{}
	var bad []string
	n := 0
	for _, op := range byReturn(ops) {
		if op.Kind != history.OpAcquire || !op.OK || op.Unknown {
			continue
		}
		n++
		if seen[op.Session] == nil {
			seen[op.Session] = map[int64]history.FencingOp{}
		}
		if prev, dup := seen[op.Session][op.Gen]; dup {
			bad = append(bad, fmt.Sprintf("generation %d issued twice:\n  %v\n  %v", op.Gen, prev, op))
		} else if prev, ok := last[op.Session]; ok && op.Gen <= prev.Gen {
			bad = append(bad, fmt.Sprintf("generation went backwards:\n  %v\n  %v", prev, op))
		} else if ok && stepOne && op.Gen != prev.Gen+1 {
			bad = append(bad, fmt.Sprintf("generation skipped from %d to %d:\n  %v", prev.Gen, op.Gen, op))
		}
		seen[op.Session][op.Gen] = op
		last[op.Session] = op
	}
	if n == 0 {
		return unknown(name, "no successful acquire in the history")
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d generation violations in %d acquisitions", len(bad), n)
	}
	return pass(name, "%d acquisitions over %d sessions, generations strictly increasing", n, len(last))
}

// GuardsHold checks that renew and release succeed only for the live
// lease's owner at its generation: a stale or foreign call must be a no-op
// (spec 000 §Per-phase operation table: "owner+gen guarded"). It needs the
// history's acquire/release successes to know the live lease at each call;
// calls concurrent with a change of holder are skipped, not guessed.
func GuardsHold(ops []history.FencingOp) Result {
	const name = "guards-hold"
	type interval struct {
		owner      string
		gen        int64
		start, end time.Duration // [acquire call, release return]
	}
	leases := map[string][]*interval{}
	for _, op := range byReturn(ops) {
		if op.Unknown || !op.OK {
			continue
		}
		switch op.Kind {
		case history.OpAcquire:
			leases[op.Session] = append(leases[op.Session], &interval{owner: op.Owner, gen: op.Gen, start: op.Call, end: time.Duration(math.MaxInt64)})
		case history.OpRelease:
			for _, l := range leases[op.Session] {
				if l.owner == op.Owner && l.gen == op.Gen && l.end == time.Duration(math.MaxInt64) {
					l.end = op.Return
				}
			}
		}
	}
	var bad []string
	checked := 0
	for _, op := range ops {
		if op.Unknown || (op.Kind != history.OpRenew && op.Kind != history.OpRelease) {
			continue
		}
		// Is the caller's (owner, gen) certainly not live during the call?
		foreign := true
		for _, l := range leases[op.Session] {
			if l.owner == op.Owner && l.gen == op.Gen && l.start <= op.Return && op.Call <= l.end {
				foreign = false
			}
		}
		if !foreign {
			continue
		}
		checked++
		if op.OK {
			bad = append(bad, fmt.Sprintf("%v: succeeded though owner %s never held generation %d then", op, op.Owner, op.Gen))
		}
	}
	if checked == 0 {
		return unknown(name, "no stale or foreign renew/release in the history to test the guard")
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d of %d stale or foreign renew/release calls took effect", len(bad), checked)
	}
	return pass(name, "%d stale or foreign renew/release calls, all refused", checked)
}

func byReturn(ops []history.FencingOp) []history.FencingOp {
	out := append([]history.FencingOp(nil), ops...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Return < out[j].Return })
	return out
}

// FencingInvariants is the C-phase directory's silently-wrong checker, as
// every row that drives the directory applies it: the history is
// linearizable against the specification, and the plain-language scans
// (T1, T2 with +1 steps, guards) give a readable counterexample when not.
func FencingInvariants(ops []history.FencingOp) Result {
	return All("fencing-invariants",
		FencingLinearizable(ops, 30*time.Second),
		SingleAuthority(ops),
		GenerationsIncrease(ops, true),
		GuardsHold(ops),
	)
}
