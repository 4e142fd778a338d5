package judge

import (
	"fmt"

	"github.com/slotgate/slotgate/check"
)

// InvalidatorOutage is one Redis outage under a mesh whose on_session_expired
// source (the expiry sweeper) had sessions to confirm: how many of the
// mesh's SessionStore commands failed off the hot path during it, counted
// at the mesh's Redis client seam (SeamFailures), and how much
// marconi_invalidator_errors_total{hook="on_session_expired"} rose over the
// run (Counted), read from the mesh's /metrics registry.
type InvalidatorOutage struct {
	SeamFailures int64
	Counted      float64
}

// marconiInvalidatorErrorsCounted is spec 002 §9's
// marconi_invalidator_errors_total{hook,reason} ("non-fatal hook errors;
// non-zero in steady state is a paging incident") through a Redis outage:
// the on_session_expired source that could not reach the SessionStore
// counted its failures — at least one, and no more than the failed
// commands the seam saw (a failed confirmation is one or two commands, so
// a count past them is invented). Premise: the outage reached the source
// (SeamFailures > 0); else unknown.
func marconiInvalidatorErrorsCounted(o InvalidatorOutage) check.Result {
	const name = "marconi-invalidator-errors-counted"
	if o.SeamFailures == 0 {
		return check.Unknownf(name, "no SessionStore command failed off the hot path: the outage never reached the expiry source")
	}
	observed := []string{fmt.Sprintf("%d SessionStore commands failed off the hot path; marconi_invalidator_errors_total{hook=on_session_expired} rose %.0f", o.SeamFailures, o.Counted)}
	var r check.Result
	switch {
	case o.Counted < 1:
		r = check.Failf(name, observed[0], "%d SessionStore failures of the expiry source and marconi_invalidator_errors_total{hook=on_session_expired} did not move: the outage was swallowed uncounted", o.SeamFailures)
	case o.Counted > float64(o.SeamFailures):
		r = check.Failf(name, observed[0], "marconi_invalidator_errors_total{hook=on_session_expired} rose %.0f, more than the %d failed commands", o.Counted, o.SeamFailures)
	default:
		r = check.Passf(name, "%.0f invalidator errors counted for %d failed SessionStore commands", o.Counted, o.SeamFailures)
	}
	r.Observed = observed
	return r
}
