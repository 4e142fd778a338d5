// Package schema is what a mutant schemata build switches on
// (`slotgate mutate --kind go`): gomut.Schemata rewrites each mutation site
// of impl into a call here, so every mutant of a package is compiled into
// one binary and the active one is chosen at run time by SLOTGATE_MUTANT
// (one `go test -c` per suite per run instead of one per mutant).
//
// It is imported only by the schemata copy of impl a mutate run builds in
// a scratch directory, never by the working tree. With no mutant active
// every function here returns the original value, so the schemata build
// behaves as the original code: the run proves that on every covering spec
// before it trusts a kill (mutate.GoRunner.Cover). The active id is read
// once, at package initialisation (before any importer's code runs): a
// site costs one string comparison against "" in a run without a mutant.
package schema

import (
	"cmp"
	"os"
)

// EnvMutant names the active mutant: a gomut mutant id
// ("impl/gate:fleetAt:negate-cond:37d3c7a7"). Unset or empty: none.
const EnvMutant = "SLOTGATE_MUTANT"

var active = os.Getenv(EnvMutant)

// Active is the active mutant id, "" when none.
func Active() string { return active }

// On reports whether mutant id is the active one.
func On(id string) bool { return active != "" && active == id }

// Not is b, or !b while id is active (negate-cond).
func Not[B ~bool](id string, b B) B {
	if On(id) {
		return !b
	}
	return b
}

// Lt is a < b, or a <= b while id is active (swap-cmp). Le, Gt, Ge, Eq and
// Ne are the other comparisons, each swapped as gomut.OpSwapCmp swaps it.
// Both operands are evaluated once, in order, either way: as the
// comparison they stand for.
func Lt[T cmp.Ordered](id string, a, b T) bool {
	if On(id) {
		return a <= b
	}
	return a < b
}

// Le is a <= b, or a < b while id is active.
func Le[T cmp.Ordered](id string, a, b T) bool {
	if On(id) {
		return a < b
	}
	return a <= b
}

// Gt is a > b, or a >= b while id is active.
func Gt[T cmp.Ordered](id string, a, b T) bool {
	if On(id) {
		return a >= b
	}
	return a > b
}

// Ge is a >= b, or a > b while id is active.
func Ge[T cmp.Ordered](id string, a, b T) bool {
	if On(id) {
		return a > b
	}
	return a >= b
}

// Eq is a == b, or a != b while id is active.
func Eq[T comparable](id string, a, b T) bool {
	if On(id) {
		return a != b
	}
	return a == b
}

// Ne is a != b, or a == b while id is active.
func Ne[T comparable](id string, a, b T) bool {
	if On(id) {
		return a == b
	}
	return a != b
}

// Pick is orig, or mutated while id is active (a literal the mutant
// changes: a TTL factor, a range bound). Both are evaluated either way,
// so a site whose original has side effects is not expressed with Pick
// (gomut only uses it for constants and pure arguments).
func Pick[T any](id string, mutated, orig T) T {
	if On(id) {
		return mutated
	}
	return orig
}
