package check

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/validate"
)

// The locality row's histories and pure judgements (spec 000 §Conformance, "Locality
// contract"; Axiom A2). The runtime twin (validate/locality) records a LocalityHistory;
// the static validator (validate) a validate.Result.

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

// The locality row's pure judgements (spec 000 §Conformance, "Locality contract"). They do
// no I/O, so each is shown to fail on a known-bad input in verdict_test.go.

// CrossSlotFree is the silently-wrong judgement: no call the twin saw had keys spanning
// slots or a key it did not declare. Its own assumption comes first: a history with fewer
// than minMultiKey multi-key calls did not exercise the contract and is Unknown, never pass.
func CrossSlotFree(h LocalityHistory, minMultiKey int) Result {
	const name = "locality-cross-slot-free"
	r := Result{Checker: name}
	r.Observed = []string{fmt.Sprintf("twin: %d calls, %d multi-key, %d script calls, %d violations, errors %v",
		h.Calls, h.MultiKey, h.Scripts, h.ViolationCount, h.Errors)}
	if h.ViolationCount > 0 {
		r.Status = Fail
		sites := map[string]int{}
		var lines []string
		for _, c := range h.Violations {
			sites[c.Site]++
			if len(lines) < 5 {
				lines = append(lines, c.String())
			}
		}
		if more := h.ViolationCount - len(lines); more > 0 {
			lines = append(lines, fmt.Sprintf("… and %d more", more))
		}
		r.Counterexample = strings.Join(lines, "\n")
		r.Message = fmt.Sprintf("%d of %d calls crossed slots or left a key undeclared (sites: %s)", h.ViolationCount, h.Calls, siteList(sites))
		return r
	}
	if h.MultiKey < minMultiKey {
		r.Status = Unknown
		r.Message = fmt.Sprintf("only %d multi-key calls seen, need %d: the workload did not exercise the contract", h.MultiKey, minMultiKey)
		return r
	}
	r.Status = Pass
	r.Message = fmt.Sprintf("%d calls (%d multi-key, %d script calls): every one in a single slot, every key declared", h.Calls, h.MultiKey, h.Scripts)
	return r
}

func siteList(sites map[string]int) string {
	keys := make([]string, 0, len(sites))
	for s := range sites {
		keys = append(keys, s)
	}
	sort.Strings(keys)
	for i, s := range keys {
		keys[i] = fmt.Sprintf("%s ×%d", s, sites[s])
	}
	return strings.Join(keys, ", ")
}

// StaticClean is the errors judgement: the static validator found nothing. A run that
// examined fewer than minFiles files proves nothing and is Unknown.
func StaticClean(res validate.Result, minFiles int) Result {
	const name = "locality-static-clean"
	r := Result{Checker: name}
	if len(res.Findings) > 0 {
		lines := make([]string, 0, len(res.Findings))
		rules := map[validate.Rule]int{}
		for _, f := range res.Findings {
			rules[f.Rule]++
			lines = append(lines, f.String())
		}
		if len(lines) > 10 {
			lines = append(lines[:10], fmt.Sprintf("… and %d more", len(res.Findings)-10))
		}
		r.Status = Fail
		r.Message = fmt.Sprintf("%d locality finding(s) in %d files: %v", len(res.Findings), res.Files, rules)
		r.Counterexample = strings.Join(lines, "\n")
		return r
	}
	if res.Files < minFiles {
		r.Status = Unknown
		r.Message = fmt.Sprintf("only %d files examined, need %d", res.Files, minFiles)
		return r
	}
	r.Status = Pass
	r.Message = fmt.Sprintf("%d files: every Lua key from KEYS, every multi-key command, script call and pipeline one slot or declared", res.Files)
	return r
}

// CorpusResult folds the known-bad corpus into the validator's Result, and reports how
// many fixtures tripped exactly the rules they name (validate.CorpusEntry.Flagged).
func CorpusResult(entries []validate.CorpusEntry) (res validate.Result, flagged int, missed []string) {
	for _, e := range entries {
		res.Files++
		res.Findings = append(res.Findings, e.Got...)
		if e.Flagged() {
			flagged++
		} else {
			got := make([]string, len(e.Got))
			for i, f := range e.Got {
				got[i] = string(f.Rule)
			}
			missed = append(missed, fmt.Sprintf("%s: want %v, got %v", e.File, e.Want, got))
		}
	}
	return res, flagged, missed
}

