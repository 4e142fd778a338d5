package check

import (
	"strconv"
	"strings"
)

// The runtime twin's records (spec 000 §Conformance, "Locality contract"; Axiom A2):
// validate/locality records a LocalityHistory over every call it forwards, and the
// locality row judges it (rows/locality/judge). They stay in check, not in the row's
// judge package, because the twin is a library of its own (the CLI links
// validate/locality) and a library does not import a row.

// LocalityViolation names what a call broke.
type LocalityViolation string

const (
	// ViolationCrossSlot: the keys of one command or script call span hash slots — CROSSSLOT
	// on any cluster-enabled node, accepted by a standalone one (Axiom A2).
	ViolationCrossSlot LocalityViolation = "cross-slot"
	// ViolationUndeclaredKey: a key argument on the wire that the command did not declare in
	// client.Cmd.Keys, so a cluster client routes the command by another key (or none).
	ViolationUndeclaredKey LocalityViolation = "undeclared-key"
)

// LocalityCall is one violating call as the twin saw it.
type LocalityCall struct {
	Command   string            `json:"command"`
	Keys      []string          `json:"keys"`
	Slots     []int             `json:"slots"`
	Violation LocalityViolation `json:"violation"`
	// Site is the first caller outside impl/client and this package (file:line, relative
	// to the module root): where the call was written.
	Site string `json:"site"`
	// ErrKind is the call's error kind ("" when it succeeded): on a standalone node a
	// cross-slot call succeeds, which is the point.
	ErrKind string `json:"err_kind,omitempty"`
}

// String renders the call for a counterexample.
func (c LocalityCall) String() string {
	return string(c.Violation) + " " + c.Command + " keys " + strings.Join(c.Keys, " ") + " → slots " + joinInts(c.Slots) + " at " + c.Site
}

// LocalityHistory is what the twin recorded: counts over every call and the violating calls.
type LocalityHistory struct {
	// Calls is every command forwarded; MultiKey those with two or more keys; Scripts the
	// EVAL/EVALSHA/FCALL calls (any number of keys).
	Calls, MultiKey, Scripts int
	// Grouping counts the calls of commands that can carry several keys (MGET, DEL,
	// EVAL, …; Table.CanGroup) with any number of keys: the paths the twin judged.
	Grouping int
	// Violations are the violating calls, at most MaxKept; ViolationCount counts them all.
	Violations     []LocalityCall
	ViolationCount int
	// Errors counts every failed call by error kind (CROSSSLOT, network, …).
	Errors map[string]int
	// Refused counts calls the client library refused before sending (valkey-go's cluster
	// builder on cross-slot keys).
	Refused int
	// NoScript counts EVALSHA calls answered NOSCRIPT: the script did not run, and
	// client.RunScript sends EVAL next, which the twin judges as its own call. They are
	// neither errors nor violations.
	NoScript int
}

// TotalErrors is the number of calls that failed, of any kind.
func (h LocalityHistory) TotalErrors() int {
	n := 0
	for _, c := range h.Errors {
		n += c
	}
	return n
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
