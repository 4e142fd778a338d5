package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// stragglersDrained is the C-gate's drain by observation against stragglers
// (spec 000 §The protocol, C-gate; §Deployment Gate rule 3): the gate opened
// C at gateAt, and at that instant no lease a straggler renewed was
// certainly live — a successful renew (or acquire) by a straggler returned
// at or before gateAt and began less than ttl-slack before it means its
// old-keyspace lease was still there, renewed in place by a pod no gauge
// shows. after is the backfill: the check is Unknown unless some straggler
// renewed a lease after it (else a timer could not have been fooled, and
// the check proves nothing).
func stragglersDrained(ops []history.MigrationOp, stragglers []history.Straggler, after, gateAt, ttl, slack time.Duration) check.Result {
	const name = "stragglers-drained"
	if len(stragglers) == 0 {
		return check.Unknownf(name, "no straggler lingered")
	}
	pods := map[string]history.Straggler{}
	for _, s := range stragglers {
		pods[s.Pod] = s
	}
	// a lease the straggler released (or may have) stops being certainly
	// live when the release began.
	released := map[string]time.Duration{}
	for _, op := range ops {
		if _, ok := pods[op.Pod]; ok && op.Kind == history.OpRelease && (op.OK || op.Unknown) {
			k := fmt.Sprintf("%s|%s|%d", op.Pod, op.Session, op.Gen)
			if r, seen := released[k]; !seen || op.Call < r {
				released[k] = op.Call
			}
		}
	}
	renewsAfter := 0
	var lastLive time.Duration
	var bad []string
	for _, op := range ops {
		st, ok := pods[op.Pod]
		if !ok || !op.OK || op.Unknown || (op.Kind != history.OpRenew && op.Kind != history.OpAcquire) {
			continue
		}
		if op.Kind == history.OpRenew && op.Call >= st.Left && op.Return > after {
			renewsAfter++
		}
		until := op.Call + ttl - slack
		if r, ok := released[fmt.Sprintf("%s|%s|%d", op.Pod, op.Session, op.Gen)]; ok && r >= op.Call {
			until = min(until, r)
		}
		lastLive = max(lastLive, until)
		if op.Return <= gateAt && gateAt < until {
			bad = append(bad, fmt.Sprintf("%v [straggler %s, phase %s, left the gauges @%v]: its lease certainly live until %v", op.FencingOp, op.Pod, st.Phase, st.Left.Round(time.Millisecond), until.Round(time.Millisecond)))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 3), "\n"), "the C-gate opened at %v while %d leases renewed in place by stragglers were certainly live", gateAt.Round(time.Millisecond), len(bad))
	}
	if renewsAfter == 0 {
		return check.Unknownf(name, "no straggler renewed a lease after the backfill at %v: nothing a timer could have missed", after.Round(time.Millisecond))
	}
	return check.Passf(name, "%d straggler renews in place after the backfill at %v; the C-gate opened at %v, %v after the last straggler lease certainly lapsed", renewsAfter, after.Round(time.Millisecond), gateAt.Round(time.Millisecond), (gateAt - lastLive).Round(time.Millisecond))
}
