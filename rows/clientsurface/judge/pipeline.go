package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// PipeKind is what one pipelined command did.
type PipeKind string

const (
	PipeIncr PipeKind = "incrby" // INCRBY Key Delta; the reply in Int
	PipeGet  PipeKind = "get"    // GET Key; the value in Int (0 for nil)
)

// PipeCmd is one command of a recorded pipeline, with the outcome its
// caller was told: a reply (Int), an error (ErrKind, Err), or nothing at
// all (Missing: the caller's pipeline handed back no outcome for it).
type PipeCmd struct {
	Batch int
	Key   string
	Slot  int
	Kind  PipeKind
	// Delta is the key's own increment: every key has a different one, so
	// a reply that belongs to another key is not a multiple of this one.
	Delta int64
	// Poisoned marks a key that holds a non-integer by design: its INCRBY
	// must fail, on its own.
	Poisoned bool
	Int      int64
	// ErrKind is the error code ("MOVED", "ERR", ...), "network" for a
	// failed round trip, "" for a reply.
	ErrKind string
	Err     string
	Missing bool
	Call    time.Duration
	Return  time.Duration
}

// Answered says the caller was told the command succeeded.
func (c PipeCmd) Answered() bool { return !c.Missing && c.ErrKind == "" }

// unknownOutcome says the command may or may not have run: its round trip
// failed, or the caller was told nothing. Any error reply from the server
// or a refusal by the library means it did not run (a single INCRBY or GET
// either runs or is refused).
func (c PipeCmd) unknownOutcome() bool { return c.Missing || c.ErrKind == "network" }

// PipeFinal is one key read back after the run by a correct pool.
type PipeFinal struct {
	Key string
	// Value is the raw value ("" for nil).
	Value string
	Read  bool
	Err   string
}

// FaultSpan is one fault of the run on the run's clock and the slots of
// the run's keys it touched (the slot moved; the slots the failed-over
// primary owned).
type FaultSpan struct {
	Fault      string
	Slots      []int
	Start, End time.Duration
}

// PipelineRun is one path's pipelined workload: every key has one writer
// that sends its batches one after another, so a key's commands are
// sequential.
type PipelineRun struct {
	// Path names the code the caller went through.
	Path       string
	Cmds       []PipeCmd
	Finals     []PipeFinal
	Faults     []FaultSpan
	MinBatches int
	// Poison is the value a poisoned key holds.
	Poison string
}

func result(name string, s Status, msg, cex string) Verdict {
	return Verdict{Checker: name, Status: s, Message: msg, Counterexample: cex}
}

// premise checks what both pipeline checkers need: enough batches, and
// commands in flight on the faulted slots while each fault lasted — else
// the run never met the redirects it is about.
func (r PipelineRun) premise() string {
	batches := map[int]bool{}
	for _, c := range r.Cmds {
		batches[c.Batch] = true
	}
	if len(batches) < r.MinBatches {
		return fmt.Sprintf("only %d pipelines sent, need %d", len(batches), r.MinBatches)
	}
	calls := make([]slotCall, len(r.Cmds))
	for i, c := range r.Cmds {
		calls[i] = slotCall{c.Slot, c.Call, c.Return}
	}
	return faultsMet(r.Faults, calls, "command")
}

// slotCall is one operation's slot and span, for faultsMet.
type slotCall struct {
	slot      int
	call, ret time.Duration
}

// faultsMet is the premise both the pipeline and the transaction checkers
// share: every fault had an operation on one of its slots in flight while
// it lasted ("" when so), else the run never met what the fault does.
func faultsMet(faults []FaultSpan, calls []slotCall, what string) string {
	if len(faults) == 0 {
		return "no fault recorded"
	}
	for _, f := range faults {
		in := map[int]bool{}
		for _, s := range f.Slots {
			in[s] = true
		}
		met := false
		for _, c := range calls {
			if in[c.slot] && c.call <= f.End && c.ret >= f.Start {
				met = true
				break
			}
		}
		if !met {
			return fmt.Sprintf("no %s on a slot of %s was in flight while it lasted", what, f.Fault)
		}
	}
	return ""
}

// byKey groups command indices by key, in call order.
func (r PipelineRun) byKey() ([]string, map[string][]int) {
	m := map[string][]int{}
	for i, c := range r.Cmds {
		m[c.Key] = append(m[c.Key], i)
	}
	keys := make([]string, 0, len(m))
	for k, idx := range m {
		keys = append(keys, k)
		sort.SliceStable(idx, func(a, b int) bool { return r.Cmds[idx[a]].Call < r.Cmds[idx[b]].Call })
	}
	sort.Strings(keys)
	return keys, m
}

