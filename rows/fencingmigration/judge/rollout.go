package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// stragglerIssuesCarried is rule 2(b) of the Deployment Gate (spec 000
// §Deployment Gate: "all older ReplicaSets at zero"; §Safety theorems T2)
// judged by its consequence: a pod of the previous phase still terminating
// and still taking sessions issues generations into the old counter; the
// backfill carries only what was issued before it ran, and C issues from the
// new counter alone. So no listed, serving straggler may acknowledge an
// acquire after the backfill began, and every generation a straggler was
// acknowledged must be at or below its session's counter read back through
// C after the deploy (history.OpKnown) — else C issues it again.
//
// Premises, checked: a straggler the rollout listed took sessions while it
// lingered (Listed and Serving) and was acknowledged at least one acquire
// after it left the gauges (else nothing could be issued behind the
// backfill); every session it acquired has a read-back after that acquire.
// A broken premise is Unknown.
func stragglerIssuesCarried(ops []history.MigrationOp, stragglers []history.Straggler, backfillAt time.Duration) check.Result {
	const name = "straggler-issues-carried"
	pods := map[string]history.Straggler{}
	for _, s := range stragglers {
		if s.Listed && s.Serving {
			pods[s.Pod] = s
		}
	}
	if len(pods) == 0 {
		return check.Unknownf(name, "premise: no straggler both listed by the rollout and taking sessions while it lingered")
	}
	var issued []history.MigrationOp
	for _, op := range ops {
		if st, ok := pods[op.Pod]; ok && op.Kind == history.OpAcquire && op.OK && !op.Unknown && op.Call >= st.Left {
			issued = append(issued, op)
		}
	}
	if len(issued) == 0 {
		return check.Unknownf(name, "premise: no straggler was acknowledged an acquire after it left the gauges")
	}
	var after, behind []string
	unread := 0
	for _, a := range issued {
		if a.Return > backfillAt {
			after = append(after, fmt.Sprintf("%v [straggler %s, phase %s] returned @%v, after the backfill @%v", a.FencingOp, a.Pod, a.Phase, a.Return.Round(time.Millisecond), backfillAt.Round(time.Millisecond)))
		}
		read := false
		for _, r := range ops {
			if r.Kind != history.OpKnown || r.Unknown || r.Session != a.Session || r.Call <= a.Return {
				continue
			}
			read = true
			if a.Gen > r.Gen {
				behind = append(behind, fmt.Sprintf("%v [straggler %s, phase %s] above the counter %d read back through %s @%v: the next acquire issues it again", a.FencingOp, a.Pod, a.Phase, r.Gen, r.Phase, r.Call.Round(time.Millisecond)))
				break
			}
		}
		if !read {
			unread++
		}
	}
	if len(after) > 0 || len(behind) > 0 {
		return check.Failf(name, strings.Join(append(check.Elide(behind, 3), check.Elide(after, 3)...), "\n"),
			"%d of %d straggler acquires returned after the backfill @%v; %d generations they issued are above the counter C reads", len(after), len(issued), backfillAt.Round(time.Millisecond), len(behind))
	}
	if unread > 0 {
		return check.Unknownf(name, "premise: %d of %d straggler acquires have no read-back of their session's counter after them", unread, len(issued))
	}
	return check.Passf(name, "%d straggler acquires, all returned before the backfill @%v and all carried into the counter C reads", len(issued), backfillAt.Round(time.Millisecond))
}

// phaseIndex orders the script phases (spec 000 §The protocol: O, A, B, C).
var phaseIndex = map[string]int{"O": 0, "A": 1, "B": 2, "C": 3}

