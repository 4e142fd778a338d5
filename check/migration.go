package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// MigrationSingleAuthority is T1 (spec 000 §Safety theorems) judged from the
// recorded history of a fleet with lease TTLs: a lease is CERTAINLY live from
// the return of its acquire (or of a successful renew) until that call's
// start plus ttl, minus slack, and until its owner's release begins. An
// acquire by anyone else that ran entirely inside such a window created a
// second live lease. Sound (no false alarm from expiry or in-flight calls);
// a fork that begins and ends between observations is the observer's job.
func MigrationSingleAuthority(ops []history.MigrationOp, ttl, slack time.Duration) Result {
	const name = "migration-single-authority"
	found, acquires := TwoAuthorities(ops, ttl, slack)
	if acquires == 0 {
		return unknown(name, "no successful acquire in the history")
	}
	if len(found) > 0 {
		return fail(name, strings.Join(first(violationTexts(found), 3), "\n"), "%d acquisitions took a session whose other lease was certainly live (two authorities)", len(found))
	}
	return pass(name, "%d acquisitions, none while another lease of the session was certainly live", acquires)
}

// Violation is one broken invariant found in a migration history, with
// when it was seen (the return of the call that showed it), so a caller can
// charge it to the fault it fell in.
type Violation struct {
	At   time.Duration
	Text string
}

func violationTexts(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}

// MigrationLease is one acknowledged acquire's lease, the model T1 is judged
// by in a history of leases with TTLs (spec 000 §Safety theorems): the
// windows over which it was certainly live (from a successful acquire's or
// renew's return to that call's start plus ttl minus slack) and when its
// owner's release began (End; no release began when Released is false).
type MigrationLease struct {
	Owner string
	Gen   int64
	Live  [][2]time.Duration
	End   time.Duration
}

// Released says whether a release of the lease began (acknowledged, or of
// unknown outcome).
func (l *MigrationLease) Released() bool { return l.End < forever }

// LiveUntil is the end of the lease's last certainly-live window.
func (l *MigrationLease) LiveUntil() time.Duration {
	var until time.Duration
	for _, w := range l.Live {
		until = max(until, w[1])
	}
	return min(until, l.End)
}

// LiveAt says whether the lease was certainly live at t.
func (l *MigrationLease) LiveAt(t time.Duration) bool {
	if t >= l.End {
		return false
	}
	for _, w := range l.Live {
		if w[0] <= t && t < w[1] {
			return true
		}
	}
	return false
}

// MigrationLeases returns the leases of ops by session, and each one by
// its LeaseKey.
func MigrationLeases(ops []history.MigrationOp, ttl, slack time.Duration) (bySession map[string][]*MigrationLease, byKey map[string]*MigrationLease) {
	bySession, byKey = map[string][]*MigrationLease{}, map[string]*MigrationLease{}
	for _, op := range ops {
		if op.Unknown || !op.OK || op.Kind != history.OpAcquire {
			continue
		}
		l := &MigrationLease{Owner: op.Owner, Gen: op.Gen, End: forever}
		byKey[LeaseKey(op)] = l
		bySession[op.Session] = append(bySession[op.Session], l)
	}
	for _, op := range ops {
		l := byKey[LeaseKey(op)]
		if l == nil {
			continue
		}
		switch {
		case op.Kind == history.OpRelease && (op.OK || op.Unknown):
			// A release whose outcome is unknown (its pod killed or its
			// link reset mid-call) may have applied: the lease is only
			// certainly live until the release began.
			l.End = min(l.End, op.Call)
		case op.Unknown || !op.OK:
		case op.Kind == history.OpAcquire, op.Kind == history.OpRenew:
			l.Live = append(l.Live, [2]time.Duration{op.Return, op.Call + ttl - slack})
		}
	}
	return bySession, byKey
}

// LeaseKey names the lease op acts on: session|owner|gen.
func LeaseKey(op history.MigrationOp) string {
	return fmt.Sprintf("%s|%s|%d", op.Session, op.Owner, op.Gen)
}

// TwoAuthorities is MigrationSingleAuthority's search: every acknowledged
// acquire that ran entirely inside a window over which another lease of
// its session was certainly live.
func TwoAuthorities(ops []history.MigrationOp, ttl, slack time.Duration) (found []Violation, acquires int) {
	bySession, _ := MigrationLeases(ops, ttl, slack)
	for _, op := range ops {
		if op.Unknown || !op.OK || op.Kind != history.OpAcquire {
			continue
		}
		acquires++
		for _, l := range bySession[op.Session] {
			if l.Owner == op.Owner && l.Gen == op.Gen {
				continue
			}
			for _, w := range l.Live {
				if w[0] <= op.Call && op.Return < min(w[1], l.End) {
					found = append(found, Violation{At: op.Return, Text: fmt.Sprintf("%v [pod %s, phase %s, lane %s]\n  while %s's lease at gen %d was certainly live during [%v, %v)",
						op.FencingOp, op.Pod, op.Phase, op.Lane, l.Owner, l.Gen, w[0], min(w[1], l.End))})
					break
				}
			}
		}
	}
	return found, acquires
}

