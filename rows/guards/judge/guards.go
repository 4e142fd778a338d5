package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Admissions is one run of one guard's contended calls and the slot moves
// they met: the input of ReplayOnce and LimitHeld.
type Admissions struct {
	Calls []Call
	Moves []Move
	// Limit is the limiter's hits per window (LimitHeld); the replay guard
	// admits one.
	Limit int64
	// Window is the limiter's window: every call of a subject must fall
	// within one window of its first, or the window may have rolled over.
	Window time.Duration
	// MinContended is the fewest keys that must each see at least two
	// callers; MinDuringMove the fewest of them whose calls overlapped a
	// move of their own slot.
	MinContended, MinDuringMove int
}

// keyCalls are one key's calls and what they add up to.
type keyCalls struct {
	key                         string
	calls                       []Call
	admitted, unknown, answered int
	duringMove                  bool
}

// byKey groups the calls of guard g by key, in key order, and checks the
// premises both admission checkers share: calls return after they start,
// at least one slot move was confirmed, enough keys were contended, and
// enough contended keys met a move of their slot. A broken premise is the
// returned reason ("" when they hold).
func byKey(in Admissions, g Guard) ([]keyCalls, string) {
	m := map[string]*keyCalls{}
	for i, c := range in.Calls {
		if c.Guard != g {
			continue
		}
		if c.Return < c.Call {
			return nil, fmt.Sprintf("call %d (%s) returns at %v, before its call at %v", i, c.Key, c.Return, c.Call)
		}
		k := m[c.Key]
		if k == nil {
			k = &keyCalls{key: c.Key}
			m[c.Key] = k
		}
		k.calls = append(k.calls, c)
		switch {
		case c.ErrKind != "":
			k.unknown++
		case c.Admitted:
			k.admitted++
			k.answered++
		default:
			k.answered++
		}
		for _, mv := range in.Moves {
			if mv.Slot == c.Slot && mv.covers(c, 0) {
				k.duringMove = true
			}
		}
	}
	if len(in.Moves) == 0 {
		return nil, "no slot move was confirmed: the calls met no ASK/MOVED redirect"
	}
	for _, mv := range in.Moves {
		if mv.End < mv.Start {
			return nil, fmt.Sprintf("the move of slot %d ends at %v, before it starts at %v", mv.Slot, mv.End, mv.Start)
		}
	}
	out := make([]keyCalls, 0, len(m))
	contended, during := 0, 0
	for _, k := range m {
		out = append(out, *k)
		if len(k.calls) >= 2 {
			contended++
			if k.duringMove {
				during++
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	if contended < in.MinContended {
		return nil, fmt.Sprintf("only %d %s keys had two or more callers, need %d", contended, g, in.MinContended)
	}
	if during < in.MinDuringMove {
		return nil, fmt.Sprintf("only %d contended %s keys were called while their slot moved, need %d", during, g, in.MinDuringMove)
	}
	return out, ""
}

// replayOnce is the replay guard's invariant: each event id is admitted
// exactly once — never twice (a replayed NIP-98 event accepted), and never
// zero times when every call was answered (the first sight of an event
// refused as a replay). A key with a call of unknown outcome may have been
// admitted by that call, so zero admissions there is no verdict.
func replayOnce(in Admissions) check.Result {
	const name = "replay-admits-once"
	keys, broken := byKey(in, GuardReplay)
	if broken != "" {
		return check.Unknownf(name, "premise broken: %s", broken)
	}
	var bad []string
	double, never, calls, during, badDuring := 0, 0, 0, 0, 0
	for _, k := range keys {
		calls += len(k.calls)
		if k.duringMove {
			during++
		}
		switch {
		case k.admitted > 1:
			double++
			bad = append(bad, fmt.Sprintf("%s: admitted %d times by %d callers%s", k.key, k.admitted, len(k.calls), moved(k)))
		case k.admitted == 0 && k.unknown == 0:
			never++
			bad = append(bad, fmt.Sprintf("%s: refused all %d callers, admitted none%s", k.key, len(k.calls), moved(k)))
		default:
			continue
		}
		if k.duringMove {
			badDuring++
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 8), "\n"), "%d event ids admitted more than once and %d never, of %d (%d of them called while their slot moved)", double, never, len(keys), badDuring)
	}
	return check.Passf(name, "%d event ids, %d calls (%d ids called while their slot moved): each admitted exactly once", len(keys), calls, during)
}

// limitHeld is the limiter's invariant: within one window a subject is
// admitted at most Limit times, however many callers race and whatever
// redirects they meet. Its own premise, beyond byKey's: every call of a
// subject falls within one window of its first call, so the count the
// script keeps was never reset by expiry mid-run.
func limitHeld(in Admissions) check.Result {
	const name = "limit-held"
	if in.Limit < 1 || in.Window <= 0 {
		return check.Unknownf(name, "premise broken: limit %d per %v is no limit", in.Limit, in.Window)
	}
	keys, broken := byKey(in, GuardLimit)
	if broken != "" {
		return check.Unknownf(name, "premise broken: %s", broken)
	}
	var bad []string
	over, overDuring, under, calls := 0, 0, 0, 0
	for _, k := range keys {
		first, last := k.calls[0].Call, k.calls[0].Return
		for _, c := range k.calls {
			first, last = min(first, c.Call), max(last, c.Return)
		}
		if last-first >= in.Window {
			return check.Unknownf(name, "premise broken: %s was called over %v, longer than its %v window", k.key, last-first, in.Window)
		}
		calls += len(k.calls)
		if int64(k.admitted) > in.Limit {
			over++
			if k.duringMove {
				overDuring++
			}
			bad = append(bad, fmt.Sprintf("%s: admitted %d of %d hits, limit %d%s", k.key, k.admitted, len(k.calls), in.Limit, moved(k)))
		}
		if k.unknown == 0 && int64(k.admitted) < min(int64(k.answered), in.Limit) {
			under++
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 8), "\n"), "%d of %d subjects admitted over the limit of %d per %v (%d of them called while their slot moved)", over, len(keys), in.Limit, in.Window, overDuring)
	}
	r := check.Passf(name, "%d subjects, %d hits: none admitted over %d per %v", len(keys), calls, in.Limit, in.Window)
	if under > 0 {
		r.Observed = []string{fmt.Sprintf("%d subjects admitted fewer than min(hits, limit) with every hit answered (a counted hit beyond the callers': a retried INCR)", under)}
	}
	return r
}

