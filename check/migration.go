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
	found, acquires := twoAuthorities(ops, ttl, slack)
	if acquires == 0 {
		return unknown(name, "no successful acquire in the history")
	}
	if len(found) > 0 {
		return fail(name, strings.Join(first(violationTexts(found), 3), "\n"), "%d acquisitions took a session whose other lease was certainly live (two authorities)", len(found))
	}
	return pass(name, "%d acquisitions, none while another lease of the session was certainly live", acquires)
}

// violation is one broken invariant found in a migration history, with
// when it was seen (the return of the call that showed it), so a caller can
// charge it to the fault it fell in.
type violation struct {
	at   time.Duration
	text string
}

func violationTexts(vs []violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.text
	}
	return out
}

// migrationLease is one acknowledged acquire's lease: the windows over
// which it was certainly live (from a successful acquire's or renew's
// return to that call's start plus ttl minus slack) and when its owner's
// release began.
type migrationLease struct {
	owner string
	gen   int64
	live  [][2]time.Duration
	end   time.Duration
}

// migrationLeases returns the leases of ops by session, and each one by
// its session|owner|gen key.
func migrationLeases(ops []history.MigrationOp, ttl, slack time.Duration) (bySession map[string][]*migrationLease, byKey map[string]*migrationLease) {
	bySession, byKey = map[string][]*migrationLease{}, map[string]*migrationLease{}
	for _, op := range ops {
		if op.Unknown || !op.OK || op.Kind != history.OpAcquire {
			continue
		}
		l := &migrationLease{owner: op.Owner, gen: op.Gen, end: forever}
		byKey[leaseKey(op)] = l
		bySession[op.Session] = append(bySession[op.Session], l)
	}
	for _, op := range ops {
		l := byKey[leaseKey(op)]
		if l == nil {
			continue
		}
		switch {
		case op.Kind == history.OpRelease && (op.OK || op.Unknown):
			// A release whose outcome is unknown (its pod killed or its
			// link reset mid-call) may have applied: the lease is only
			// certainly live until the release began.
			l.end = min(l.end, op.Call)
		case op.Unknown || !op.OK:
		case op.Kind == history.OpAcquire, op.Kind == history.OpRenew:
			l.live = append(l.live, [2]time.Duration{op.Return, op.Call + ttl - slack})
		}
	}
	return bySession, byKey
}

func leaseKey(op history.MigrationOp) string {
	return fmt.Sprintf("%s|%s|%d", op.Session, op.Owner, op.Gen)
}

// twoAuthorities is MigrationSingleAuthority's search: every acknowledged
// acquire that ran entirely inside a window over which another lease of
// its session was certainly live.
func twoAuthorities(ops []history.MigrationOp, ttl, slack time.Duration) (found []violation, acquires int) {
	bySession, _ := migrationLeases(ops, ttl, slack)
	for _, op := range ops {
		if op.Unknown || !op.OK || op.Kind != history.OpAcquire {
			continue
		}
		acquires++
		for _, l := range bySession[op.Session] {
			if l.owner == op.Owner && l.gen == op.Gen {
				continue
			}
			for _, w := range l.live {
				if w[0] <= op.Call && op.Return < min(w[1], l.end) {
					found = append(found, violation{at: op.Return, text: fmt.Sprintf("%v [pod %s, phase %s, lane %s]\n  while %s's lease at gen %d was certainly live during [%v, %v)",
						op.FencingOp, op.Pod, op.Phase, op.Lane, l.owner, l.gen, w[0], min(w[1], l.end))})
					break
				}
			}
		}
	}
	return found, acquires
}

// leasesLost finds every renew the directory refused although it ran
// entirely inside a window over which its own lease was certainly live
// and before its owner released it: the lease the store acknowledged is
// gone (a write lost at a failover), not expired.
func leasesLost(ops []history.MigrationOp, ttl, slack time.Duration) []violation {
	_, byKey := migrationLeases(ops, ttl, slack)
	var found []violation
	counted := map[*migrationLease]bool{}
	for _, op := range ops {
		if op.Unknown || op.OK || op.Kind != history.OpRenew {
			continue
		}
		l := byKey[leaseKey(op)]
		if l == nil || counted[l] {
			continue
		}
		for _, w := range l.live {
			if w[0] <= op.Call && op.Return < min(w[1], l.end) {
				found = append(found, violation{at: op.Return, text: fmt.Sprintf("%v [pod %s, phase %s, lane %s]\n  refused while the lease was certainly live during [%v, %v)",
					op.FencingOp, op.Pod, op.Phase, op.Lane, w[0], min(w[1], l.end))})
				counted[l] = true
				break
			}
		}
	}
	return found
}

