package judge

import (
	"fmt"
	"sort"
	"strings"
)

// ConnLeakChecker names ConnLeak's verdicts.
const ConnLeakChecker = "connection-accounting"

// ConnSample is one count of a client's connections on one node (CLIENT
// LIST lines whose name is the client's CLIENT SETNAME).
type ConnSample struct {
	// Phase is "before", "churned" (right after a churn round) or
	// "settled" (after the quiet settle that follows it).
	Phase string
	Round int
	Node  string
	Conns int
}

// Sample phases.
const (
	PhaseBefore  = "before"
	PhaseChurned = "churned"
	PhaseSettled = "settled"
)

// ConnRun is what ConnLeak judges: one client's connection counts over
// the run and what the churn did.
type ConnRun struct {
	Samples []ConnSample
	// Bound is the most connections the pool may keep to one node, from
	// its own configuration (its PoolSize).
	Bound int
	// Rounds of churn the run completed; Calls, Moved (calls that met a
	// slot that had moved), Killed (connections the harness killed) and
	// Failovers are what they drove. Refreshes is how many topology
	// changes the client had to follow (slot moves + failovers).
	Rounds, Calls, Killed, Failovers, Refreshes int
	// MinRounds, MinCalls are the churn a pass needs.
	MinRounds, MinCalls int
}

// ConnLeak judges spec 000 §Client Architecture (the command pool's
// connections are the relay's to bound): on every node, at every sample —
// before, right after each churn round (many concurrent calls, a slot
// move, forced disconnects, a failover) and after each quiet settle — the
// client holds at most Bound connections, so its count does not grow
// with the topology refreshes it followed.
//
// Premises: the churn ran (MinRounds rounds, MinCalls calls, connections
// killed, at least one refresh) and the client held connections after
// every settle (a pool with none was not exercised). An exceeded bound is
// decisive whatever the premises.
func connLeak(r ConnRun) Verdict {
	v := Verdict{Checker: ConnLeakChecker}
	var over []string
	settled := map[int]int{} // round → total connections
	maxPer := map[string]int{}
	for _, s := range r.Samples {
		if s.Conns > r.Bound {
			over = append(over, fmt.Sprintf("%s round %d: %d connections on %s > bound %d", s.Phase, s.Round, s.Conns, s.Node, r.Bound))
		}
		if s.Phase == PhaseSettled {
			settled[s.Round] += s.Conns
		}
		maxPer[s.Node] = max(maxPer[s.Node], s.Conns)
	}
	rounds := make([]int, 0, len(settled))
	for rd := range settled {
		rounds = append(rounds, rd)
	}
	sort.Ints(rounds)
	var totals []string
	for _, rd := range rounds {
		totals = append(totals, fmt.Sprintf("%d", settled[rd]))
	}
	v.Observed = []string{fmt.Sprintf("%d rounds, %d calls, %d connections killed, %d failovers, %d topology refreshes; settled totals by round [%s]; most on one node %d (bound %d)",
		r.Rounds, r.Calls, r.Killed, r.Failovers, r.Refreshes, strings.Join(totals, " "), maxOf(maxPer), r.Bound)}
	if len(over) > 0 {
		v.Status = Fail
		v.Message = fmt.Sprintf("%d samples over the pool's bound of %d connections per node after %d refreshes: %s", len(over), r.Bound, r.Refreshes, over[0])
		v.Counterexample = strings.Join(head(over, 10), "\n")
		return v
	}
	switch {
	case r.Rounds < r.MinRounds || r.Calls < r.MinCalls:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: churn too small (%d rounds, %d calls; want %d, %d)", r.Rounds, r.Calls, r.MinRounds, r.MinCalls)
	case r.Killed == 0 || r.Refreshes == 0:
		v.Status, v.Message = Unknown, fmt.Sprintf("premise: no forced disconnect (%d killed) or no topology refresh (%d)", r.Killed, r.Refreshes)
	case len(rounds) < r.Rounds || anyZero(settled):
		v.Status, v.Message = Unknown, "premise: a settle sample is missing or found no connection of the client at all"
	default:
		v.Status = Pass
		v.Message = fmt.Sprintf("every node held at most %d of the bound %d connections at every sample over %d rounds (%d refreshes, %d connections killed)", maxOf(maxPer), r.Bound, r.Rounds, r.Refreshes, r.Killed)
	}
	return v
}

func maxOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n = max(n, v)
	}
	return n
}

func anyZero(m map[int]int) bool {
	for _, v := range m {
		if v == 0 {
			return true
		}
	}
	return false
}
