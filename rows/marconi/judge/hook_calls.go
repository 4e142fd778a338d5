package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Hook-call checkers of the marconi-cache-lifecycle row (spec 002 §5 and
// the §8 Stage 2 hook list): they judge the hook calls themselves — how
// many, with which arguments, when — where marconiHookTransitions judges
// the table state a call leaves.

// SweeperExpiresOnce judges the shipped on_session_expired source,
// the expiry sweeper (§5 KeyspaceReaper row; ExpirySweeper): on every
// instance whose routing table held a session when its lease lapsed,
// on_session_expired(tenant, project, session) fires exactly once, no
// earlier than the lapse (renewal start + TTL) and no later than one sweep
// period plus slack after it (renewal ack + TTL). A session the runner
// kept renewed never gets the hook on any instance; an instance that did
// not hold a lapsed session may fire it at most once (a keyspace
// notification reaches every subscriber); a session the run never had
// never gets it. Each instance keeps its own table (§3, process-local), so
// each must invalidate its own copy: one instance's call does not stand
// for another's.
//
// Premises, each Unknown when broken: two or more instances; every
// instance held at least one lapsed session; the observation ran past
// every lapse's bound; every kept session's renewals were less than TTL
// apart (else its lapse is the runner's doing).
var SweeperExpiresOnce = check.Define("marconi-cache-lifecycle/sweeper-expires-once", marconiSweeperExpiresOnce)

func marconiSweeperExpiresOnce(r MeshHookRun) check.Result {
	const name = "marconi-sweeper-expires-once"
	bound := r.SweepEvery + r.Slack
	if len(r.Instances) < 2 {
		return check.Unknownf(name, "%d mesh instances, need 2 or more", len(r.Instances))
	}
	if r.TTL <= 0 || r.SweepEvery <= 0 {
		return check.Unknownf(name, "no TTL (%v) or sweep period (%v) recorded", r.TTL, r.SweepEvery)
	}
	heldLapsed := map[string]int{}
	var lateKept []string
	var lastBound time.Duration
	for _, s := range r.Sessions {
		if s.Kept {
			if s.MaxRenewGap >= r.TTL {
				lateKept = append(lateKept, fmt.Sprintf("%s (renewed %v apart)", s.SessionID, s.MaxRenewGap.Round(time.Millisecond)))
			}
			continue
		}
		for _, i := range s.HeldBy {
			heldLapsed[i]++
		}
		lastBound = max(lastBound, s.RenewAck+r.TTL+bound)
	}
	for _, i := range r.Instances {
		if heldLapsed[i] == 0 {
			return check.Unknownf(name, "instance %s held no session whose lease lapsed: its sweeper was never exercised", i)
		}
	}
	if len(lateKept) > 0 {
		return check.Unknownf(name, "%d kept sessions were renewed TTL (%v) or more apart, so their lapse would be the runner's: %s", len(lateKept), r.TTL, strings.Join(meshFirst(lateKept, 5), ", "))
	}
	if r.Until < lastBound {
		return check.Unknownf(name, "observation ended at %v, before the last lapse's bound %v", r.Until.Round(time.Millisecond), lastBound.Round(time.Millisecond))
	}
	type key struct{ instance, sid string }
	calls := map[key][]MeshHookCall{}
	for _, c := range r.Calls {
		if c.Hook == "on_session_expired" {
			calls[key{c.Instance, c.SessionID}] = append(calls[key{c.Instance, c.SessionID}], c)
		}
	}
	known := map[string]bool{}
	var bad []string
	judged := 0
	var worst time.Duration
	for _, s := range r.Sessions {
		known[s.SessionID] = true
		for _, i := range r.Instances {
			cs := calls[key{i, s.SessionID}]
			held := slices.Contains(s.HeldBy, i)
			switch {
			case s.Kept && len(cs) > 0:
				bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) ×%d, first at %v, for a session renewed until the end", i, s.SessionID, len(cs), cs[0].At.Round(time.Millisecond)))
			case s.Kept:
			case held && len(cs) == 0:
				bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) never fired; its lease lapsed by %v and the bound was %v", i, s.SessionID, (s.RenewAck+r.TTL).Round(time.Millisecond), (s.RenewAck+r.TTL+bound).Round(time.Millisecond)))
			case len(cs) > 1:
				bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) fired %d times (at %s)", i, s.SessionID, len(cs), callTimes(cs)))
			case len(cs) == 1:
				c := cs[0]
				if held {
					judged++
				}
				if c.Tenant != s.Tenant || c.Project != s.Project {
					bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s/%s/%s), want (%s/%s/%s)", i, c.Tenant, c.Project, c.SessionID, s.Tenant, s.Project, s.SessionID))
				}
				early, late := s.RenewStart+r.TTL, s.RenewAck+r.TTL+bound
				if c.At < early {
					bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) at %v, before its lease could lapse (%v)", i, s.SessionID, c.At.Round(time.Millisecond), early.Round(time.Millisecond)))
				}
				if c.At > late {
					bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) at %v, %v after the bound %v", i, s.SessionID, c.At.Round(time.Millisecond), (c.At-late).Round(time.Millisecond), late.Round(time.Millisecond)))
				}
				if held {
					worst = max(worst, c.At-(s.RenewAck+r.TTL))
				}
			}
		}
	}
	for k, cs := range calls {
		if !known[k.sid] {
			bad = append(bad, fmt.Sprintf("%s: on_session_expired(%s) ×%d for a session the run never had", k.instance, k.sid, len(cs)))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d wrong on_session_expired calls across %d instances (%s)", len(bad), len(r.Instances), bad[0])
	}
	return check.Passf(name, "%d (instance, lapsed session) pairs across %d instances: on_session_expired exactly once each, with its arguments, at most %v after the lapse (bound: sweep %v + slack %v); no call for a kept session",
		judged, len(r.Instances), worst.Round(time.Millisecond), r.SweepEvery, r.Slack)
}

