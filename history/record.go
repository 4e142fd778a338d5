package history

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Clock gives monotonic offsets from a scenario's start, so histories from
// concurrent goroutines share one time axis.
type Clock struct{ start time.Time }

// NewClock starts a clock now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// ClockAt is a clock whose zero was start.
func ClockAt(start time.Time) *Clock { return &Clock{start: start} }

// Now is the offset since the clock started (monotonic).
func (c *Clock) Now() time.Duration { return time.Since(c.start) }

// Began is the wall time of the clock's zero.
func (c *Clock) Began() time.Time { return c.start }

// Offset places a wall-clock instant on the clock (monotonic when t carries
// a monotonic reading, as time.Now's do).
func (c *Clock) Offset(t time.Time) time.Duration { return t.Sub(c.start) }

// Sample is one measured value at an instant (a queue depth, a lag, a
// counter), drawn beside the operations.
type Sample struct {
	Name  string        `json:"name"`
	At    time.Duration `json:"at"`
	Value float64       `json:"value"`
}

// Call is one run of a named pure checker: its name in check's registry and
// its input as JSON, so `slotgate check --from` can run it again offline.
// A combined result (check.All) lists its parts; Input is then the
// combiner's own argument (its name).
type Call struct {
	Checker string            `json:"checker"`
	Input   []json.RawMessage `json:"input,omitempty"`
	Parts   []Call            `json:"parts,omitempty"`
}

// Judgement is how one scored check of the scenario was reached: the call
// behind its result and behind each negative control, so the scorecard can
// be rebuilt from the history alone.
type Judgement struct {
	Row      string `json:"row"`
	Column   string `json:"column"`
	Scenario string `json:"scenario"`
	// Call is nil when the result was not reached through a registered
	// checker: `check --from` lists such a check as not persisted.
	Call *Call `json:"call,omitempty"`
	// ObservedAt is where the result's Observed lines start in the stored
	// evidence (lines before it are the suite's own).
	ObservedAt int `json:"observedAt"`
	// ObservedLen is how many lines the result contributed.
	ObservedLen int `json:"observedLen"`
	// CounterexampleFromResult: the suite set no counterexample of its own,
	// so the stored one is the result's.
	CounterexampleFromResult bool               `json:"cexFromResult,omitempty"`
	Controls                 []ControlJudgement `json:"controls,omitempty"`
}

// ControlJudgement is one negative control's call, plus the premise the suite
// decided from live facts (empty when the control was judged as run).
type ControlJudgement struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Why  string `json:"why"`
	Call *Call  `json:"call,omitempty"`
	// NotExercised are the reasons, in order, a suite marked the control
	// not exercised (harness.NotExercised / Premise): live facts no checker
	// recomputes.
	NotExercised []string `json:"notExercised,omitempty"`
	// Remark is what the suite appended to the control's observed line
	// after its checker judged it (error kinds seen, a count).
	Remark string `json:"remark,omitempty"`
}

// Recorder collects one scenario's history. Safe for concurrent use; a nil
// *Recorder records nothing, so library code may record unconditionally.
type Recorder struct {
	clock *Clock
	mu    sync.Mutex
	h     History
}

// NewRecorder starts recording scenario's history on clock (a new clock when
// nil).
func NewRecorder(scenario string, seed int64, clock *Clock) *Recorder {
	if clock == nil {
		clock = NewClock()
	}
	return &Recorder{clock: clock, h: History{Scenario: scenario, Seed: seed, Began: clock.Began()}}
}

// Clock is the recorder's clock (a fresh one for a nil recorder, so callers
// can always take offsets).
func (r *Recorder) Clock() *Clock {
	if r == nil {
		return NewClock()
	}
	return r.clock
}

// UseClock puts the history on c (a shared run's clock, recorded under
// another scenario), so its spans and adopted fault windows share that
// run's axis. Call it before recording anything.
func (r *Recorder) UseClock(c *Clock) {
	if r == nil || c == nil {
		return
	}
	r.mu.Lock()
	r.clock, r.h.Began = c, c.Began()
	r.mu.Unlock()
}

// Op records one operation.
func (r *Recorder) Op(op Op) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.h.Ops = append(r.h.Ops, op)
	r.mu.Unlock()
}

// Fault records one fault window.
func (r *Recorder) Fault(w FaultWindow) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.h.Faults = append(r.h.Faults, w)
	r.mu.Unlock()
}

// Extend sets the end of the recorded window matching w (fault, target and
// start) to end: a fault that stayed in effect after its injection returned
// (a latency toxic) ends when it was healed.
func (r *Recorder) Extend(w FaultWindow, end time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.h.Faults {
		f := &r.h.Faults[i]
		if f.Fault == w.Fault && f.Target == w.Target && f.Start == w.Start {
			f.End = end
			return
		}
	}
	w.End = end
	r.h.Faults = append(r.h.Faults, w)
}

// Span records one measured interval.
func (r *Recorder) Span(s Span) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.h.Spans = append(r.h.Spans, s)
	r.mu.Unlock()
}

// Sample records one measured value.
func (r *Recorder) Sample(s Sample) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.h.Samples = append(r.h.Samples, s)
	r.mu.Unlock()
}

// Judgement records how a scored check was reached.
func (r *Recorder) Judgement(j Judgement) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.h.Judgements = append(r.h.Judgements, j)
	r.mu.Unlock()
}

// Faults returns a copy of the recorded fault windows.
func (r *Recorder) Faults() []FaultWindow {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]FaultWindow(nil), r.h.Faults...)
}

// Snapshot returns a copy of the history recorded so far.
func (r *Recorder) Snapshot() History {
	if r == nil {
		return History{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.Ops = append([]Op(nil), r.h.Ops...)
	h.Faults = append([]FaultWindow(nil), r.h.Faults...)
	h.Spans = append([]Span(nil), r.h.Spans...)
	h.Samples = append([]Sample(nil), r.h.Samples...)
	h.Judgements = append([]Judgement(nil), r.h.Judgements...)
	return h
}

type ctxKey struct{}

// With returns ctx carrying r: fault.Apply and traffic's workloads record
// into the recorder of the context they run under.
func With(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// From is the recorder ctx carries, or nil (which records nothing).
func From(ctx context.Context) *Recorder {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(ctxKey{}).(*Recorder)
	return r
}
