package check

import "github.com/slotgate/slotgate/history"

// silentOnlyChecker is the name a SilentOnly result's call carries.
const silentOnlyChecker = "SilentOnly"

// SilentOnly is the verdict for a negative control that must be silently
// wrong: it fails, with the silently-wrong checker's result, only when that
// checker failed while the errors checker passed (the bad variant looked
// fine to an error-only harness); anything else is unknown, the control not
// exercised as such. Like All, it is replayable as a whole when both parts
// are, so `slotgate check --from` re-checks an unexercised control too.
func SilentOnly(silent, loud Result) Result {
	out := silent
	if silent.Status != Fail || loud.Status != Pass {
		out = unknown("silent-only", "silently-wrong checker said %s (%s); errors checker said %s (%s)", silent.Status, silent.Message, loud.Status, loud.Message)
	}
	out.Call = nil
	if silent.Replayable() && loud.Replayable() {
		out.Call = &history.Call{Checker: silentOnlyChecker, Parts: []history.Call{*silent.Call, *loud.Call}}
		out = out.sealed()
	}
	return out
}