// PipelineAttributed is the pipeline requirement's silently-wrong checker
// (spec 000 §Conformance, Locality contract: per-key pipelines with
// partial-failure handling at the call site). Per key, n counts the
// INCRBYs that ran; the acknowledged ones bound it below, the unknown ones
// above. Every reply the caller attributed to a key must be that key's:
// an INCRBY's reply is Delta×(n+1) and a GET's Delta×n, within the bounds
// (another key's reply is not a multiple of this key's Delta; a write run
// twice for one reply leaves the bounds). A poisoned key never answers an
// INCRBY. At the read-back every key holds Delta×n within its bounds:
// below, an acknowledged write was lost; above, a write the caller was
// told failed (not run) was applied. Premises: enough pipelines, traffic
// on every faulted slot during its fault, and every key read back.
func pipelineAttributed(r PipelineRun) Verdict {
	const name = "pipeline-attributed"
	if why := r.premise(); why != "" {
		return result(name, Unknown, why, "")
	}
	finals := map[string]PipeFinal{}
	for _, f := range r.Finals {
		finals[f.Key] = f
	}
	keys, byKey := r.byKey()
	var bad []string
	foreign, lost, phantom, judged := 0, 0, 0, 0
	for _, k := range keys {
		var lo, hi int64
		var delta int64
		poisoned := false
		for _, i := range byKey[k] {
			c := r.Cmds[i]
			delta, poisoned = c.Delta, c.Poisoned
			switch {
			case c.Kind == PipeIncr && c.Answered():
				judged++
				n, ok := multiple(c.Int, delta)
				if poisoned || !ok || n < lo+1 || n > hi+1 {
					foreign++
					bad = append(bad, fmt.Sprintf("%s (batch %d): INCRBY %d answered %d, want %d×%d..%d", k, c.Batch, delta, c.Int, delta, lo+1, hi+1))
					switch {
					case ok && !poisoned:
						lo, hi = n, n // the key's own count, off its bounds
					default:
						hi++ // not this key's reply: whether its own command ran is unknown
					}
					continue
				}
				lo, hi = n, n
			case c.Kind == PipeIncr && c.unknownOutcome():
				hi++
			case c.Kind == PipeGet && c.Answered():
				judged++
				n, ok := multiple(c.Int, delta)
				if poisoned {
					continue // a GET of a poisoned key reads the poison; its value is not a counter
				}
				if !ok || n < lo || n > hi {
					foreign++
					bad = append(bad, fmt.Sprintf("%s (batch %d): GET answered %d, want %d×%d..%d", k, c.Batch, c.Int, delta, lo, hi))
					continue
				}
				lo, hi = n, n
			}
		}
		f, ok := finals[k]
		if !ok || !f.Read {
			return result(name, Unknown, fmt.Sprintf("key %s was not read back (%s)", k, f.Err), "")
		}
		if poisoned {
			if f.Value != r.Poison {
				phantom++
				bad = append(bad, fmt.Sprintf("%s: poisoned key reads back %q", k, f.Value))
			}
			continue
		}
		v, err := parseInt(f.Value)
		n, mult := multiple(v, delta)
		switch {
		case err != nil || !mult:
			foreign++
			bad = append(bad, fmt.Sprintf("%s: reads back %q, not a multiple of its delta %d", k, f.Value, delta))
		case n < lo:
			lost++
			bad = append(bad, fmt.Sprintf("%s: reads back %d×%d, but %d INCRBYs were acknowledged", k, delta, n, lo))
		case n > hi:
			phantom++
			bad = append(bad, fmt.Sprintf("%s: reads back %d×%d, but at most %d INCRBYs ran by what its caller was told (acknowledged or unknown): %d applied that were reported failed", k, delta, n, hi, n-hi))
		}
	}
	if len(bad) > 0 {
		return result(name, Fail, fmt.Sprintf("%d replies attributed to the wrong key (or run twice), %d acknowledged writes lost, %d keys with writes applied that were reported failed, over %d keys",
			foreign, lost, phantom, len(keys)), strings.Join(firstN(bad, 6), "\n"))
	}
	return result(name, Pass, fmt.Sprintf("%d keys, %d pipelines, %d replies judged: every reply was its key's own, every acknowledged write kept, no write reported failed was applied", len(keys), r.batches(), judged), "")
}

// PipelineComplete is the pipeline requirement's errors checker: every
// command of every pipeline got its own outcome (none silently dropped),
// every poisoned key's INCRBY failed on its own, and every other command
// completed — the path followed MOVED/ASK per command through the slot
// move and the failover instead of handing them to the caller, and no key
// carried another key's failure. Premises as PipelineAttributed's.
func pipelineComplete(r PipelineRun) Verdict {
	const name = "pipeline-complete"
	if why := r.premise(); why != "" {
		return result(name, Unknown, why, "")
	}
	kinds := map[string]int{}
	var bad []string
	missing, unsurfaced, failed := 0, 0, 0
	for _, c := range r.Cmds {
		switch {
		case c.Missing:
			missing++
			bad = append(bad, fmt.Sprintf("%s (batch %d): no outcome at all", c.Key, c.Batch))
		case c.Poisoned && c.Kind == PipeIncr && c.ErrKind == "":
			unsurfaced++
			bad = append(bad, fmt.Sprintf("%s (batch %d): poisoned key's INCRBY reported success (%d)", c.Key, c.Batch, c.Int))
		case c.Poisoned && c.Kind == PipeIncr:
		case c.ErrKind != "":
			failed++
			kinds[c.ErrKind]++
			bad = append(bad, fmt.Sprintf("%s (batch %d): %s", c.Key, c.Batch, c.Err))
		}
	}
	if len(bad) > 0 {
		return result(name, Fail, fmt.Sprintf("%d commands without an outcome, %d per-key failures not surfaced, %d commands failed (%s) over %d commands",
			missing, unsurfaced, failed, kindList(kinds), len(r.Cmds)), strings.Join(firstN(bad, 6), "\n"))
	}
	return result(name, Pass, fmt.Sprintf("%d commands in %d pipelines: each answered on its own, every poisoned key's failure its own, every other command completed", len(r.Cmds), r.batches()), "")
}

func (r PipelineRun) batches() int {
	b := map[int]bool{}
	for _, c := range r.Cmds {
		b[c.Batch] = true
	}
	return len(b)
}

// multiple returns v/d when v is a non-negative multiple of d.
func multiple(v, d int64) (int64, bool) {
	if d <= 0 || v < 0 || v%d != 0 {
		return 0, false
	}
	return v / d, true
}

func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	var v int64
	_, err := fmt.Sscan(s, &v)
	if err == nil && fmt.Sprint(v) != s {
		err = fmt.Errorf("not an integer: %q", s)
	}
	return v, err
}

func kindList(m map[string]int) string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
	}
	return s
}
