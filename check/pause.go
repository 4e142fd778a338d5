package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// PauseTally is what one paused pod presented after it resumed, at the
// generations it believed it held, once each of those leases was certainly
// dead: superseded (a newer generation of the session was issued before the
// call — by another owner, or by the pod itself re-acquiring), or expired
// (its last extension returned more than a TTL before the call).
type PauseTally struct {
	Pause history.PodPause
	// Frames are validate_fenced_header calls; Refused those not answered valid.
	Frames, FramesRefused int
	// Renews and Releases are the renew/release calls; Refused those that
	// reported no effect.
	Renews, RenewsRefused     int
	Releases, ReleasesRefused int
	// The stale frames by cause of death: superseded by another owner's
	// lease, by the pod's own newer lease, or expired.
	FramesOther, FramesSelf, FramesExpired int
	// SelfRenews and SelfReleases count the renews and releases that met
	// the pod's own newer lease (the delayed-call case of the same owner).
	SelfRenews, SelfReleases int
	// Undecided: calls on a belief not yet certainly dead (not judged).
	Undecided int
	bad       []string
}

func (t PauseTally) String() string {
	return fmt.Sprintf("pause %s (%s, froze in phase %s, frozen %v, %d leases believed): %d stale frames presented, %d refused (%d superseded by another owner, %d by its own newer lease, %d expired); %d delayed renews, %d refused (%d on its own newer lease); %d delayed releases, %d refused (%d on its own newer lease); %d calls not judged (lease not certainly dead)",
		t.Pause.Label, t.Pause.Pod, t.Pause.Phase, (t.Pause.To - t.Pause.From).Round(time.Millisecond), len(t.Pause.Beliefs),
		t.Frames, t.FramesRefused, t.FramesOther, t.FramesSelf, t.FramesExpired,
		t.Renews, t.RenewsRefused, t.SelfRenews, t.Releases, t.ReleasesRefused, t.SelfReleases, t.Undecided)
}