func callTimes(cs []MeshHookCall) string {
	ts := make([]string, 0, len(cs))
	for _, c := range meshFirstCalls(cs, 5) {
		ts = append(ts, c.At.Round(time.Millisecond).String())
	}
	return strings.Join(ts, ", ")
}

func meshFirstCalls(cs []MeshHookCall, n int) []MeshHookCall {
	if len(cs) > n {
		return cs[:n]
	}
	return cs
}

// controlHook is the hook the §8 Stage 2 hook list has each controller
// call make, after its store write succeeded.
var controlHook = map[string]string{
	"register":       "on_register",
	"claim_master":   "on_master_change",
	"handoff_master": "on_master_change",
}

// ControlHooksOnce judges on_register and on_master_change (§8
// Stage 2 hook list: controller_service.register → on_register(tenant,
// project, session); handoff_master and claim_master → on_master_change
// after the flag flip): every acknowledged controller call made its hook
// exactly once, on the instance it was made on, inside the call, with the
// call's arguments; neither hook fired on an instance outside such a call.
// Failed calls are not judged, and a hook call inside one is not counted
// as unasked.
//
// Premises, each Unknown when broken: each of register, claim_master and
// handoff_master acknowledged at least once, and a claim_master that took
// the flag over from an expired holder (the takeover path); no two
// acknowledged calls of the same hook on one instance overlap in time
// (their hook calls could not be told apart).
var ControlHooksOnce = check.Define("marconi-cache-lifecycle/control-hooks-once", marconiControlHooksOnce)

func marconiControlHooksOnce(r MeshHookRun) check.Result {
	const name = "marconi-control-hooks-once"
	ops := map[string]int{}
	takeovers := 0
	for _, c := range r.Controls {
		if c.Err == "" {
			ops[c.Op]++
			if c.Takeover {
				takeovers++
			}
		}
	}
	for _, op := range []string{"register", "claim_master", "handoff_master"} {
		if ops[op] == 0 {
			return check.Unknownf(name, "no acknowledged %s: its hook was never exercised", op)
		}
	}
	if takeovers == 0 {
		return check.Unknownf(name, "no acknowledged claim_master took the flag over from an expired master: the takeover path was never exercised")
	}
	for i, a := range r.Controls {
		for _, b := range r.Controls[i+1:] {
			if a.Instance == b.Instance && controlHook[a.Op] == controlHook[b.Op] && a.Start <= b.End && b.Start <= a.End {
				return check.Unknownf(name, "%s %s and %s %s on %s overlap in time: their hook calls cannot be told apart", a.Op, a.SessionID, b.Op, b.SessionID, a.Instance)
			}
		}
	}
	used := make([]bool, len(r.Calls))
	var bad []string
	for _, c := range r.Controls {
		hook := controlHook[c.Op]
		var match, wrong []int
		for j, h := range r.Calls {
			if h.Instance != c.Instance || h.Hook != hook || h.At < c.Start || h.At > c.End {
				continue
			}
			used[j] = true
			if h.Tenant == c.Tenant && h.Project == c.Project && h.SessionID == c.SessionID {
				match = append(match, j)
			} else {
				wrong = append(wrong, j)
			}
		}
		if c.Err != "" {
			continue
		}
		what := fmt.Sprintf("%s %s/%s/%s on %s [%v, %v]", c.Op, c.Tenant, c.Project, c.SessionID, c.Instance, c.Start.Round(time.Millisecond), c.End.Round(time.Millisecond))
		if c.Takeover {
			what += " (takeover from an expired master)"
		}
		for _, j := range wrong {
			h := r.Calls[j]
			bad = append(bad, fmt.Sprintf("%s: %s(%s/%s/%s) inside it, wrong arguments", what, h.Hook, h.Tenant, h.Project, h.SessionID))
		}
		switch {
		case len(match) == 0:
			bad = append(bad, fmt.Sprintf("%s: acknowledged without %s", what, hook))
		case len(match) > 1:
			bad = append(bad, fmt.Sprintf("%s: %s fired %d times", what, hook, len(match)))
		}
	}
	for j, h := range r.Calls {
		if !used[j] && (h.Hook == "on_register" || h.Hook == "on_master_change") {
			bad = append(bad, fmt.Sprintf("%s: %s(%s/%s/%s) at %v outside any controller call", h.Instance, h.Hook, h.Tenant, h.Project, h.SessionID, h.At.Round(time.Millisecond)))
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d wrong on_register/on_master_change calls (%s)", len(bad), bad[0])
	}
	return check.Passf(name, "%d register, %d claim_master (%d takeovers from an expired master) and %d handoff_master calls acknowledged: each made its hook exactly once, inside the call, on its instance, with its arguments; none fired outside one",
		ops["register"], ops["claim_master"], takeovers, ops["handoff_master"])
}