// phasesAdjacent is E1's phase adjacency (spec 000 §Deployment Gate rule
// 2(a) and rule 4; §Safety theorems proof sketch: "no pod that skips a
// keyspace coexists with a pod that writes it"): no observation of the
// fleet ever shows live pods of two phases more than one apart (O with B,
// O with C, A with C).
//
// Premises, checked: at least minSamples observations, and some
// observation shows two adjacent phases live at once — a rollout seen in
// flight, the only time a skip could show. A broken premise is Unknown.
func phasesAdjacent(samples []history.KeyspaceSample, minSamples int) check.Result {
	const name = "phases-adjacent"
	if len(samples) < minSamples {
		return check.Unknownf(name, "premise: only %d fleet observations, need %d", len(samples), minSamples)
	}
	inFlight := 0
	var bad []string
	var since, until time.Duration
	for _, s := range samples {
		lo, hi := 4, -1
		for p, n := range s.Pods {
			i, ok := phaseIndex[p]
			if !ok || n == 0 {
				continue
			}
			lo, hi = min(lo, i), max(hi, i)
		}
		switch {
		case hi-lo > 1:
			if len(bad) == 0 {
				since = s.At
			}
			until = s.At
			bad = append(bad, s.String())
		case hi-lo == 1:
			inFlight++
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 3), "\n"), "%d of %d observations showed pods of non-adjacent phases live at once (first @%v, last @%v)", len(bad), len(samples), since.Round(time.Millisecond), until.Round(time.Millisecond))
	}
	if inFlight == 0 {
		return check.Unknownf(name, "premise: no observation of %d caught a rollout in flight (two adjacent phases live at once)", len(samples))
	}
	return check.Passf(name, "%d observations, %d with a rollout in flight, never two non-adjacent phases live at once", len(samples), inFlight)
}

// GateStep is one step asked of the deployment gate, as its decision log
// records it: whether it asked to move the phase, whether it was allowed,
// and the target and mode before and after.
type GateStep struct {
	Step      string
	MovePhase bool
	Allowed   bool
	From, To  string
	ModeFrom  string
	ModeTo    string
}

// gateModeDoors judges the mode doors as the gate answered real requests
// (spec 000 §Deployment Gate rule 4; §Safety theorems T3; A3): no allowed
// step leaves enabled (the one-way door), no allowed step moves the phase
// while the mode is or becomes anything but disabled, and no allowed step
// moves the phase and the mode at once.
//
// Premises, checked: the compatible door was opened, a phase move was asked
// in compatible and one in enabled, and a revert was asked in enabled — each
// door was tried where it must stay shut. A broken premise is Unknown.
func gateModeDoors(steps []GateStep) check.Result {
	const name = "gate-mode-doors"
	var opened, phaseInCompat, phaseInEnabled, revertInEnabled bool
	var bad []string
	for _, s := range steps {
		if s.Allowed && s.ModeFrom == "disabled" && s.ModeTo == "compatible" {
			opened = true
		}
		if s.MovePhase && s.ModeFrom == "compatible" {
			phaseInCompat = true
		}
		if s.MovePhase && s.ModeFrom == "enabled" {
			phaseInEnabled = true
		}
		if !s.MovePhase && s.ModeFrom == "enabled" && s.Step == "revert mode" {
			revertInEnabled = true
		}
		if !s.Allowed {
			continue
		}
		what := fmt.Sprintf("%s allowed (%s/%s → %s/%s)", s.Step, s.From, s.ModeFrom, s.To, s.ModeTo)
		switch {
		case s.ModeFrom == "enabled" && s.ModeTo != "enabled":
			bad = append(bad, what+": left the one-way door")
		case s.From != s.To && s.ModeFrom != s.ModeTo:
			bad = append(bad, what+": phase and mode moved in one step")
		case s.From != s.To && (s.ModeFrom != "disabled" || s.ModeTo != "disabled"):
			bad = append(bad, what+": phase moved outside disabled")
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 5), "\n"), "the gate opened a mode door it must keep shut %d times", len(bad))
	}
	var missing []string
	for _, p := range []struct {
		what string
		ok   bool
	}{{"the compatible door opened", opened}, {"a phase move asked in compatible", phaseInCompat},
		{"a phase move asked in enabled", phaseInEnabled}, {"a revert asked in enabled", revertInEnabled}} {
		if !p.ok {
			missing = append(missing, p.what)
		}
	}
	if len(missing) > 0 {
		return check.Unknownf(name, "premise: the log of %d steps lacks %s", len(steps), strings.Join(missing, ", "))
	}
	return check.Passf(name, "%d steps: every door that must stay shut was tried and refused", len(steps))
}
