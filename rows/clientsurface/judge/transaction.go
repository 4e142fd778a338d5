package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// TxOp is one recorded transaction MULTI; INCR {p}a; INCR {p}b; EXEC, as
// its caller saw it: committed with EXEC's two replies (A, B), committed
// without replies (Empty: the caller took an EXEC it could not read as
// success), or failed (ErrKind, Err).
type TxOp struct {
	Pair string
	Slot int
	A, B int64
	// Empty: the caller counted the transaction as committed but had no
	// reply of its commands.
	Empty bool
	// ErrKind is the error code of the failure ("EXECABORT", "MOVED",
	// ...), "network" for a failed round trip, "" for a commit.
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}

// Committed says the caller was told the transaction committed.
func (o TxOp) Committed() bool { return o.ErrKind == "" }

// TxFinal is one pair read back after the run by a correct pool.
type TxFinal struct {
	Pair string
	// A and B are the raw values ("" for nil).
	A, B string
	Read bool
	Err  string
}

// TxRun is one path's transaction workload: one writer per pair, one
// transaction after another.
type TxRun struct {
	Path   string
	Ops    []TxOp
	Finals []TxFinal
	Faults []FaultSpan
	MinTx  int
	// Bound is how long a transaction may take to succeed, re-sends
	// included.
	Bound time.Duration
}

func (r TxRun) premise() string {
	if len(r.Ops) < r.MinTx {
		return fmt.Sprintf("only %d transactions, need %d", len(r.Ops), r.MinTx)
	}
	calls := make([]slotCall, len(r.Ops))
	for i, o := range r.Ops {
		calls[i] = slotCall{o.Slot, o.Call, o.Return}
	}
	return faultsMet(r.Faults, calls, "transaction")
}

// TxAllOrNothing is the transaction requirement's silently-wrong checker
// (spec 000 §Conformance, Routing: MOVED/ASK/TRYAGAIN; Locality contract):
// a transaction INCRs both keys of its pair or neither. Per pair, n counts
// the transactions that ran: a committed one bounds it below, one whose
// outcome is unknown (a failed round trip) above, and one refused by the
// server (EXECABORT, a redirect) not at all. EXEC's replies must be equal
// and n+1; at the read-back a must equal b (never half applied) and lie in
// the bounds: below, an acknowledged EXEC is not reflected; above, a
// transaction reported failed ran. Premises: enough transactions, traffic
// on the faulted slots during each fault, every pair read back.
func txAllOrNothing(r TxRun) Verdict {
	const name = "tx-all-or-nothing"
	if why := r.premise(); why != "" {
		return result(name, Unknown, why, "")
	}
	byPair := map[string][]TxOp{}
	for _, o := range r.Ops {
		byPair[o.Pair] = append(byPair[o.Pair], o)
	}
	finals := map[string]TxFinal{}
	for _, f := range r.Finals {
		finals[f.Pair] = f
	}
	pairs := make([]string, 0, len(byPair))
	for p := range byPair {
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	var bad []string
	half, replies, lost, phantom, committed := 0, 0, 0, 0, 0
	for _, p := range pairs {
		ops := byPair[p]
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
		var lo, hi int64
		for _, o := range ops {
			switch {
			case o.Committed() && o.Empty:
				committed++
				lo, hi = lo+1, hi+1
			case o.Committed():
				committed++
				switch {
				case o.A != o.B:
					half++
					bad = append(bad, fmt.Sprintf("%s: EXEC answered a=%d b=%d: half applied", p, o.A, o.B))
				case o.A < lo+1 || o.A > hi+1:
					replies++
					bad = append(bad, fmt.Sprintf("%s: EXEC answered %d, want %d..%d: a transaction ran more (or less) often than its caller was told", p, o.A, lo+1, hi+1))
				}
				lo, hi = o.A, o.A
			case o.ErrKind == "network":
				hi++
			}
		}
		f, ok := finals[p]
		if !ok || !f.Read {
			return result(name, Unknown, fmt.Sprintf("pair %s was not read back (%s)", p, f.Err), "")
		}
		a, errA := parseInt(f.A)
		b, errB := parseInt(f.B)
		switch {
		case errA != nil || errB != nil || a != b:
			half++
			bad = append(bad, fmt.Sprintf("%s: half applied: reads back a=%q b=%q", p, f.A, f.B))
		case a < lo:
			lost++
			bad = append(bad, fmt.Sprintf("%s: reads back %d, but %d transactions were acknowledged: an acknowledged EXEC is not reflected", p, a, lo))
		case a > hi:
			phantom++
			bad = append(bad, fmt.Sprintf("%s: reads back %d, but at most %d transactions ran by what its caller was told", p, a, hi))
		}
	}
	if len(bad) > 0 {
		return result(name, Fail, fmt.Sprintf("%d half-applied pairs or replies, %d EXEC replies out of their bounds, %d pairs missing acknowledged transactions, %d pairs with transactions reported failed that ran, over %d pairs",
			half, replies, lost, phantom, len(pairs)), strings.Join(firstN(bad, 6), "\n"))
	}
	return result(name, Pass, fmt.Sprintf("%d pairs, %d transactions (%d committed): every one all or nothing, every acknowledged EXEC reflected", len(pairs), len(r.Ops), committed), "")
}

// TxCompleted is the transaction requirement's errors checker: every
// transaction succeeded within Bound — the path re-sent it through the
// slot's MOVED/ASK/TRYAGAIN and the failover — and none was counted as
// committed without EXEC's replies (an aborted EXEC taken for an empty
// success is a failure nobody was told of). Premises as TxAllOrNothing's.
func txCompleted(r TxRun) Verdict {
	const name = "tx-completed"
	if why := r.premise(); why != "" {
		return result(name, Unknown, why, "")
	}
	kinds := map[string]int{}
	var bad []string
	failed, silent, slow := 0, 0, 0
	var longest time.Duration
	for _, o := range r.Ops {
		d := o.Return - o.Call
		longest = max(longest, d)
		switch {
		case o.Committed() && o.Empty:
			silent++
			bad = append(bad, fmt.Sprintf("%s @%v: EXEC taken for success without its replies", o.Pair, o.Call.Round(time.Millisecond)))
		case !o.Committed():
			failed++
			kinds[o.ErrKind]++
			bad = append(bad, fmt.Sprintf("%s @%v: %s", o.Pair, o.Call.Round(time.Millisecond), o.Err))
		case d > r.Bound:
			slow++
			bad = append(bad, fmt.Sprintf("%s @%v: committed after %v, bound %v", o.Pair, o.Call.Round(time.Millisecond), d.Round(time.Millisecond), r.Bound))
		}
	}
	if len(bad) > 0 {
		return result(name, Fail, fmt.Sprintf("%d transactions failed (%s), %d taken for success without EXEC's replies, %d slower than %v, of %d",
			failed, kindList(kinds), silent, slow, r.Bound, len(r.Ops)), strings.Join(firstN(bad, 6), "\n"))
	}
	return result(name, Pass, fmt.Sprintf("%d transactions, every one committed within %v (longest %v)", len(r.Ops), r.Bound, longest.Round(time.Millisecond)), "")
}
