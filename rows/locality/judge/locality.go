package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/validate"
)

// crossSlotFree is the silently-wrong judgement: no call the twin saw had keys spanning
// slots or a key it did not declare. Its own assumption comes first: a history with fewer
// than minMultiKey multi-key calls did not exercise the contract and is Unknown, never pass.
func crossSlotFree(h check.LocalityHistory, minMultiKey int) check.Result {
	const name = "locality-cross-slot-free"
	r := check.Result{Checker: name}
	r.Observed = []string{fmt.Sprintf("twin: %d calls, %d multi-key, %d script calls, %d violations, errors %v",
		h.Calls, h.MultiKey, h.Scripts, h.ViolationCount, h.Errors)}
	if h.ViolationCount > 0 {
		r.Status = check.Fail
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
		r.Status = check.Unknown
		r.Message = fmt.Sprintf("only %d multi-key calls seen, need %d: the workload did not exercise the contract", h.MultiKey, minMultiKey)
		return r
	}
	r.Status = check.Pass
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

// staticClean is the errors judgement: the static validator found nothing. A run that
// examined fewer than minFiles files proves nothing and is Unknown.
func staticClean(res validate.Result, minFiles int) check.Result {
	const name = "locality-static-clean"
	r := check.Result{Checker: name}
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
		r.Status = check.Fail
		r.Message = fmt.Sprintf("%d locality finding(s) in %d files: %v", len(res.Findings), res.Files, rules)
		r.Counterexample = strings.Join(lines, "\n")
		return r
	}
	if res.Files < minFiles {
		r.Status = check.Unknown
		r.Message = fmt.Sprintf("only %d files examined, need %d", res.Files, minFiles)
		return r
	}
	r.Status = check.Pass
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

// handTableAgrees judges the hand fallback table against the server's key specs: every
// entry the hand table has must place keys exactly where the server does, or the
// validator run without a server would judge calls by wrong key positions. Its premise:
// both tables hold commands — an empty hand table agrees with anything, and an empty
// server table is no server's key specs.
func handTableAgrees(a TableAgreement) check.Result {
	const name = "locality-hand-table-agrees"
	if a.ServerCommands == 0 || a.HandCommands == 0 {
		return check.Unknownf(name, "nothing compared: %s has %d commands, the hand fallback %d", a.Source, a.ServerCommands, a.HandCommands)
	}
	if len(a.Disagreements) > 0 {
		return check.Failf(name, strings.Join(a.Disagreements, "\n"), "the hand fallback table disagrees with %s on %d command(s)", a.Source, len(a.Disagreements))
	}
	return check.Passf(name, "hand fallback (%d commands) agrees with %s (%d commands)", a.HandCommands, a.Source, a.ServerCommands)
}

// badCorpus is the static row's negative control over the known-bad corpus: the
// validator must fail on it (staticClean) and every fixture must trip exactly the rules
// it names — a fixture that trips another rule is mislabelled, one that trips nothing a
// blind spot. A failing validator that missed a fixture is exercised but not caught
// (a pass); one that examined nothing is unknown.
func badCorpus(entries []validate.CorpusEntry) check.Result {
	res, flagged, missed := CorpusResult(entries)
	r := staticClean(res, 1)
	if r.Status == check.Fail && flagged != len(entries) {
		r.Status = check.Pass
	}
	r.Checker = "locality-bad-corpus"
	r.Message = fmt.Sprintf("%d/%d fixtures flagged with their named rules (%d findings)", flagged, len(entries), len(res.Findings))
	if len(missed) > 0 {
		r.Message += "; missed: " + strings.Join(missed, "; ")
	}
	return r
}

// declarationsNeeded is the static row's negative control over ./impl with its
// //slotgate: call-site declarations stripped (stripped of them): the validator must
// fail, and for the reason the declarations answer — keys built at run time
// (validate.RuleRuntimeKeys). A failure without one is exercised but not caught (a
// pass). Its premises: the stripped tree was examined (staticClean's, one file at
// least) and a declaration was stripped at all — else the control removed nothing.
func declarationsNeeded(bare validate.Result, stripped int) check.Result {
	if stripped <= 0 {
		return check.Unknownf("locality-declarations-needed", "no //slotgate: declaration stripped: the control removed nothing")
	}
	r := staticClean(bare, 1)
	runtimeFound := 0
	for _, f := range bare.Findings {
		if f.Rule == validate.RuleRuntimeKeys {
			runtimeFound++
		}
	}
	if r.Status == check.Fail && runtimeFound == 0 {
		r.Status = check.Pass
	}
	r.Checker = "locality-declarations-needed"
	r.Message = fmt.Sprintf("%d declarations stripped: %d findings, %d of them %s | %s", stripped, len(bare.Findings), runtimeFound, validate.RuleRuntimeKeys, r.Message)
	return r
}

// workloadsExercised is unknown when a reference workload sent no call of a
// multi-key-capable command (MGET, DEL, EVAL, … with any number of keys) through its
// twin: a path the row claims to cover that never ran. No workload at all is unknown
// too.
func workloadsExercised(ws []Workload) check.Result {
	const name = "locality-workloads-exercised"
	if len(ws) == 0 {
		return check.Unknownf(name, "no reference workload listed")
	}
	var idle []string
	for _, w := range ws {
		if w.Grouping == 0 {
			idle = append(idle, w.Name)
		}
	}
	if len(idle) > 0 {
		return check.Unknownf(name, "no call of a multi-key-capable command (MGET, DEL, EVAL, …) through the twin from: %s", strings.Join(idle, ", "))
	}
	return check.Passf(name, "all %d workloads sent calls of multi-key-capable commands through the twin", len(ws))
}

// withinBudget fails when what took longer than budget (the validator's CI budget, spec
// 000 §Conformance, Locality contract: it runs on every build, so it must stay fast). Its
// premise: a positive budget and a measured time — a zero duration timed nothing.
func withinBudget(what string, took, budget time.Duration) check.Result {
	const name = "within-budget"
	if took <= 0 || budget <= 0 {
		return check.Unknownf(name, "%s: nothing timed (took %v, budget %v)", what, took, budget)
	}
	if took > budget {
		return check.Failf(name, "", "%s took %v, over the %s budget", what, took, seconds(budget))
	}
	return check.Passf(name, "%s took %v, within the %s budget", what, took, seconds(budget))
}

// seconds renders a budget as "5 s", the way the spec writes it.
func seconds(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }

// TwinRun is a twin's history and the fewest multi-key calls that make a verdict
// (crossSlotFree).
type TwinRun struct {
	History     check.LocalityHistory
	MinMultiKey int
}

// StaticRun is the validator's result and the fewest files examined that make a verdict
// (staticClean).
type StaticRun struct {
	Result   validate.Result
	MinFiles int
}

// StrippedRun is the validator's result over ./impl without its call-site declarations
// and how many it stripped (declarationsNeeded).
type StrippedRun struct {
	Bare     validate.Result
	Stripped int
}

// Timing is how long What took against its Budget (withinBudget).
type Timing struct {
	What   string
	Took   time.Duration
	Budget time.Duration
}

// The row's checkers, by stable name; each input struct lists the old reflective
// checker's arguments in order, so histories stored under the old names replay.
var (
	CrossSlotFree = check.Define("locality/cross-slot-free", func(in TwinRun) check.Result {
		return crossSlotFree(in.History, in.MinMultiKey)
	}, "CrossSlotFree")
	StaticClean = check.Define("locality/static-clean", func(in StaticRun) check.Result {
		return staticClean(in.Result, in.MinFiles)
	}, "StaticClean")
	HandTableAgrees    = check.Define("locality/hand-table-agrees", handTableAgrees, "HandTableAgrees")
	BadCorpus          = check.Define("locality/bad-corpus", badCorpus, "BadCorpus")
	DeclarationsNeeded = check.Define("locality/declarations-needed", func(in StrippedRun) check.Result {
		return declarationsNeeded(in.Bare, in.Stripped)
	}, "DeclarationsNeeded")
	WorkloadsExercised = check.Define("locality/workloads-exercised", workloadsExercised, "WorkloadsExercised")
	WithinBudget       = check.Define("locality/within-budget", func(in Timing) check.Result {
		return withinBudget(in.What, in.Took, in.Budget)
	}, "WithinBudget")
)
