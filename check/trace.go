package check

import "fmt"

// The trace conformance of the fencing migration (spec 000 §The protocol,
// §Per-phase operation table): the suite replays the model's actions on the
// real scripts and records where they first disagreed; the checkers here
// turn those records into the verdicts, so `slotgate check --from` replays
// them (issue 16). The comparison with the model is the recording — the
// model (package model) runs in the suite beside the servers.

// TraceDivergence is the first step where a replay and the model disagreed.
type TraceDivergence struct {
	// Steps is the length of the trace that reached it.
	Steps int
	// What says what differed ("after acquire the model has …, the node …").
	What string
	// Trace is the trace rendered for a counterexample ("" when not shown).
	Trace string
	// Errored: the call failed rather than answered differently — the loud
	// column's business, no divergence.
	Errored bool
}

// TraceReplay is the write actions' replay: every action sequence, the
// random walks and every keyspace transition, and the shortest divergence.
type TraceReplay struct {
	Steps, Transitions, MinSteps int
	Divergence                   *TraceDivergence
}

// TraceConformance fails when the real keyspace diverged from the model
// anywhere in the replay, and is unknown when fewer than MinSteps steps
// were replayed.
func TraceConformance(t TraceReplay) Result {
	const name = "trace-conformance"
	switch d := t.Divergence; {
	case d != nil:
		return fail(name, d.Trace, "the real keyspace diverged from the model after %d steps: %s", d.Steps, d.What)
	case t.Steps < t.MinSteps:
		return unknown(name, "only %d steps replayed, want at least %d", t.Steps, t.MinSteps)
	}
	return pass(name, "model and real scripts agreed after every one of %d replayed steps and %d transition checks", t.Steps, t.Transitions)
}

// ScriptReplay is a negative control's replay: mutant scripts (Scripts
// names them: "M1", "renew-ignores-generation C") against the correct
// model. Walked says the random walks ran against them too, Walk where
// they diverged.
type ScriptReplay struct {
	Scripts    string
	Divergence *TraceDivergence
	Walked     bool
	Walk       *TraceDivergence
}

// ScriptsDiverge is the control's verdict: the mutant scripts must diverge
// from the correct model (fail = caught).
func ScriptsDiverge(s ScriptReplay) Result {
	const name = "scripts-diverge"
	r := pass(name, "the correct model and the %s scripts agree on every transition", s.Scripts)
	if d := s.Divergence; d != nil {
		r = fail(name, d.Trace, "diverged after %d steps: %s", d.Steps, d.What)
	}
	if s.Walked {
		if s.Walk != nil {
			r.Message += fmt.Sprintf("; the random walks caught it too, after %d steps", s.Walk.Steps)
		} else {
			r.Message += "; the random walks did not reach it"
		}
	}
	return r
}

// ReadReplay is the read actions' replay: every phase's real lookup and
// validate on every reachable keyspace, compared with the model's read
// rules, and the model's read-side invariant over the reachable states.
type ReadReplay struct {
	Calls, States int
	// Invariant names the model's read-side invariant; Broken is its
	// violation (What: why, Trace: the trace), nil when it holds.
	Invariant  string
	Divergence *TraceDivergence
	Broken     *TraceDivergence
	// Mutants are the read mutants' own replays, in order: each mutant's
	// model rule against its own scripts must agree (one switch).
	Mutants []ReadMutantReplay
}

// ReadMutantReplay is one read mutant's replays: its scripts against the
// correct rules (Divergence, which must exist), its own model rule against
// its scripts (Same over SameCalls calls, which must not), and the model's
// read-side invariant under its rule (Killed, its violation).
type ReadMutantReplay struct {
	Mutant     string
	Divergence *TraceDivergence
	SameCalls  int
	Same       *TraceDivergence
	Killed     *TraceDivergence
}

// ReadConformance fails when a real read script diverged from the model's
// read rule, the model's read-side invariant broke, or a mutant's own rule
// disagreed with its scripts (the one-switch premise of the controls); a
// call that errored, or fewer than 1000 read calls, is unknown.
func ReadConformance(r ReadReplay) Result {
	const name = "read-conformance"
	res := pass(name, "%d real read calls agree with the model's read rules; %s holds in all %d reachable states", r.Calls, r.Invariant, r.States)
	switch d := r.Divergence; {
	case d != nil && d.Errored:
		res = unknown(name, "a read call errored during the replay: %s", d.What)
	case d != nil:
		res = fail(name, d.Trace, "a real read script diverged from the model's read rule: %s", d.What)
	case r.Broken != nil:
		res = fail(name, r.Broken.Trace, "%s broken: %s", r.Invariant, r.Broken.What)
	case r.Calls < 1000:
		res = unknown(name, "only %d read calls replayed", r.Calls)
	}
	for _, m := range r.Mutants {
		switch sd := m.Same; {
		case sd != nil && sd.Errored && res.Status == Pass:
			res = unknown(name, "the %s replay errored: %s", m.Mutant, sd.What)
		case sd != nil && !sd.Errored && res.Status != Fail:
			res = fail(name, "", "the %s model rule and the %s scripts disagree: %s", m.Mutant, m.Mutant, sd.What)
		}
	}
	return res
}

// ReadScriptsDiverge is a read mutant control's verdict: its real scripts
// against the correct read rules must diverge (fail = caught); an error is
// not the mutant caught. invariant names the model's read-side invariant.
func ReadScriptsDiverge(m ReadMutantReplay, invariant string) Result {
	const name = "read-scripts-diverge"
	r := pass(name, "the correct read rules and the %s scripts agree on every keyspace", m.Mutant)
	switch d := m.Divergence; {
	case d != nil && d.Errored:
		r = unknown(name, "errored, not caught: %s", d.What)
	case d != nil:
		r = fail(name, "", "diverged: %s (shortest trace to that keyspace: %d steps)", d.What, d.Steps)
	}
	same := "agree"
	if m.Same != nil {
		same = "DIVERGED: " + m.Same.What
	}
	r.Message += fmt.Sprintf("; the %s model rule = the %s scripts over %d calls (%s)", m.Mutant, m.Mutant, m.SameCalls, same)
	if k := m.Killed; k != nil {
		r.Message += fmt.Sprintf("; in the model %s kills it after %d steps: %s", invariant, k.Steps, k.What)
	}
	return r
}
