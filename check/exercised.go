package check

import (
	"fmt"
	"time"
)

// Happened is a scenario's own assumption made a verdict: the event it
// exists to exercise (a NOSCRIPT fallback after SCRIPT FLUSH) was seen
// count times. None seen is unknown, with none as the message — the path
// the row claims to cover never ran, so a pass beside it proves nothing.
// A suite folds it into its result (All) when it is not a pass, so the
// call that decided the cell is replayed by `slotgate check --from`.
func Happened(name string, count int, none string) Result {
	if count <= 0 {
		return unknown(name, "%s", none)
	}
	return pass(name, "seen %d times", count)
}

// WithinBudget fails when what took longer than budget (the locality
// validator's CI budget, spec 000 §Conformance, Locality contract: it runs
// on every build, so it must stay fast).
func WithinBudget(what string, took, budget time.Duration) Result {
	const name = "within-budget"
	if took > budget {
		return fail(name, "", "%s took %v, over the %s budget", what, took, seconds(budget))
	}
	return pass(name, "%s took %v, within the %s budget", what, took, seconds(budget))
}

// seconds renders a budget as "5 s", the way the spec writes it.
func seconds(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }
