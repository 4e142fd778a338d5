package locality

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/validate"
)

// The locality row's pure judgements (spec 000 §Conformance, "Locality contract"). They do
// no I/O, so each is shown to fail on a known-bad input in verdict_test.go.

// CrossSlotFree is the silently-wrong judgement: no call the twin saw had keys spanning
// slots or a key it did not declare. Its own assumption comes first: a history with fewer
// than minMultiKey multi-key calls did not exercise the contract and is Unknown, never pass.
func CrossSlotFree(h History, minMultiKey int) check.Result {
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

// StaticClean is the errors judgement: the static validator found nothing. A run that
// examined fewer than minFiles files proves nothing and is Unknown.
func StaticClean(res validate.Result, minFiles int) check.Result {
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