func moved(k keyCalls) string {
	if k.duringMove {
		return " (called while its slot moved)"
	}
	return ""
}

// Outside is a run's calls and the slot moves they met: the input of
// ErrorsOutside.
type Outside struct {
	Calls []Call
	Moves []Move
	// Settle extends each move: the clients' time to learn the new owner.
	Settle time.Duration
	MinOps int
}

// errorsOutside is the errors column: every guarded call that overlapped
// no slot move (extended by Settle) succeeded — per-key atomic operations
// are "safe once routed", so away from a migration nothing excuses an
// error. Calls during a move are counted, not judged.
func errorsOutside(in Outside) check.Result {
	const name = "guards-errors-outside-moves"
	if len(in.Moves) == 0 {
		return check.Unknownf(name, "premise broken: no slot move was confirmed")
	}
	outside, inside, insideErr := 0, 0, 0
	byKind := map[string]int{}
	var firstErr []string
	for _, c := range in.Calls {
		during := false
		for _, m := range in.Moves {
			if m.covers(c, in.Settle) {
				during = true
			}
		}
		if during {
			inside++
			if c.ErrKind != "" {
				insideErr++
			}
			continue
		}
		outside++
		if c.ErrKind != "" {
			byKind[c.ErrKind]++
			firstErr = append(firstErr, fmt.Sprintf("%s %s (slot %d) by %s at %v: %s", c.Guard, c.Key, c.Slot, c.Caller, c.Call.Round(time.Millisecond), c.Err))
		}
	}
	obs := fmt.Sprintf("%d calls during slot moves (+%v settle), %d of them failed", inside, in.Settle, insideErr)
	var r check.Result
	switch {
	case outside < in.MinOps:
		r = check.Unknownf(name, "only %d calls outside slot moves, need %d", outside, in.MinOps)
	case len(byKind) > 0:
		r = check.Failf(name, strings.Join(check.Elide(firstErr, 5), "\n"), "%s in %d calls outside slot moves", check.CountKinds(byKind), outside)
	default:
		r = check.Passf(name, "%d calls outside slot moves, no errors", outside)
	}
	r.Observed = []string{obs}
	return r
}

// ErrKinds counts the error kinds of calls.
func ErrKinds(calls []Call) map[string]int {
	out := map[string]int{}
	for _, c := range calls {
		if c.ErrKind != "" {
			out[c.ErrKind]++
		}
	}
	return out
}

// The row's checkers, by stable name.
var (
	ReplayOnce    = check.Define("guards/replay-admits-once", replayOnce)
	LimitHeld     = check.Define("guards/limit-held", limitHeld)
	ErrorsOutside = check.Define("guards/errors-outside-moves", errorsOutside)
)
