package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// The Marconi rows' compositions: what a suite used to make of a checker's
// result after the fact (a premise of its own, a control caught only when
// several checks each fail, a control's line naming what it saw). Each is
// a pure checker here so that `slotgate check --from` replays the
// composition with the parts (Judge), never a result edited after its
// call.

// ArchiverKilled is the kill premise of an audit-pipeline run: Unknown
// unless the archiver of pipeline was killed as often as planned — a run
// whose kills did not happen proves nothing about them (spec 002 §4.2
// Recoverability).
func ArchiverKilled(pipeline string, kills, planned int) Result {
	const name = "kill-premise"
	if kills < planned {
		return unknown(name, "%s: archiver killed %d times, %d planned", pipeline, kills, planned)
	}
	return pass(name, "%s: archiver killed %d times", pipeline, kills)
}

// MarconiSendsAnswered fails on any send not answered 200 (spec 002 §6:
// the restarted instance serves every send): each send is one operation,
// a non-200 its error (kind http-<status>).
func MarconiSendsAnswered(h history.MeshHistory) Result {
	outcomes := make([]history.OpOutcome, len(h.Sends))
	for i, s := range h.Sends {
		outcomes[i] = history.OpOutcome{Op: "send to " + s.Recipient}
		if !s.OK() {
			outcomes[i].ErrKind, outcomes[i].Err = fmt.Sprintf("http-%d", s.Status), s.Err
		}
	}
	return NoErrors(outcomes, 1)
}

// MarconiUnrunnable is the verdict of a Marconi check the topology cannot
// run (the archiver process cannot be handed its TLS configuration):
// Unknown, saying why — never a pass.
func MarconiUnrunnable(checker, why string) Result {
	return unknown(checker, "%s", why)
}

// eachFails judges a control that must be caught by every one of its
// checks on its own: whole (the checks folded with All, premises included)
// says whether the control was exercised — its verdict is a pass or a
// fail — and the control fails only when whole failed and each of parts
// failed. message is the control's line, whatever the verdict.
func eachFails(name, message string, whole Result, parts ...Result) Result {
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

// MarconiHookAndStaleRoutes judges the forgetful-deregister control of the
// cache lifecycle (spec 002 §5 on_deregister → routing.invalidate_project;
// Stage 2 stale-route gate): the hook tour's transitions (steps) and the
// churn's stale-route bound (h, judged with at least one send) must each
// fail — each check must be able to fail alone. Its line names both.
func MarconiHookAndStaleRoutes(steps []history.MeshHookStep, h history.MeshHistory, expiryBound time.Duration) Result {
	tour := MarconiHookTransitions(steps)
	stale := MarconiStaleRoutes(h, expiryBound, 1)
	return eachFails("marconi-hook-and-stale-routes", fmt.Sprintf("hook transitions: %s | stale routes: %s", tour.Message, stale.Message),
		All("forgetful", tour, stale), tour, stale)
}

// MarconiStaleRoutesFailing is MarconiStaleRoutes (at least one send
// judged) on a history whose stale routes answer with an error instead of
// routing (the stale-route-5xx control): its line leads with how many
// sends failed, the only sign of that mesh's fault.
func MarconiStaleRoutesFailing(h history.MeshHistory, expiryBound time.Duration) Result {
	r := MarconiStaleRoutes(h, expiryBound, 1)
	r.Message = fmt.Sprintf("%d of %d sends failed | %s", len(MeshFailedSends(h)), len(h.Sends), r.Message)
	return r
}

// MarconiCacheHealthFailing is MarconiCacheHealth with its line leading
// with the failed sends it counted (the stale-route-5xx control).
func MarconiCacheHealthFailing(c MeshCacheStats) Result {
	r := MarconiCacheHealth(c)
	r.Message = fmt.Sprintf("%d failed sends | %s", len(c.FailedSends), r.Message)
	return r
}

// AuditDoubleWrite is a double-writing archiver's run (the plain-INSERT
// control of the audit-completeness row): its kill premise, its ledgers
// and its shadow tables.
type AuditDoubleWrite struct {
	// Pipeline names the run; Kills and PlannedKills are its archiver's
	// kills (ArchiverKilled).
	Pipeline            string
	Kills, PlannedKills int
	// Ledgers and MinOffers are MarconiExactlyOnce's input.
	Ledgers   []AuditLedger
	MinOffers int
	// Tables and Pairs are MarconiShadowEqual's input.
	Tables map[string]history.AuditTable
	Pairs  map[string]string
}

// MarconiDoubleWriteSeen judges the double-writing archiver control (spec
// 002 §4.2 idempotent signal_id UPSERT, Stage 4 shadow equality): exactly
// once and shadow equality must each fail on it, its kills having happened
// (a premise not met leaves it not exercised unless a check failed anyway,
// as All folds it). Its line names both checks.
func MarconiDoubleWriteSeen(d AuditDoubleWrite) Result {
	once := MarconiExactlyOnce(d.Ledgers, d.MinOffers)
	shadow := MarconiShadowEqual(d.Tables, d.Pairs)
	return eachFails("marconi-double-write-seen", fmt.Sprintf("exactly-once: %s | shadow equality: %s", once.Message, shadow.Message),
		All("control", ArchiverKilled(d.Pipeline, d.Kills, d.PlannedKills), once, shadow), once, shadow)
}

// MarconiMasterTermFailing judges the put-back-to-identity control of the
// cache lifecycle (spec 002 §3.5 per-recipient pending index, §5
// on_master_change): MarconiStaleRoutes (at least one send judged) on a
// history where a master's session ended with master-alias signals
// unwritten on its socket, the master flipped and the old master's
// identity came back. It fails only when misdelivered's master-term rule
// fired — a master-alias signal delivered to a session that was not master
// of the project at the delivery — so the control is caught by that rule
// and no other (a stale route it also saw does not count). Its line leads
// with the first such delivery.
func MarconiMasterTermFailing(h history.MeshHistory, expiryBound time.Duration) Result {
	stale := MarconiStaleRoutes(h, expiryBound, 1)
	var terms []string
	for _, m := range misdelivered(h) {
		if _, ok := m.masterAlias(); ok {
			terms = append(terms, m.String())
		}
	}
	term := pass("master-term", "no master-alias signal reached a session that was not master at the delivery")
	if len(terms) > 0 {
		term = fail("master-term", strings.Join(meshFirst(terms, 12), "\n"), "%d master-alias signals delivered to a session not master of their project at the delivery (%s)", len(terms), terms[0])
	}
	return eachFails("marconi-master-term", fmt.Sprintf("%s | stale routes: %s", term.Message, stale.Message), stale, term)
}