// TallyPauses judges, for every pause, the paused pod's calls after it
// resumed on the leases it believed it held. A lease is certainly dead at a
// call when an acquire of its session at a higher generation returned before
// the call began (generations only increase: it can never be live again), or
// when every acquire/renew that could have extended it returned more than
// ttl+slack before the call. Calls on a lease not certainly dead are counted
// as undecided, never guessed.
func TallyPauses(ops []history.MigrationOp, pauses []history.PodPause, ttl, slack time.Duration) []PauseTally {
	acquires := map[string][]history.MigrationOp{} // session → successful acquires
	for _, op := range ops {
		if op.Kind == history.OpAcquire && op.OK && !op.Unknown {
			acquires[op.Session] = append(acquires[op.Session], op)
		}
	}
	out := make([]PauseTally, 0, len(pauses))
	for _, p := range pauses {
		t := PauseTally{Pause: p}
		// the last moment each believed lease could have been extended:
		// any acquire/renew of it by the pod before it resumed (an unknown
		// outcome counts: it may have applied).
		lastExt := map[string]time.Duration{}
		for _, op := range ops {
			if op.Pod != p.Pod || op.Call >= p.To || p.Beliefs[op.Session] != op.Gen || op.Gen == 0 {
				continue
			}
			if (op.Kind == history.OpAcquire || op.Kind == history.OpRenew) && (op.OK || op.Unknown) {
				lastExt[op.Session] = max(lastExt[op.Session], op.Return)
			}
		}
		for _, op := range ops {
			gen, believed := p.Beliefs[op.Session]
			if op.Pod != p.Pod || op.Call < p.To || !believed || op.Gen != gen || op.Unknown {
				continue
			}
			if op.Kind != history.OpValidate && op.Kind != history.OpRenew && op.Kind != history.OpRelease {
				continue
			}
			var newer *history.MigrationOp
			for i, a := range acquires[op.Session] {
				if a.Gen > gen && a.Return < op.Call && (newer == nil || a.Return < newer.Return) {
					newer = &acquires[op.Session][i]
				}
			}
			expired := false
			if last, ok := lastExt[op.Session]; ok {
				expired = last+ttl+slack <= op.Call
			}
			cause, frameCause := "", (*int)(nil)
			switch {
			case newer != nil && newer.Owner == p.Pod:
				cause = fmt.Sprintf("its own newer lease at gen %d (re-acquired @%v)", newer.Gen, newer.Return.Round(time.Millisecond))
				frameCause = &t.FramesSelf
				switch op.Kind {
				case history.OpRenew:
					t.SelfRenews++
				case history.OpRelease:
					t.SelfReleases++
				}
			case newer != nil:
				cause = fmt.Sprintf("%s's lease at gen %d (acquired @%v)", newer.Owner, newer.Gen, newer.Return.Round(time.Millisecond))
				frameCause = &t.FramesOther
			case expired:
				cause = fmt.Sprintf("an expired lease (last extended @%v, TTL %v)", lastExt[op.Session].Round(time.Millisecond), ttl)
				frameCause = &t.FramesExpired
			default:
				t.Undecided++
				continue
			}
			switch op.Kind {
			case history.OpValidate:
				t.Frames++
				*frameCause++
				if op.Verdict != 1 {
					t.FramesRefused++
				} else {
					t.bad = append(t.bad, fmt.Sprintf("stale frame accepted: %v [pod %s, phase %s] — the fence took it though the session is %s", op.FencingOp, op.Pod, op.Phase, cause))
				}
			case history.OpRenew:
				t.Renews++
				if !op.OK {
					t.RenewsRefused++
				} else {
					t.bad = append(t.bad, fmt.Sprintf("renewed in another lease's name: %v [pod %s, phase %s] — the session is %s", op.FencingOp, op.Pod, op.Phase, cause))
				}
			case history.OpRelease:
				t.Releases++
				if !op.OK {
					t.ReleasesRefused++
				} else {
					t.bad = append(t.bad, fmt.Sprintf("released in another lease's name: %v [pod %s, phase %s] — the session is %s", op.FencingOp, op.Pod, op.Phase, cause))
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// PausedPodsFenced is the paused-pod rule (spec 000 §Safety theorems, the
// fence and the owner+generation guards of §Per-phase operation table):
// after a pod resumes from a pause past its lease TTL, every frame it
// presents at a generation that is certainly dead is refused by the fence,
// and none of its renews or releases of such a generation takes effect —
// neither on another owner's lease nor on the newer lease the same pod
// re-acquired meanwhile. It is Unknown unless every pause presented at least
// one dead frame and, over all pauses, a delayed renew and a delayed release
// met the pod's own newer lease (the case a generation-blind guard gets
// wrong).
func PausedPodsFenced(ops []history.MigrationOp, pauses []history.PodPause, ttl, slack time.Duration) Result {
	const name = "paused-pods-fenced"
	if len(pauses) == 0 {
		return unknown(name, "no pod was paused")
	}
	tallies := TallyPauses(ops, pauses, ttl, slack)
	var bad, observed []string
	frames, refused, selfRenews, selfReleases := 0, 0, 0, 0
	for _, t := range tallies {
		observed = append(observed, t.String())
		bad = append(bad, t.bad...)
		frames += t.Frames
		refused += t.FramesRefused
		selfRenews += t.SelfRenews
		selfReleases += t.SelfReleases
		if t.Frames == 0 && len(t.bad) == 0 {
			r := unknown(name, "pause %s of %s presented no certainly-stale frame (%d beliefs)", t.Pause.Label, t.Pause.Pod, len(t.Pause.Beliefs))
			r.Observed = observed
			return r
		}
	}
	var res Result
	switch {
	case len(bad) > 0:
		res = fail(name, strings.Join(first(bad, 4), "\n"), "%d calls of resumed paused pods took effect on a dead lease (%d stale frames presented, %d refused)", len(bad), frames, refused)
	case selfRenews == 0 || selfReleases == 0:
		res = unknown(name, "no delayed renew (%d) or release (%d) met the paused pod's own newer lease: the same-owner case was not exercised", selfRenews, selfReleases)
	default:
		res = pass(name, "%d pauses: %d stale frames presented, all refused; %d delayed renews and %d delayed releases met the pod's own newer lease, none took effect", len(pauses), frames, selfRenews, selfReleases)
	}
	res.Observed = observed
	return res
}
