package model

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/impl/fencing/protocol"
	"github.com/slotgate/slotgate/impl/gate"
)

// Invariant names, spelled as the spec's TLA+ model and
// protocol.MigrationMutant.Trips spell them.
const (
	InvSingleAuthority = "Inv_SingleAuthority" // T1
	InvMonotonic       = "Inv_Monotonic"       // T2
	InvSlotRulesSafe   = "Inv_SlotRulesSafe"   // T3
)

// Invariant is a named state predicate.
type Invariant struct {
	Name string
	// Theorem is the spec's theorem the invariant encodes.
	Theorem string
	Holds   func(m *Model, s State) bool
}

// Invariants are the safety properties every reachable state must satisfy
// (spec 000 §Safety theorems).
var Invariants = []Invariant{
	{
		// T1: at most one live lease per session across both keyspaces (each
		// keyspace holds one lease key per session, so "at most one" is "not
		// both").
		Name: InvSingleAuthority, Theorem: "T1 single authority",
		Holds: func(_ *Model, s State) bool { return !(s.Old.Live() && s.New.Live()) },
	},
	{
		// T2 as a single-run safety invariant over the history variables:
		// every generation issued was above every one issued before.
		Name: InvMonotonic, Theorem: "T2 generation monotonicity",
		Holds: func(_ *Model, s State) bool { return s.MonoOK },
	},
	{
		// T3: no A/B script ran and no door opened against the C-gate
		// (SlotOK), and outside disabled mode the whole fleet runs the
		// slot-clean C scripts with no old-keyspace authority left.
		Name: InvSlotRulesSafe, Theorem: "T3 slot-rules safety",
		Holds: func(m *Model, s State) bool {
			if !s.SlotOK {
				return false
			}
			return s.Gate.Mode == gate.Disabled || (s.allAt(m.cfg.Pods, protocol.C) && !s.Old.Live())
		},
	},
}

// Step is one step of a trace: the action and the state it led to.
type Step struct {
	Action Action
	Effect Effect
	State  State
}

// Trace is a behaviour from Init: the shortest one BFS found to its last
// state.
type Trace struct {
	Init  State
	Steps []Step
}

// Len is the number of actions in the trace.
func (t Trace) Len() int { return len(t.Steps) }

// Last is the trace's final state.
func (t Trace) Last() State {
	if len(t.Steps) == 0 {
		return t.Init
	}
	return t.Steps[len(t.Steps)-1].State
}

// Format renders the trace one numbered step per line.
func (m *Model) FormatTrace(t Trace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  0. Init → %s\n", m.Format(t.Init))
	for i, st := range t.Steps {
		fmt.Fprintf(&b, "%3d. %s → %s\n", i+1, st.Action, m.Format(st.State))
	}
	return b.String()
}

// Violation is an invariant broken by a reachable state, with the shortest
// trace to such a state.
type Violation struct {
	Invariant string
	Trace     Trace
}

// Result is one exhaustive exploration.
type Result struct {
	Config Config
	// Generated counts the initial state plus every successor computed
	// (duplicates included), as TLC's "states generated"; Distinct is the
	// size of the visited set, as TLC's "distinct states found".
	Generated, Distinct int
	// Depth is the length of the longest shortest path (BFS levels - 1).
	Depth int
	// Terminal counts states with no state-changing successor.
	Terminal int
	// Violations holds, per invariant that broke, the shortest
	// counterexample, in Invariants order.
	Violations []Violation
}

// Violated returns the violation of invariant name, if any.
func (r Result) Violated(name string) (Violation, bool) {
	for _, v := range r.Violations {
		if v.Invariant == name {
			return v, true
		}
	}
	return Violation{}, false
}

type parent struct {
	from   State
	action Action
	effect Effect
	depth  int
}

// Explore runs breadth-first search over every reachable state, checking
// every invariant in every state. Violating states are not expanded (as TLC
// stops a behaviour at its first error); BFS order makes each recorded
// counterexample a shortest one.
func (m *Model) Explore() Result {
	res := Result{Config: m.cfg, Generated: 1}
	init := m.Init()
	seen := map[State]parent{init: {depth: 0}}
	found := map[string]bool{}
	queue := []State{init}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		d := seen[s].depth
		res.Depth = max(res.Depth, d)
		bad := false
		for _, inv := range Invariants {
			if inv.Holds(m, s) {
				continue
			}
			bad = true
			if !found[inv.Name] {
				found[inv.Name] = true
				res.Violations = append(res.Violations, Violation{Invariant: inv.Name, Trace: m.traceTo(seen, s)})
			}
		}
		if bad {
			continue
		}
		succ := m.Successors(s)
		if len(succ) == 0 {
			res.Terminal++
		}
		for _, t := range succ {
			res.Generated++
			if _, ok := seen[t.Next]; ok {
				continue
			}
			seen[t.Next] = parent{from: s, action: t.Action, effect: t.Effect, depth: d + 1}
			queue = append(queue, t.Next)
		}
	}
	res.Distinct = len(seen)
	// Report violations in Invariants order, whatever order BFS met them.
	ordered := res.Violations[:0:0]
	for _, inv := range Invariants {
		if v, ok := res.Violated(inv.Name); ok {
			ordered = append(ordered, v)
		}
	}
	res.Violations = ordered
	return res
}

// Graph is the reachable state space in BFS order, each state with the
// transition that first reached it, so Trace(i) is a shortest trace.
type Graph struct {
	m *Model
	// States lists every reachable state in BFS order; States[0] is Init.
	States []State
	parent []int
	via    []Transition
}

// Reachable explores every reachable state (no invariant checks) and returns
// the BFS graph the replay's exhaustive transition check walks.
func (m *Model) Reachable() *Graph {
	g := &Graph{m: m, States: []State{m.Init()}, parent: []int{-1}, via: []Transition{{}}}
	index := map[State]int{g.States[0]: 0}
	for i := 0; i < len(g.States); i++ {
		for _, t := range m.Successors(g.States[i]) {
			if _, ok := index[t.Next]; !ok {
				index[t.Next] = len(g.States)
				g.States = append(g.States, t.Next)
				g.parent = append(g.parent, i)
				g.via = append(g.via, t)
			}
		}
	}
	return g
}

// Trace is a shortest trace from Init to States[i].
func (g *Graph) Trace(i int) Trace {
	var steps []Step
	for ; g.parent[i] >= 0; i = g.parent[i] {
		t := g.via[i]
		steps = append(steps, Step{Action: t.Action, Effect: t.Effect, State: t.Next})
	}
	for a, b := 0, len(steps)-1; a < b; a, b = a+1, b-1 {
		steps[a], steps[b] = steps[b], steps[a]
	}
	return Trace{Init: g.m.Init(), Steps: steps}
}

func (m *Model) traceTo(seen map[State]parent, s State) Trace {
	var steps []Step
	for cur := s; ; {
		p := seen[cur]
		if p.depth == 0 {
			break
		}
		steps = append(steps, Step{Action: p.action, Effect: p.effect, State: cur})
		cur = p.from
	}
	for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
		steps[i], steps[j] = steps[j], steps[i]
	}
	return Trace{Init: m.Init(), Steps: steps}
}