// TableAgreement is what the locality row compared: the hand fallback table of key
// positions against the server's COMMAND key specs (validate.Table.Agree), one line per
// command they place differently.
type TableAgreement struct {
	Source                       string // the server table's source (validate.Table.Source)
	ServerCommands, HandCommands int
	Disagreements                []string
}

// HandTableAgrees judges the hand fallback table against the server's key specs: every
// entry the hand table has must place keys exactly where the server does, or the
// validator run without a server would judge calls by wrong key positions.
func HandTableAgrees(a TableAgreement) Result {
	const name = "locality-hand-table-agrees"
	if len(a.Disagreements) > 0 {
		return fail(name, strings.Join(a.Disagreements, "\n"), "the hand fallback table disagrees with %s on %d command(s)", a.Source, len(a.Disagreements))
	}
	return pass(name, "hand fallback (%d commands) agrees with %s (%d commands)", a.HandCommands, a.Source, a.ServerCommands)
}

// BadCorpus is the static row's negative control over the known-bad corpus: the
// validator must fail on it (StaticClean) and every fixture must trip exactly the rules
// it names — a fixture that trips another rule is mislabelled, one that trips nothing a
// blind spot. A failing validator that missed a fixture is exercised but not caught
// (a pass); one that examined nothing is unknown.
func BadCorpus(entries []validate.CorpusEntry) Result {
	res, flagged, missed := CorpusResult(entries)
	r := StaticClean(res, 1)
	if r.Status == Fail && flagged != len(entries) {
		r.Status = Pass
	}
	r.Checker = "locality-bad-corpus"
	r.Message = fmt.Sprintf("%d/%d fixtures flagged with their named rules (%d findings)", flagged, len(entries), len(res.Findings))
	if len(missed) > 0 {
		r.Message += "; missed: " + strings.Join(missed, "; ")
	}
	return r
}

// DeclarationsNeeded is the static row's negative control over ./impl with its
// //slotgate: call-site declarations stripped (stripped of them): the validator must
// fail, and for the reason the declarations answer — keys built at run time
// (validate.RuleRuntimeKeys). A failure without one is exercised but not caught (a
// pass).
func DeclarationsNeeded(bare validate.Result, stripped int) Result {
	r := StaticClean(bare, 1)
	runtimeFound := 0
	for _, f := range bare.Findings {
		if f.Rule == validate.RuleRuntimeKeys {
			runtimeFound++
		}
	}
	if r.Status == Fail && runtimeFound == 0 {
		r.Status = Pass
	}
	r.Checker = "locality-declarations-needed"
	r.Message = fmt.Sprintf("%d declarations stripped: %d findings, %d of them %s | %s", stripped, len(bare.Findings), runtimeFound, validate.RuleRuntimeKeys, r.Message)
	return r
}

// LocalityWorkload is how many calls of multi-key-capable commands (LocalityHistory's
// Grouping) one reference workload sent through its twin.
type LocalityWorkload struct {
	Name     string
	Grouping int
}

// WorkloadsExercised is unknown when a reference workload sent no call of a
// multi-key-capable command (MGET, DEL, EVAL, … with any number of keys) through its
// twin: a path the row claims to cover that never ran.
func WorkloadsExercised(ws []LocalityWorkload) Result {
	const name = "locality-workloads-exercised"
	var idle []string
	for _, w := range ws {
		if w.Grouping == 0 {
			idle = append(idle, w.Name)
		}
	}
	if len(idle) > 0 {
		return unknown(name, "no call of a multi-key-capable command (MGET, DEL, EVAL, …) through the twin from: %s", strings.Join(idle, ", "))
	}
	return pass(name, "all %d workloads sent calls of multi-key-capable commands through the twin", len(ws))
}
