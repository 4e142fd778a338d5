package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing/protocol"
)

// podValidates judges the validate_fenced_header calls the relay pods make
// on their own frames (traffic.Fleet: each lane validates one held session
// per tick), from the history alone, by two sound real-time rules:
//
//   - a pod's frame is valid while its lease is CERTAINLY live — from the
//     return of the acquire or successful renew that (re)started its TTL
//     until that call's start plus ttl minus slack, and until its release
//     began (as check.MigrationSingleAuthority) — whatever phase the pod runs and
//     wherever the lease lives (the table: A/B validate the union pair);
//   - a frame below a generation whose acquire was acknowledged before the
//     validate began is stale.
//
// Calls inside neither are not judged; fewer than minJudged judged is Unknown.
func podValidates(ops []history.MigrationOp, ttl, slack time.Duration, minJudged int) check.Result {
	const name = "pod-validates"
	type leaseKey struct {
		session, owner string
		gen            int64
	}
	type window struct{ from, to time.Duration }
	live := map[leaseKey][]window{}
	released := map[leaseKey]time.Duration{}
	acked := map[string][]history.MigrationOp{}
	for _, op := range ops {
		k := leaseKey{op.Session, op.Owner, op.Gen}
		switch {
		case op.Kind == history.OpRelease && (op.OK || op.Unknown):
			if t, ok := released[k]; !ok || op.Call < t {
				released[k] = op.Call
			}
		case op.Unknown || !op.OK:
		case op.Kind == history.OpAcquire || op.Kind == history.OpRenew:
			live[k] = append(live[k], window{op.Return, op.Call + ttl - slack})
			if op.Kind == history.OpAcquire {
				acked[op.Session] = append(acked[op.Session], op)
			}
		}
	}
	judged := map[string]int{}
	var bad []string
	n := 0
	for _, op := range ops {
		if op.Kind != history.OpValidate || op.Unknown {
			continue
		}
		k := leaseKey{op.Session, op.Owner, op.Gen}
		end, rel := released[k]
		certain := false
		for _, w := range live[k] {
			to := w.to
			if rel {
				to = min(to, end)
			}
			if w.from <= op.Call && op.Return < to {
				certain = true
				break
			}
		}
		var above int64
		for _, a := range acked[op.Session] {
			if a.Return < op.Call {
				above = max(above, a.Gen)
			}
		}
		want := 0
		switch {
		case certain:
			want = int(protocol.VerdictValid)
		case op.Gen < above:
			want = int(protocol.VerdictStale)
		default:
			continue
		}
		n++
		judged[op.Phase]++
		if op.Verdict != want {
			why := "its lease was certainly live"
			if want == int(protocol.VerdictStale) {
				why = fmt.Sprintf("generation %d was acknowledged before", above)
			}
			bad = append(bad, fmt.Sprintf("%v [pod %s, phase %s, lane %s]: want %s, %s", op.FencingOp, op.Pod, op.Phase, op.Lane, protocol.Verdict(want), why))
		}
	}
	var per []string
	for _, p := range protocol.Phases {
		per = append(per, fmt.Sprintf("%s %d", p, judged[string(p)]))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 3), "\n"), "%d of %d judged pod validates wrong (judged per phase: %s)", len(bad), n, strings.Join(per, ", "))
	}
	if n < minJudged {
		return check.Unknownf(name, "only %d pod validates judged, need %d", n, minJudged)
	}
	return check.Passf(name, "%d pod validates of their own frames judged (per phase: %s), every one as the real-time rules say", n, strings.Join(per, ", "))
}

// podValidatesOn is podValidates over the validates of one lane's pods,
// its message naming the lane ("reliable lane: …"), so a result that
// combines the lanes says which one a verdict is about.
func podValidatesOn(lane string, ops []history.MigrationOp, ttl, slack time.Duration, minJudged int) check.Result {
	r := podValidates(ops, ttl, slack, minJudged)
	r.Message = lane + " lane: " + r.Message
	return r
}
