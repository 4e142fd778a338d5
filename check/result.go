// Package check holds slotgate's pure checkers: each takes a recorded history
// or a set of observations and returns a typed Result. No checker does I/O,
// so every one can be run on a known-bad history to prove it fails.
package check

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// Status is a checker's verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Unknown: the checker's own assumptions did not hold (too little
	// traffic, an undecidable history) — never silently "ok".
	Unknown Status = "unknown"
	// Inconclusive: the harness could not inject or confirm the fault the
	// check exists to judge, so the history is not the one the check is
	// about — no verdict on the implementation (it still fails the gate,
	// naming the harness).
	Inconclusive Status = "inconclusive"
)

// Result is a checker's typed answer.
type Result struct {
	Checker string
	Status  Status
	// Message says in one line what was found.
	Message string
	// Counterexample shows the smallest evidence of a failure.
	Counterexample string
	// Observed lists facts the checker relied on, for the report.
	Observed []string
	// Call is how the result was reached when it came through a defined
	// checker's Judge (or All over judged parts): the checker's name and
	// its input, which the harness persists for `slotgate check --from`.
	// Nil otherwise.
	Call *history.Call `json:"-"`
	// judged is the digest of the result as its call produced it, so a
	// result a suite edited afterwards is not passed off as the call's.
	judged string
}

func (r Result) digest() string {
	return string(r.Status) + "\x00" + r.Checker + "\x00" + r.Message + "\x00" + r.Counterexample + "\x00" + strings.Join(r.Observed, "\x01")
}

// sealed returns r marked as exactly what its call produced.
func (r Result) sealed() Result {
	r.judged = r.digest()
	return r
}

// Replayable says whether r carries a call that reproduces it: it was
// reached through Judge (or All over judged parts) and not edited since.
func (r Result) Replayable() bool { return r.Call != nil && r.judged == r.digest() }

// Span is a stretch of a scenario's timeline (offsets from its start).
type Span struct {
	Start, End time.Duration
}

// span is a closed time interval.
type span struct{ from, to time.Duration }

func (s span) overlaps(from, to time.Duration) bool { return from <= s.to && to >= s.from }

// forever ends an interval that never closed (a window never reported
// healed, a lease no release of which began).
const forever = time.Duration(1<<63 - 1)

// Passf, Failf and Unknownf build a checker's result: a row's own judge
// package writes its checkers with them, as this package does.
func Passf(name, format string, args ...any) Result { return pass(name, format, args...) }

// Failf is a failed result with its counterexample (see Passf).
func Failf(name, counterexample, format string, args ...any) Result {
	return fail(name, counterexample, format, args...)
}

// Unknownf is a result whose premise did not hold (see Passf): never a
// silent pass.
func Unknownf(name, format string, args ...any) Result { return unknown(name, format, args...) }

// Elide keeps the first n lines of s and says how many more there were.
func Elide(s []string, n int) []string { return first(s, n) }

// CountKinds renders error counts by kind, "2×network, 1×TRYAGAIN".
func CountKinds(m map[string]int) string { return countKinds(m) }

func pass(name, format string, args ...any) Result {
	return Result{Checker: name, Status: Pass, Message: fmt.Sprintf(format, args...)}
}

func fail(name, counterexample, format string, args ...any) Result {
	return Result{Checker: name, Status: Fail, Message: fmt.Sprintf(format, args...), Counterexample: counterexample}
}

func unknown(name, format string, args ...any) Result {
	return Result{Checker: name, Status: Unknown, Message: fmt.Sprintf(format, args...)}
}

// FaultNotConfirmed is the result of a check whose fault could not be
// injected or confirmed (fault.Apply's error): inconclusive, naming the fault
// and why, never a verdict on the implementation.
func FaultNotConfirmed(name, fault string, reason error) Result {
	return Result{Checker: name, Status: Inconclusive, Message: fmt.Sprintf("fault %s not confirmed (%v)", fault, reason)}
}

// BeforeUnconfirmed folds a result judged over a history that ends where an
// unconfirmed fault began (notConfirmed, from FaultNotConfirmed) with that
// fault: a failure seen before it stands — the drills it judged did happen —
// otherwise the run is inconclusive, since it never reached what it was
// meant to test. A failure is returned exactly as judged, so it keeps its
// persisted call (slotgate check --from replays it); the caller tells the
// unconfirmed fault in the evidence (UnconfirmedAfter).
func BeforeUnconfirmed(judged, notConfirmed Result) Result {
	if judged.Status == Fail {
		return judged
	}
	return All(judged.Checker, judged, notConfirmed)
}

// UnconfirmedAfter is the evidence line for a failure BeforeUnconfirmed let
// stand: where its history ends, and why.
func UnconfirmedAfter(judged, notConfirmed Result) string {
	return fmt.Sprintf("%s: then %s — the history judged ends where that fault began; the failure before it stands", judged.Checker, notConfirmed.Message)
}

// rank orders statuses for All: an inconclusive result voids the others
// (the fault the history was recorded around did not happen as designed,
// so even a failure in it may be the harness's), then fail, unknown, pass.
// A status that is none of these (a checker that wrote "ok" or nothing)
// ranks as unknown: it is never a pass.
func rank(s Status) int {
	switch s {
	case Inconclusive:
		return 3
	case Fail:
		return 2
	case Pass:
		return 0
	}
	return 1
}

// All folds results: inconclusive if any fault was not confirmed, else fail
// if any failed, else unknown if any was unknown (or not a status at all),
// else pass. No results at all is unknown: nothing was judged, so nothing
// passed. Messages of the deciding results are joined; a failure voided by
// an inconclusive result stays in Observed.
func All(name string, results ...Result) Result {
	if len(results) == 0 {
		return unknown(name, "no result to combine: nothing was judged")
	}
	out := Result{Checker: name, Status: Pass}
	var msgs, cex []string
	for _, r := range results {
		out.Observed = append(out.Observed, r.Observed...)
		if rank(r.Status) > rank(out.Status) {
			out.Status = r.Status
		}
	}
	if rank(out.Status) == 1 && out.Status != Unknown {
		out.Status = Unknown
	}
	for _, r := range results {
		if r.Status == out.Status || (out.Status == Unknown && rank(r.Status) == 1) {
			msgs = append(msgs, r.Message)
			if r.Counterexample != "" {
				cex = append(cex, r.Counterexample)
			}
		} else if out.Status == Inconclusive && r.Status == Fail {
			out.Observed = append(out.Observed, "voided by the unconfirmed fault: fail — "+r.Message)
		}
	}
	out.Message = strings.Join(msgs, "; ")
	out.Counterexample = strings.Join(cex, "\n")
	out.Call = allCall(name, results)
	if out.Call != nil {
		for _, p := range results {
			if !p.Replayable() {
				out.Call = nil
				return out
			}
		}
		out = out.sealed()
	}
	return out
}

// allCall is All's call when every part was judged, else nil: a combined
// result is replayable only as a whole.
func allCall(name string, results []Result) *history.Call {
	b, err := json.Marshal(name)
	if err != nil {
		return nil
	}
	c := &history.Call{Checker: allChecker, Input: []json.RawMessage{b}}
	for _, r := range results {
		if r.Call == nil {
			return nil
		}
		c.Parts = append(c.Parts, *r.Call)
	}
	return c
}
