package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// MeshExcused is h without what a late-renewed session could have caused
// (spec 002 §5 KeyspaceReaper: a record not renewed within its TTL lapses;
// a session the runner renewed late may have lapsed through no fault of the
// mesh): the sessions themselves, every send routed or delivered to one,
// every send to a late session's recipient while it lived (from its
// register's 200 to its end, or the history's end), and the control errors
// of calls on one (the recorder names a call "<op> <session> at …",
// workload.MeshRecorder.ControlError). What is left is judged as usual:
// a failure there is a catch the late sessions cannot explain.
func MeshExcused(h MeshHistory, late []string) MeshHistory {
	if len(late) == 0 {
		return h
	}
	isLate := map[string]bool{}
	for _, sid := range late {
		isLate[sid] = true
	}
	type span struct{ from, till time.Duration }
	lived := map[string][]span{} // recipient → its late sessions' lives
	out := h
	out.Sessions, out.Sends, out.Deliveries, out.ControlErrors = nil, nil, nil, nil
	for _, s := range h.Sessions {
		if !isLate[s.SessionID] {
			out.Sessions = append(out.Sessions, s)
			continue
		}
		till := s.Ended
		if till == 0 {
			till = h.End
		}
		lived[s.Recipient] = append(lived[s.Recipient], span{s.Registered, till})
	}
	for _, s := range h.Sends {
		during := slices.ContainsFunc(lived[s.Recipient], func(l span) bool { return s.Start >= l.from && (l.till == 0 || s.Start <= l.till) })
		if !isLate[s.SessionID] && !during {
			out.Sends = append(out.Sends, s)
		}
	}
	for _, d := range h.Deliveries {
		if !isLate[d.SessionID] {
			out.Deliveries = append(out.Deliveries, d)
		}
	}
	for _, e := range h.ControlErrors {
		if !slices.ContainsFunc(late, func(sid string) bool { return strings.Contains(e, " "+sid+" at ") }) {
			out.ControlErrors = append(out.ControlErrors, e)
		}
	}
	return out
}

// MeshIndexExcused is probes without those of late-renewed sessions
// (MeshExcused).
func MeshIndexExcused(probes []MeshIndexProbe, late []string) []MeshIndexProbe {
	var out []MeshIndexProbe
	for _, p := range probes {
		if !slices.Contains(late, p.SessionID) {
			out = append(out, p)
		}
	}
	return out
}

// LatePremise decides a check over a run whose runner renewed some
// sessions late (late, non-empty): full is the check judged over the whole
// history, excused the same check over it without the late sessions
// (MeshExcused). The premise fires only when it must: a full verdict that
// is not a failure stands (nothing to excuse); a failure that stays once
// the late sessions are left out stands as excused judged it (a catch the
// runner's lateness cannot explain, judged on the rest); only a failure
// that vanishes with them — the checks found at fault exactly the
// sessions the runner renewed late — makes the check inconclusive on the
// premise, the failure kept in Observed (as All keeps a failure an
// unconfirmed fault voided).
func LatePremise(premise string, full, excused check.Result, late []string) check.Result {
	if len(late) == 0 || full.Status != check.Fail {
		return full
	}
	if excused.Status == check.Fail {
		return excused
	}
	r := check.FaultNotConfirmed(full.Checker, premise, fmt.Errorf("the checks failed only on sessions the runner renewed TTL or more late (%s), which may have lapsed by the runner's doing", strings.Join(meshFirst(late, 5), ", ")))
	r.Observed = []string{"voided: " + full.Message}
	return r
}
