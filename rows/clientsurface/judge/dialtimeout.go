package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// DialTimeoutChecker names DialTimeoutBound's results.
const DialTimeoutChecker = "dial-timeout-bound"

// Call is one recorded call of the dial-timeout workload, on the run's
// clock (offsets from its start).
type Call struct {
	// Shard is the primary the call's key belongs to; Target marks the
	// shard whose primary was blackholed.
	Shard  string
	Target bool
	Start  time.Duration
	// Took is how long the call ran; for a call still running when the
	// workload stopped, until the stop (Unfinished).
	Took       time.Duration
	Err        string
	Unfinished bool
}

// DialTimeoutRun is what DialTimeoutBound judges: the calls, the
// blackhole's window, and the bounds the pool was configured for.
type DialTimeoutRun struct {
	Calls []Call
	// From and To are the blackhole's window: the target's port answered
	// no SYN in between.
	From, To time.Duration
	// Bound is the most a call on the target shard may take:
	// DialTimeout + ReadTimeout + slack, from the pool's own options.
	Bound time.Duration
	// Healthy is the most a call on another shard may take during the
	// window (the pool's DialTimeout: a healthy call that took as long as
	// a dial waited behind the blackholed node).
	Healthy time.Duration
	// MinTarget is how many calls on the target shard must start inside
	// the window for a pass to mean anything.
	MinTarget int
}

// DialTimeoutBound judges spec 000 §Client Architecture ("a dead primary
// halts dispatch") for a node that answers no SYN: every call on the
// blackholed shard that started in the window fails, loudly, within
// Bound — never hangs, never succeeds late — and calls on the other
// shards keep succeeding within Healthy.
//
// A call is judged when it ran inside the window (started before the heal,
// still running after the cut); only a success that began and ended inside
// it is impossible, since the node served calls either side of it.
//
// Premises: the window is at least two bounds long (else a hang cannot be
// told from a slow failure) and at least MinTarget calls on the target and
// one on another shard started inside it. A violation is decisive even
// when a premise fails (one hung call is a hang); a pass needs them.
func dialTimeoutBound(r DialTimeoutRun) Verdict {
	res := Verdict{Checker: DialTimeoutChecker}
	var target, healthy, failedFast int
	var slowest time.Duration
	var bad []string
	for _, c := range r.Calls {
		// A call counts when it ran while the port was blackholed: it
		// started before the heal and was still running after the cut.
		if c.Start >= r.To || c.Start+c.Took <= r.From {
			continue
		}
		if c.Target {
			target++
			slowest = max(slowest, c.Took)
			switch {
			case c.Took > r.Bound:
				bad = append(bad, fmt.Sprintf("target %s call at %v took %v > bound %v (%s)", c.Shard, c.Start.Round(time.Millisecond), c.Took.Round(time.Millisecond), r.Bound, outcome(c)))
			case c.Err == "" && !c.Unfinished && c.Start >= r.From && c.Start+c.Took < r.To:
				// Only a success wholly inside the window is impossible;
				// one that straddles the cut or the heal was served by a
				// connection either side of it.
				bad = append(bad, fmt.Sprintf("target %s call at %v succeeded inside the blackhole window", c.Shard, c.Start.Round(time.Millisecond)))
			default:
				failedFast++
			}
			continue
		}
		healthy++
		switch {
		case c.Err != "" || c.Unfinished:
			bad = append(bad, fmt.Sprintf("healthy %s call at %v failed: %s", c.Shard, c.Start.Round(time.Millisecond), outcome(c)))
		case c.Took > r.Healthy:
			bad = append(bad, fmt.Sprintf("healthy %s call at %v took %v > %v (held behind the blackholed node)", c.Shard, c.Start.Round(time.Millisecond), c.Took.Round(time.Millisecond), r.Healthy))
		}
	}
	res.Observed = []string{fmt.Sprintf("%d calls on the blackholed shard ran inside the %v window (%d failed within %v, slowest %v), %d on the other shards",
		target, (r.To - r.From).Round(time.Millisecond), failedFast, r.Bound, slowest.Round(time.Millisecond), healthy)}
	if len(bad) > 0 {
		sort.Strings(bad)
		res.Status = Fail
		res.Message = fmt.Sprintf("%d of %d calls that ran inside the blackhole window broke the bound: %s", len(bad), target+healthy, bad[0])
		res.Counterexample = strings.Join(head(bad, 10), "\n")
		return res
	}
	switch {
	case r.To-r.From < 2*r.Bound:
		res.Status, res.Message = Unknown, fmt.Sprintf("premise: the blackhole window %v is shorter than two bounds (%v)", r.To-r.From, 2*r.Bound)
	case target < r.MinTarget:
		res.Status, res.Message = Unknown, fmt.Sprintf("premise: only %d calls on the blackholed shard ran inside the window (want %d)", target, r.MinTarget)
	case healthy == 0:
		res.Status, res.Message = Unknown, "premise: no call on another shard ran inside the window"
	default:
		res.Status = Pass
		res.Message = fmt.Sprintf("all %d calls on the blackholed shard failed within %v (slowest %v); %d calls on the other shards answered within %v",
			target, r.Bound, slowest.Round(time.Millisecond), healthy, r.Healthy)
	}
	return res
}

func outcome(c Call) string {
	switch {
	case c.Unfinished:
		return "still running at the stop"
	case c.Err == "":
		return "succeeded"
	}
	return c.Err
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
