// Package check holds slotgate's pure checkers: each takes a recorded history
// or a set of observations and returns a typed Result. No checker does I/O,
// so every one can be run on a known-bad history to prove it fails.
package check

import (
	"fmt"
	"strings"
)

// Status is a checker's verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Unknown: the checker's own assumptions did not hold (too little
	// traffic, an undecidable history) — never silently "ok".
	Unknown Status = "unknown"
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
}

func pass(name, format string, args ...any) Result {
	return Result{Checker: name, Status: Pass, Message: fmt.Sprintf(format, args...)}
}

func fail(name, counterexample, format string, args ...any) Result {
	return Result{Checker: name, Status: Fail, Message: fmt.Sprintf(format, args...), Counterexample: counterexample}
}

func unknown(name, format string, args ...any) Result {
	return Result{Checker: name, Status: Unknown, Message: fmt.Sprintf(format, args...)}
}

// All folds results: fail if any failed, else unknown if any was unknown,
// else pass. Messages of the deciding results are joined.
func All(name string, results ...Result) Result {
	out := Result{Checker: name, Status: Pass}
	var msgs, cex []string
	for _, r := range results {
		out.Observed = append(out.Observed, r.Observed...)
		switch {
		case r.Status == Fail:
			out.Status = Fail
		case r.Status == Unknown && out.Status == Pass:
			out.Status = Unknown
		}
	}
	for _, r := range results {
		if r.Status == out.Status {
			msgs = append(msgs, r.Message)
			if r.Counterexample != "" {
				cex = append(cex, r.Counterexample)
			}
		}
	}
	out.Message = strings.Join(msgs, "; ")
	out.Counterexample = strings.Join(cex, "\n")
	return out
}
