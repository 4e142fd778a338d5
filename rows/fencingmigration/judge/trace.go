package judge

import (
	"fmt"

	"github.com/slotgate/slotgate/check"
)

// The trace conformance of the fencing migration (spec 000 §The protocol,
// §Per-phase operation table): the suite replays the model's actions on the
// real scripts and records where they first disagreed; the checkers here
// turn those records into the verdicts, so `slotgate check --from` replays
// them. The comparison with the model is the recording — the
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

// traceConformance fails when the real keyspace diverged from the model
// anywhere in the replay, and is unknown when fewer than MinSteps steps
// were replayed.
func traceConformance(t TraceReplay) check.Result {
	const name = "trace-conformance"
	switch d := t.Divergence; {
	case d != nil:
		return check.Failf(name, d.Trace, "the real keyspace diverged from the model after %d steps: %s", d.Steps, d.What)
	case t.Steps < t.MinSteps:
		return check.Unknownf(name, "only %d steps replayed, want at least %d", t.Steps, t.MinSteps)
	}
	return check.Passf(name, "model and real scripts agreed after every one of %d replayed steps and %d transition checks", t.Steps, t.Transitions)
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

// scriptsDiverge is the control's verdict: the mutant scripts must diverge
// from the correct model (fail = caught). Premise, checked: the divergence
// is an answer that differs, not a call that failed (TraceDivergence's
// Errored) — an error is not the mutant caught (Unknown).
func scriptsDiverge(s ScriptReplay) check.Result {
	const name = "scripts-diverge"
	r := check.Passf(name, "the correct model and the %s scripts agree on every transition", s.Scripts)
	switch d := s.Divergence; {
	case d != nil && d.Errored:
		r = check.Unknownf(name, "errored, not caught: %s", d.What)
	case d != nil:
		r = check.Failf(name, d.Trace, "diverged after %d steps: %s", d.Steps, d.What)
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

// readConformance fails when a real read script diverged from the model's
// read rule, the model's read-side invariant broke, or a mutant's own rule
// disagreed with its scripts (the one-switch premise of the controls); a
// call that errored, or fewer than 1000 read calls, is unknown.
func readConformance(r ReadReplay) check.Result {
	const name = "read-conformance"
	res := check.Passf(name, "%d real read calls agree with the model's read rules; %s holds in all %d reachable states", r.Calls, r.Invariant, r.States)
	switch d := r.Divergence; {
	case d != nil && d.Errored:
		res = check.Unknownf(name, "a read call errored during the replay: %s", d.What)
	case d != nil:
		res = check.Failf(name, d.Trace, "a real read script diverged from the model's read rule: %s", d.What)
	case r.Broken != nil:
		res = check.Failf(name, r.Broken.Trace, "%s broken: %s", r.Invariant, r.Broken.What)
	case r.Calls < 1000:
		res = check.Unknownf(name, "only %d read calls replayed", r.Calls)
	}
	for _, m := range r.Mutants {
		switch sd := m.Same; {
		case sd != nil && sd.Errored && res.Status == check.Pass:
			res = check.Unknownf(name, "the %s replay errored: %s", m.Mutant, sd.What)
		case sd != nil && !sd.Errored && res.Status != check.Fail:
			res = check.Failf(name, "", "the %s model rule and the %s scripts disagree: %s", m.Mutant, m.Mutant, sd.What)
		}
	}
	return res
}

// readScriptsDiverge is a read mutant control's verdict: its real scripts
// against the correct read rules must diverge (fail = caught); an error is
// not the mutant caught. invariant names the model's read-side invariant.
func readScriptsDiverge(m ReadMutantReplay, invariant string) check.Result {
	const name = "read-scripts-diverge"
	r := check.Passf(name, "the correct read rules and the %s scripts agree on every keyspace", m.Mutant)
	switch d := m.Divergence; {
	case d != nil && d.Errored:
		r = check.Unknownf(name, "errored, not caught: %s", d.What)
	case d != nil:
		r = check.Failf(name, "", "diverged: %s (shortest trace to that keyspace: %d steps)", d.What, d.Steps)
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
