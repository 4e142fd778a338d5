package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// The mesh rows' compositions: what a suite used to make of a checker's
// result after the fact (a control caught only when several checks each
// fail, a control's line naming what it saw). Each is a checker of its own
// so that `slotgate check --from` replays the composition with its parts,
// never a result edited after its call.

// marconiSendsAnswered fails on any send not answered 200 (spec 002 §6:
// the restarted instance serves every send): each send is one operation,
// a non-200 its error (kind http-<status>).
func marconiSendsAnswered(h MeshHistory) check.Result {
	outcomes := make([]history.OpOutcome, len(h.Sends))
	for i, s := range h.Sends {
		outcomes[i] = history.OpOutcome{Op: "send to " + s.Recipient}
		if !s.OK() {
			outcomes[i].ErrKind, outcomes[i].Err = fmt.Sprintf("http-%d", s.Status), s.Err
		}
	}
	return check.NoErrors(outcomes, 1)
}

// marconiHookAndStaleRoutes judges the forgetful-deregister control of the
// cache lifecycle (spec 002 §5 on_deregister → routing.invalidate_project;
// Stage 2 stale-route gate): the hook tour's transitions (steps) and the
// churn's stale-route bound (h, judged with at least one send) must each
// fail — each check must be able to fail alone. Its line names both.
func marconiHookAndStaleRoutes(steps []MeshHookStep, h MeshHistory, expiryBound time.Duration) check.Result {
	tour := marconiHookTransitions(steps)
	stale := marconiStaleRoutes(h, expiryBound, 1)
	return check.EachFails("marconi-hook-and-stale-routes", fmt.Sprintf("hook transitions: %s | stale routes: %s", tour.Message, stale.Message),
		check.All("forgetful", tour, stale), tour, stale)
}

// marconiStaleRoutesFailing is marconiStaleRoutes (at least one send
// judged) on a history whose stale routes answer with an error instead of
// routing (the stale-route-5xx control): its line leads with how many
// sends failed, the only sign of that mesh's fault.
func marconiStaleRoutesFailing(h MeshHistory, expiryBound time.Duration) check.Result {
	r := marconiStaleRoutes(h, expiryBound, 1)
	r.Message = fmt.Sprintf("%d of %d sends failed | %s", len(MeshFailedSends(h)), len(h.Sends), r.Message)
	return r
}

// marconiCacheHealthFailing is marconiCacheHealth with its line leading
// with the failed sends it counted (the stale-route-5xx control).
func marconiCacheHealthFailing(c MeshCacheStats) check.Result {
	r := marconiCacheHealth(c)
	r.Message = fmt.Sprintf("%d failed sends | %s", len(c.FailedSends), r.Message)
	return r
}

// marconiMasterTermFailing judges the put-back-to-identity control of the
// cache lifecycle (spec 002 §3.5 per-recipient pending index, §5
// on_master_change): marconiStaleRoutes (at least one send judged) on a
// history where a master's session ended with master-alias signals
// unwritten on its socket, the master flipped and the old master's
// identity came back. It fails only when misdelivered's master-term rule
// fired — a master-alias signal delivered to a session that was not master
// of the project at the delivery — so the control is caught by that rule
// and no other (a stale route it also saw does not count). Its line leads
// with the first such delivery.
func marconiMasterTermFailing(h MeshHistory, expiryBound time.Duration) check.Result {
	stale := marconiStaleRoutes(h, expiryBound, 1)
	var terms []string
	for _, m := range misdelivered(h) {
		if _, ok := m.masterAlias(); ok {
			terms = append(terms, m.String())
		}
	}
	term := check.Passf("master-term", "no master-alias signal reached a session that was not master at the delivery")
	if len(terms) > 0 {
		term = check.Failf("master-term", strings.Join(meshFirst(terms, 12), "\n"), "%d master-alias signals delivered to a session not master of their project at the delivery (%s)", len(terms), terms[0])
	}
	return check.EachFails("marconi-master-term", fmt.Sprintf("%s | stale routes: %s", term.Message, stale.Message), stale, term)
}
