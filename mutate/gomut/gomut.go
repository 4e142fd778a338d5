// Package gomut generates Go mutants of the implementation under test
// (impl/) and runs the rows that cover each one against a mutated copy of
// the module (`slotgate mutate`; the spec's own method, spec 000
// §Mechanized verification: each mutant is killed by the invariant that
// predicts it). It answers how much of impl's guard and filter code the
// rows actually judge: a mutant that survives names a path no workload
// reaches or no checker judges.
//
// Generation is pure (go/parser, go/types; no server): Generate. IDs hash
// the mutated code (Mutant.ID), so they survive code moving around them.
// Which specs can see a mutant is a coverage question: Profile.Reaches
// reads a spec's baseline coverage against Mutant.Span. mutate.GoRunner
// builds that map and runs each mutant through the specs that reach it;
// that is what `slotgate mutate --kind go` does. GenerateSchemata compiles
// every mutant into the targets' files at once, each site switched by
// SLOTGATE_MUTANT (mutate/schema), so one build serves the run
// (PrepareSchemata); a mutant without a schema is built alone in a copy of
// the module (Prepare). Run is the older whole-row path (copy, then `slotgate run` of every
// covering row: ~3 min a mutant on 2 cores), kept for
// a full-row confirmation of one mutant.
//
// Cost of generation: DefaultTargets takes ~15–25 s (one `go list -export`
// per package, then go/types per mutant in memory): 191 mutants, all of
// which type-check, 13 of them KnownEquivalent.
//
// Reading a result (both paths): a check with status fail kills the
// mutant; a suite-level failure with no row's check (a panic) kills only
// if a second run repeats it; a run that scored no cell of the requested
// rows is an error, never a kill; a blind cell does not kill.
package gomut

import (
	"github.com/slotgate/slotgate/report"
)

// Target is one package to mutate and the rows that cover it. The list is
// explicit so a run is bounded (smoke-mutate of fencing, gate,
// registry, presence, pubsub and the Marconi audit queue within ~30 min on
// 2 cores).
type Target struct {
	// Package is the module-relative directory, e.g. "impl/gate".
	Package string
	// Funcs names the functions to mutate: "Name" for a function,
	// "Type.Name" for a method (pointer or value receiver). Empty means
	// every function in the package's non-test files.
	Funcs []string
	// Rows are the rows whose suites exercise the package: a mutant is run
	// against these rows only.
	Rows []report.RowID
	// Controls names identifiers that select a negative control in this
	// package besides Options.Mutant (presence's naive ReadModes): a
	// condition on one is not mutated.
	Controls []string
}

// Mutant is one generated mutant: a whole mutated file that type-checks.
type Mutant struct {
	// ID is stable when code moves (the function within its file or to
	// another file of the package, other code edited around it):
	// "<package>:<Func>:<operator>:<hash>", the hash over the package, the
	// function, the operator, the mutated node's text and the edit's text
	// (whitespace-normalised), and "#n" appended for the n-th (n > 1)
	// identical site in one function. It changes only when the mutated
	// code itself (or its function's name) does.
	ID string
	// File is the module-relative path of the mutated file.
	File string
	// Func is the mutated function ("Name" or "Type.Name").
	Func string
	// Line is the mutated line in the original file.
	Line int
	// Span is the mutated node's extent in the original file (a
	// condition, a comparison, an if statement, a call), FuncSpan its
	// function's: a run whose coverage reaches neither cannot execute
	// the mutant (CoverMap).
	Span, FuncSpan Span
	// Operator is the mutation operator (Op* constants).
	Operator string
	// Diff is a unified diff of the original file against Content.
	Diff string
	// Content is the whole mutated file.
	Content []byte
	// Rows are the rows that cover the mutated package (Target.Rows).
	Rows []report.RowID
	// Equivalent, when set, is why this mutant is known to be equivalent
	// (KnownEquivalent): it cannot be killed by any workload, so it is
	// reported with its reason and not counted in the kill rate.
	Equivalent string
	// Served, set for an embedded-Lua mutant (LuaMutant.Cover), is the
	// sha1 of the mutated script: a run that did not report serving it
	// (script.EnvServed) ran the original script, and its verdict is
	// refused.
	Served string
	// Original is the sha1 of the script Served mutates: a run that
	// served it while the mutant was active ran the original.
	Original string
}

// Span is a source extent, line and byte column 1-based as in go/token and
// Go coverage profiles; End is exclusive.
type Span struct {
	StartLine, StartCol, EndLine, EndCol int
}

// Mutation operators. Each names one way a guard or filter can be wrong.
const (
	// OpNegateCond negates an if (or tagless switch case) condition:
	// a guard that lets through what it should stop.
	OpNegateCond = "negate-cond"
	// OpSwapCmp swaps a comparison: < ↔ <=, > ↔ >= (the off-by-one at a
	// boundary, e.g. an expiry or a window edge), and == ↔ != inside a
	// compound condition (one operand of a guard inverted).
	OpSwapCmp = "swap-cmp"
	// OpDropErrReturn empties the body of `if err != nil { … return … }`:
	// the error is swallowed and the function goes on with zero values.
	OpDropErrReturn = "drop-err-return"
	// OpDropBound drops a bound of a range query: the min or max of
	// ZRANGEBYSCORE/ZREMRANGEBYSCORE/XRANGE becomes unbounded, or a LIMIT
	// clause is removed.
	OpDropBound = "drop-bound"
	// OpTTLOffByOne moves an integer literal in duration arithmetic (a TTL,
	// a window, a renew cadence) by ±1: 3*ttl → 2*ttl or 4*ttl.
	OpTTLOffByOne = "ttl-off-by-one"
	// OpChanDrop turns a channel send into a non-blocking drop:
	// `ch <- v` → `select { case ch <- v: default: }`, and a select that
	// waits to send gains a default.
	OpChanDrop = "chan-drop"
)

// Operators lists every operator, in the order sites are reported.
var Operators = []string{OpNegateCond, OpSwapCmp, OpDropErrReturn, OpDropBound, OpTTLOffByOne, OpChanDrop}