// MigrationGenerations is T2 (spec 000 §Safety theorems) across both
// counters: per session no generation is issued twice, and an acquire that
// began after another returned got a strictly higher generation. Real-time
// order only, so concurrency and unknown outcomes raise no false alarm.
func MigrationGenerations(recorded []history.MigrationOp) Result {
	const name = "migration-generations"
	reused, backwards, n, sessions := generationViolations(recorded)
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

// generationViolations is MigrationGenerations' search: generations issued
// twice to acknowledged acquires of one session, and acquires that got a
// lower generation than one that returned before they began.
func generationViolations(recorded []history.MigrationOp) (reused, backwards []violation, acquires, sessions int) {
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
				reused = append(reused, violation{at: op.Return, text: fmt.Sprintf("generation %d issued twice:\n  %v [%s/%s]\n  %v [%s/%s]", op.Gen, prev.FencingOp, prev.Pod, prev.Phase, op.FencingOp, op.Pod, op.Phase)})
			}
			seen[op.Gen] = op
			// an acquire that returned before op was called must be lower.
			for _, prev := range ops[:i] {
				if prev.Return < op.Call && prev.Gen > op.Gen {
					backwards = append(backwards, violation{at: op.Return, text: fmt.Sprintf("generation went backwards from %d to %d:\n  %v [%s/%s]\n  %v [%s/%s]", prev.Gen, op.Gen, prev.FencingOp, prev.Pod, prev.Phase, op.FencingOp, op.Pod, op.Phase)})
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

// OldKeyspaceDrained is the C-gate's fact (spec 000 §The protocol): between
// since and by, an observation saw old-keyspace leases to drain and then saw
// the count reach zero. Run on a fixed "wait one TTL" window while renewers
// are alive it fails: renew is PEXPIRE, renewed leases never expire.
//
// The first observation at or after by counts as inside the window: the
// gate decides on its own observation at by, and a sampler ticking beside
// it can miss the last expiries before by (a TTL drain ends in a step, many
// leases expiring in the same millisecond). The caller takes that witness
// right after the gate allowed and before the step acts (traffic.Operator's
// OnAllowed), so it shows the state the gate decided on. A sample more than
// drainWitnessTolerance after by is no witness (the witness call failed, and
// a later tick would show a state the gate never saw).
func OldKeyspaceDrained(samples []history.KeyspaceSample, since, by time.Duration) Result {
	return keyspaceDrained("old-keyspace-drained", "old", func(s history.KeyspaceSample) int { return s.OldLeases }, samples, since, by)
}

// NewKeyspaceDrained is the fact a rollback into O needs (spec 000
// §Deployment Gate rule 4, absence is M6): between since and by, an
// observation saw new-keyspace leases and then saw the count reach zero.
func NewKeyspaceDrained(samples []history.KeyspaceSample, since, by time.Duration) Result {
	return keyspaceDrained("new-keyspace-drained", "new", func(s history.KeyspaceSample) int { return s.NewLeases }, samples, since, by)
}

// drainWitnessTolerance bounds how late the witness of a gate decision may
// be: it is taken right after the decision, before the step acts.
const drainWitnessTolerance = 50 * time.Millisecond

func keyspaceDrained(name, ks string, count func(history.KeyspaceSample) int, samples []history.KeyspaceSample, since, by time.Duration) Result {
	var first, zero *history.KeyspaceSample
	last := history.KeyspaceSample{}
	n := 0
	witnessed := false // the first sample at or after by
	for i := range samples {
		s := samples[i]
		if s.At < since {
			continue
		}
		if s.At >= by {
			if witnessed || s.At > by+drainWitnessTolerance {
				continue
			}
			witnessed = true
		}
		n++
		last = s
		if first == nil {
			first = &samples[i]
		}
		if count(s) == 0 && zero == nil {
			zero = &samples[i]
		}
	}
	if n == 0 || count(*first) == 0 {
		return unknown(name, "no %s-keyspace lease to drain in [%v, %v]", ks, since.Round(time.Millisecond), by.Round(time.Millisecond))
	}
	if zero == nil {
		return fail(name, fmt.Sprintf("first %v\nlast  %v", *first, last), "%s keyspace not drained in [%v, %v]: %d live %s-key leases at the start, %d at the end", ks, since.Round(time.Millisecond), by.Round(time.Millisecond), count(*first), ks, count(last))
	}
	return pass(name, "%s keyspace drained from %d leases to 0 in %v (observed %v)", ks, count(*first), (zero.At - first.At).Round(time.Millisecond), *zero)
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
