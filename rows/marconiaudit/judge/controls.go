package judge

import (
	"fmt"

	"github.com/slotgate/slotgate/check"
)

// The rows' compositions: a premise of a run of its own, and a control
// caught only when several checks each fail. Each is a pure checker so
// that `slotgate check --from` replays the composition with its parts,
// never a result edited after its call.

// archiverKilled is the kill premise of an audit-pipeline run: Unknown
// unless the archiver of pipeline was killed as often as planned — a run
// whose kills did not happen proves nothing about them (spec 002 §4.2
// Recoverability).
func archiverKilled(pipeline string, kills, planned int) check.Result {
	const name = "kill-premise"
	if kills < planned {
		return check.Unknownf(name, "%s: archiver killed %d times, %d planned", pipeline, kills, planned)
	}
	return check.Passf(name, "%s: archiver killed %d times", pipeline, kills)
}

// unrunnable is the verdict of a Marconi check the topology cannot
// run (the archiver process cannot be handed its TLS configuration):
// Unknown, saying why — never a pass.
func unrunnable(checker, why string) check.Result {
	return check.Unknownf(checker, "%s", why)
}

// AuditDoubleWrite is a double-writing archiver's run (the plain-INSERT
// control of the audit-completeness row): its kill premise, its ledgers
// and its shadow tables.
type AuditDoubleWrite struct {
	// Pipeline names the run; Kills and PlannedKills are its archiver's
	// kills (archiverKilled).
	Pipeline            string
	Kills, PlannedKills int
	// Ledgers and MinOffers are exactlyOnce's input.
	Ledgers   []AuditLedger
	MinOffers int
	// Tables and Pairs are shadowEqual's input.
	Tables map[string]AuditTable
	Pairs  map[string]string
}

// doubleWriteSeen judges the double-writing archiver control (spec
// 002 §4.2 idempotent signal_id UPSERT, Stage 4 shadow equality): exactly
// once and shadow equality must each fail on it, its kills having happened
// (a premise not met leaves it not exercised unless a check failed anyway,
// as All folds it). Its line names both checks.
func doubleWriteSeen(d AuditDoubleWrite) check.Result {
	once := exactlyOnce(d.Ledgers, d.MinOffers)
	shadow := shadowEqual(d.Tables, d.Pairs)
	return check.EachFails("marconi-double-write-seen", fmt.Sprintf("exactly-once: %s | shadow equality: %s", once.Message, shadow.Message),
		check.All("control", archiverKilled(d.Pipeline, d.Kills, d.PlannedKills), once, shadow), once, shadow)
}
