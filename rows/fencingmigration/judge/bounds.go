package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// drainBounded judges a C-gate step asked while the old keyspace could not
// drain (a stuck pod renewing its lease there forever): the operator must
// end the step itself with its drain-stuck error within bound (+tolerance
// for the last observation and the clock reads), and the gate must never
// admit target meanwhile (spec 000 §The protocol, C-gate: "Full-B therefore
// implies drain within bounded time — but the gate checks the state";
// §Deployment Gate rule 3). A wait that only the scenario's cut, a generic
// timeout or the run's end stops is the unbounded drain.
//
// Premise: samples, the observer's atomic counts, show the old keyspace
// live in every one of at least minSamples observations from the ask to the
// end of the bound — else the drain could have finished, and ending it
// proves nothing (Unknown).
func drainBounded(a DrainAttempt, samples []history.KeyspaceSample, target string, bound, tolerance time.Duration, minSamples int) check.Result {
	const name = "drain-bounded"
	until := a.Asked + bound
	if a.Ended > a.Asked && a.Ended < until {
		until = a.Ended
	}
	n, ranC := 0, ""
	for _, s := range samples {
		if s.At < a.Asked || s.At > a.Asked+bound {
			continue
		}
		if s.Pods[target] > 0 && ranC == "" {
			ranC = s.String()
		}
		if s.At > until {
			continue
		}
		n++
		if s.OldLeases == 0 {
			return check.Unknownf(name, "the old keyspace was observed empty %v after %s was asked (%s): the drain could finish, nothing stuck to bound", (s.At - a.Asked).Round(time.Millisecond), a.Step, s)
		}
	}
	if n < minSamples {
		return check.Unknownf(name, "%d observations of the old keyspace while %s waited, want at least %d", n, a.Step, minSamples)
	}
	took := (a.Ended - a.Asked).Round(time.Millisecond)
	switch {
	case a.Admitted:
		return check.Failf(name, a.Step+" admitted", "the gate admitted %s after %v with old-keyspace leases live in all %d observations", a.Step, took, n)
	case ranC != "":
		return check.Failf(name, ranC, "pods ran %s while the old keyspace was live", target)
	case a.Cut:
		return check.Failf(name, a.Err, "%s was still waiting for the drain when the scenario's bound cut it %v after the ask (bound %v): the drain has no bound", a.Step, took, bound)
	case !a.Stuck:
		return check.Failf(name, a.Err, "%s ended after %v without a drain-stuck error: %s", a.Step, took, a.Err)
	case a.Ended-a.Asked > bound+tolerance:
		return check.Failf(name, a.Err, "%s ended with a drain-stuck error only after %v, past its bound %v (+%v)", a.Step, took, bound, tolerance)
	}
	return check.Passf(name, "%s refused and ended with a drain-stuck error after %v (bound %v) while all %d observations showed old-keyspace leases live; no pod ran %s", a.Step, took, bound, n, target)
}

// generationsCarried is T2 (spec 000 §Safety theorems) across one
// counter-moving step at at (the backfill, or a C admission): every
// acquire that began after at got a generation above every generation
// acknowledged before it. The backfill's max-merge (spec 000 §The protocol)
// and its re-run after any rollback (§Deployment Gate rule 4) exist for
// exactly this: phase ahead's pods issue into one counter only (B into the
// new, A into the old), and what issues after at must read it.
//
// Premise: some session whose highest generation before at was issued by a
// pod of phase ahead at or after since (its counter then ahead of the
// other) was acquired again after at; without one the step carried nothing
// that could be lost (Unknown).
func generationsCarried(ops []history.MigrationOp, since, at time.Duration, ahead string) check.Result {
	const name = "generations-carried"
	type top struct {
		gen int64
		op  history.MigrationOp
	}
	before := map[string]top{}
	var after []history.MigrationOp
	for _, op := range ops {
		if op.Kind != history.OpAcquire || !op.OK || op.Unknown {
			continue
		}
		switch {
		case op.Return <= at:
			if t, ok := before[op.Session]; !ok || op.Gen > t.gen {
				before[op.Session] = top{op.Gen, op}
			}
		case op.Call >= at:
			after = append(after, op)
		}
	}
	exercised := map[string]bool{}
	var bad []string
	for _, op := range after {
		t, ok := before[op.Session]
		if !ok {
			continue
		}
		if t.op.Phase == ahead && t.op.Call >= since {
			exercised[op.Session] = true
		}
		if op.Gen <= t.gen {
			bad = append(bad, fmt.Sprintf("%s: generation %d [%s/%s @%v] after %d [%s/%s @%v]", op.Session,
				op.Gen, op.Pod, op.Phase, op.Call.Round(time.Millisecond), t.gen, t.op.Pod, t.op.Phase, t.op.Return.Round(time.Millisecond)))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(check.Elide(bad, 3), "\n"), "%d acquires after @%v got a generation not above one acknowledged before it", len(bad), at.Round(time.Millisecond))
	}
	if len(exercised) == 0 {
		return check.Unknownf(name, "no session whose highest generation before @%v was issued by a %s pod since @%v was acquired after it", at.Round(time.Millisecond), ahead, since.Round(time.Millisecond))
	}
	return check.Passf(name, "%d acquires after @%v all above every generation before it; %d sessions last issued by %s pods were carried", len(after), at.Round(time.Millisecond), len(exercised), ahead)
}
