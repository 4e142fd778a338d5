package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/history"
)

// NoErrors is the errors column's basic checker: every operation of a
// scenario that must succeed did succeed. minOps guards against a scenario
// that never ran.
func NoErrors(outcomes []history.OpOutcome, minOps int) Result {
	const name = "no-errors"
	if len(outcomes) < minOps {
		return unknown(name, "only %d operations recorded, need %d", len(outcomes), minOps)
	}
	byKind := map[string]int{}
	var firstErr []string
	for _, o := range outcomes {
		if o.ErrKind == "" {
			continue
		}
		byKind[o.ErrKind]++
		if len(firstErr) < 5 {
			firstErr = append(firstErr, fmt.Sprintf("%s: %s", o.Op, o.Err))
		}
	}
	if len(byKind) > 0 {
		return fail(name, strings.Join(firstErr, "\n"), "%s in %d operations", countKinds(byKind), len(outcomes))
	}
	return pass(name, "%d operations, no errors", len(outcomes))
}

// RefusedWith is the loud-refusal checker: every operation was refused with
// want (e.g. CROSSSLOT for an un-tagged pair, spec 000 §Axioms A2). An
// operation that succeeded is the silent hazard; one that failed for another
// reason is a wrong refusal.
func RefusedWith(outcomes []history.OpOutcome, want string) Result {
	name := "refused-with-" + strings.ToLower(want)
	if len(outcomes) == 0 {
		return unknown(name, "no operations recorded")
	}
	var bad []string
	for _, o := range outcomes {
		switch o.ErrKind {
		case want:
		case "":
			bad = append(bad, o.Op+": succeeded")
		default:
			bad = append(bad, fmt.Sprintf("%s: %s", o.Op, o.Err))
		}
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 5), "\n"), "%d of %d operations were not refused with %s", len(bad), len(outcomes), want)
	}
	return pass(name, "all %d operations refused with %s", len(outcomes), want)
}

func countKinds(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d×%s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// LoudRefusal is the verdict on a bad variant that must fail loudly and for
// the right reason (spec 000 §Axioms A2: an un-tagged pair is refused with
// CROSSSLOT on any cluster-enabled node): the no-errors checker's status on
// outcomes (fail when the variant errored, so a control built on it is
// caught), told in RefusedWith's words. Its premise is that every operation
// was refused with want; when it does not hold the verdict is unknown — an
// error of another kind (a timeout on a loaded runner) is not the refusal
// the variant models, and proves nothing either way.
func LoudRefusal(outcomes []history.OpOutcome, want string) Result {
	errs := NoErrors(outcomes, 1)
	refused := RefusedWith(outcomes, want)
	r := Result{Checker: "loud-" + refused.Checker, Status: errs.Status, Message: refused.Message, Counterexample: errs.Counterexample}
	if (errs.Status == Pass || errs.Status == Fail) && refused.Status != Pass {
		r.Status = Unknown
		r.Message = "not refused with " + want + ": " + refused.Message
		r.Counterexample = refused.Counterexample
	}
	return r
}
