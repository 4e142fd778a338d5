package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// AuditWriterPace is what one tenant's Redis Stream writer did over the
// stall of a wait in which its queue stayed above what the wait allows —
// from the wait's last progress to the stall (AuditPaceMarks), never from
// the wait's start: the entries it appended, the append calls it made and
// the time it spent inside them (measured at its pool), over Window.
type AuditWriterPace struct {
	Name     string
	Depth    int
	Appended float64
	Calls    int
	InCalls  time.Duration
	Window   time.Duration
}

// busy is the share of the window the writer spent inside append calls.
func (p AuditWriterPace) busy() float64 {
	if p.Window <= 0 {
		return 0
	}
	return float64(p.InCalls) / float64(p.Window)
}

// WritersKeepPace is the premise writersOutpaced names.
const WritersKeepPace = "writers-keep-pace"

// writersOutpaced decides a wait for the audit queues to empty that
// made no progress with Redis healthy (spec 002 §3.6: the queue grows only
// while the writer is unreachable; §4.1: a writer that falls behind shows
// as lag). Each writer still behind either was busy appending — inside an
// append for at least minBusy of the window — and was outpaced by the
// offered rate all the same: the round trips the runner allowed were too
// slow (a machine too loaded for the row's premise, which the sizing
// formula states: max_entries ≥ burst_rate × writer lag × 2),
// Inconclusive naming the premise; or it appended nothing (a writer that
// stopped) or idled between appends (a backoff, a sleep) — the writer's
// own doing, Fail. Unknown with no writer behind. How full its batches
// were (batch, for the account) decides nothing: a queue that was shallow
// for most of the window is appended in short batches by a sound writer
// (under heavy CPU contention the fault-free tenant: 8.9 entries a call,
// then behind).
func writersOutpaced(paces []AuditWriterPace, batch int, minBusy float64) check.Result {
	const name = "audit-writers-outpaced"
	if len(paces) == 0 {
		return check.Unknownf(name, "no writer behind: nothing to decide")
	}
	var own, outpaced []string
	for _, p := range paces {
		perCall := 0.0
		if p.Calls > 0 {
			perCall = p.Appended / float64(p.Calls)
		}
		line := fmt.Sprintf("%s depth %d: appended %.0f/s in %d calls (%.1f entries a call of %d), inside them %.0f%% of %v",
			p.Name, p.Depth, p.Appended/max(p.Window.Seconds(), 1e-9), p.Calls, perCall, batch, 100*p.busy(), p.Window.Round(time.Second))
		switch {
		case p.Appended <= 0:
			own = append(own, line+": stopped")
		case p.busy() < minBusy:
			own = append(own, line+": idle between appends")
		default:
			outpaced = append(outpaced, line)
		}
	}
	if len(own) > 0 {
		return check.Failf(name, strings.Join(append(own, outpaced...), "\n"), "%d of %d writers behind held back by themselves: %s", len(own), len(paces), own[0])
	}
	r := check.FaultNotConfirmed(name, WritersKeepPace, fmt.Errorf("every writer behind was busy appending and still outpaced by the offered rate — the runner's round trips, not the writer: %s",
		strings.Join(outpaced, "; ")))
	r.Observed = outpaced
	return r
}

// AuditWriterCount is one writer's running totals read at At: entries
// appended, append calls and time inside them.
type AuditWriterCount struct {
	At       time.Time
	Appended float64
	Calls    int
	InCalls  time.Duration
}

// AuditPaceMarks keeps each writer's totals as they were at a wait's last
// progress, so a stall is judged over the stall alone: a writer that
// worked for 40 s after the heal and then hung has appended plenty and
// been busy over the whole wait, and only its last Stall shows it stopped
// (writersOutpaced must fail it, not name the runner).
type AuditPaceMarks struct {
	marks map[string]AuditWriterCount
}

// Progress records counts as the totals at the wait's latest progress
// (a new low of what is left), replacing the previous marks.
func (m *AuditPaceMarks) Progress(counts map[string]AuditWriterCount) {
	m.marks = maps.Clone(counts)
}

// Paces returns, for each writer behind (depths: its queue depth as the
// stall was seen), what it did from the last progress to now (counts, read
// at the stall), sorted by name. A writer with no mark is counted from
// zero over no window (busy 0: idle), which fails it rather than excuse it.
func (m *AuditPaceMarks) Paces(depths map[string]int, counts map[string]AuditWriterCount) []AuditWriterPace {
	var paces []AuditWriterPace
	for _, k := range slices.Sorted(maps.Keys(depths)) {
		mark, now := m.marks[k], counts[k]
		var window time.Duration
		if !mark.At.IsZero() {
			window = now.At.Sub(mark.At)
		}
		paces = append(paces, AuditWriterPace{Name: k, Depth: depths[k], Window: window,
			Appended: now.Appended - mark.Appended, Calls: now.Calls - mark.Calls, InCalls: now.InCalls - mark.InCalls})
	}
	return paces
}
