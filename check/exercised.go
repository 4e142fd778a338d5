package check

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

// EachFails judges a control that must be caught by every one of its
// checks on its own: whole (the checks folded with All, premises included)
// says whether the control was exercised — its verdict is a pass or a
// fail — and the control fails only when whole failed and each of parts
// failed. message is the control's line, whatever the verdict. A control
// caught by one check and missed by another passes: each check must be
// able to fail alone.
func EachFails(name, message string, whole Result, parts ...Result) Result {
	r := Result{Checker: name, Status: whole.Status, Message: message}
	if whole.Status != Fail {
		return r // a pass, or not exercised (unknown, inconclusive)
	}
	for _, p := range parts {
		if p.Status != Fail {
			r.Status = Pass // exercised, but one check missed it
			return r
		}
	}
	r.Counterexample = whole.Counterexample
	return r
}