// MigrationGenerations is T2 (spec 000 §Safety theorems) across both
// counters: per session no generation is issued twice, and an acquire that
// began after another returned got a strictly higher generation. Real-time
// order only, so concurrency and unknown outcomes raise no false alarm.
func MigrationGenerations(recorded []history.MigrationOp) Result {
	const name = "migration-generations"
	reused, backwards, n, sessions := GenerationViolations(recorded)
	bad := violationTexts(append(reused, backwards...))
	if n == 0 {
		return unknown(name, "no successful acquire in the history")
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d generation violations in %d acquisitions over %d sessions", len(bad), n, sessions)
	}
	return pass(name, "%d acquisitions over %d sessions, generations strictly increasing across both counters", n, sessions)
}

// GenerationViolations is MigrationGenerations' search: generations issued
// twice to acknowledged acquires of one session, and acquires that got a
// lower generation than one that returned before they began.
func GenerationViolations(recorded []history.MigrationOp) (reused, backwards []Violation, acquires, sessions int) {
	bySession := map[string][]history.MigrationOp{}
	for _, op := range recorded {
		if op.Unknown || !op.OK || op.Kind != history.OpAcquire {
			continue
		}
		acquires++
		bySession[op.Session] = append(bySession[op.Session], op)
	}
	for _, ops := range bySession {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Return < ops[j].Return })
		seen := map[int64]history.MigrationOp{}
		for i, op := range ops {
			if prev, dup := seen[op.Gen]; dup {
				reused = append(reused, Violation{At: op.Return, Text: fmt.Sprintf("generation %d issued twice:\n  %v [%s/%s]\n  %v [%s/%s]", op.Gen, prev.FencingOp, prev.Pod, prev.Phase, op.FencingOp, op.Pod, op.Phase)})
			}
			seen[op.Gen] = op
			// an acquire that returned before op was called must be lower.
			for _, prev := range ops[:i] {
				if prev.Return < op.Call && prev.Gen > op.Gen {
					backwards = append(backwards, Violation{At: op.Return, Text: fmt.Sprintf("generation went backwards from %d to %d:\n  %v [%s/%s]\n  %v [%s/%s]", prev.Gen, op.Gen, prev.FencingOp, prev.Pod, prev.Phase, op.FencingOp, op.Pod, op.Phase)})
					break
				}
			}
		}
	}
	return reused, backwards, acquires, len(bySession)
}

// ObservedSingleAuthority is T1 judged by the observer: no atomic snapshot
// of both keyspaces ever showed a session with two live leases.
func ObservedSingleAuthority(samples []history.KeyspaceSample, minSamples int) Result {
	const name = "observed-single-authority"
	if len(samples) < minSamples {
		return unknown(name, "only %d keyspace observations, need %d", len(samples), minSamples)
	}
	var bad []string
	forks := 0
	for _, s := range samples {
		if len(s.Forks) == 0 {
			continue
		}
		forks++
		bad = append(bad, fmt.Sprintf("%v: %s", s, strings.Join(first(s.Forks, 2), "; ")))
	}
	if forks > 0 {
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d of %d atomic observations saw a session leased on both keyspaces", forks, len(samples))
	}
	return pass(name, "%d atomic observations of both keyspaces, never two live leases for a session", len(samples))
}

// MigrationErrors is the errors column of the migration row with no link
// fault injected: see MigrationErrorsAround.
func MigrationErrors(ops []history.MigrationOp, minOps int) Result {
	return MigrationErrorsAround(ops, nil, 0, minOps)
}

// MigrationErrorsAround is the errors column of the migration row: every
// failed call is accounted for and classified. A call abandoned by its
// pod's kill is expected chaos; a network error (no reply) of a call that
// overlapped a recorded link-fault window, extended by settle (the pool's
// time to notice its connections were cut), is a fault-window error; any
// other error — including a server error inside a window — is a loud
// failure. minOps guards against a run that never happened.
func MigrationErrorsAround(ops []history.MigrationOp, faults []Span, settle time.Duration, minOps int) Result {
	const name = "migration-errors"
	if len(ops) < minOps {
		return unknown(name, "only %d operations recorded, need %d", len(ops), minOps)
	}
	inFault := func(op history.MigrationOp) bool {
		for _, w := range faults {
			if op.Call <= w.End+settle && op.Return >= w.Start {
				return true
			}
		}
		return false
	}
	abandoned, faulted, during := 0, 0, 0
	byKind := map[string]int{}
	var bad []string
	for _, op := range ops {
		if inFault(op) {
			during++
		}
		if op.ErrKind == "" {
			if op.Unknown {
				bad = append(bad, fmt.Sprintf("%v: unknown outcome without an error", op.FencingOp))
				byKind["unclassified"]++
			}
			continue
		}
		if op.Abandoned {
			abandoned++
			continue
		}
		if op.ErrKind == ErrKindNetwork && inFault(op) {
			faulted++
			continue
		}
		byKind[op.ErrKind]++
		bad = append(bad, fmt.Sprintf("%s %s [pod %s, phase %s] at %v: %s", op.Kind, op.Session, op.Pod, op.Phase, op.Call.Round(time.Millisecond), op.Err))
	}
	windows := ""
	if len(faults) > 0 {
		windows = fmt.Sprintf(", %d network errors in %d link-fault windows (+%v settle; %d operations overlapped them)", faulted, len(faults), settle, during)
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 5), "\n"), "%s in %d operations (%d abandoned by pod kills%s)", countKinds(byKind), len(ops), abandoned, windows)
	}
	return pass(name, "%d operations: every error classified (%d abandoned in flight by pod kills%s, 0 other)", len(ops), abandoned, windows)
}

// ErrKindNetwork is the error kind of a call that got no reply (a cut or
// reset link, a timeout): traffic.ErrKind's classification.
const ErrKindNetwork = "network"
