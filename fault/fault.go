// Package fault holds the things that break a topology, as small values:
// each names itself, says whether it can run on a topology, and injects
// itself returning the window it was active, as data for the report.
package fault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
)

// Fault is one way to break a topology.
type Fault interface {
	// Name is a stable slash path, e.g. "script-cache/flush".
	Name() string
	// Available says why the fault cannot run on t, or nil.
	Available(t *fixtures.Topology) error
	// Inject breaks t and returns once the fault is fully in effect (and,
	// for transient faults such as a restart, once it has healed).
	Inject(ctx context.Context, t *fixtures.Topology) (Window, error)
}

// Window is one injected fault as data: what, where, when.
type Window struct {
	Fault  string
	Target string
	Start  time.Time
	End    time.Time
}

// Option configures Apply.
type Option func(*applyOptions)

type applyOptions struct {
	rec      *history.Recorder
	health   time.Duration
	injected func()
}

// Into records the fault's window into rec instead of the recorder ctx
// carries (history.From).
func Into(rec *history.Recorder) Option { return func(o *applyOptions) { o.rec = rec } }

// HealthWait bounds each health check around the injection (default 10 s).
func HealthWait(d time.Duration) Option { return func(o *applyOptions) { o.health = d } }

// Injecting runs fn once the topology was found serving, right before the
// fault is injected: a caller that wants its step to meet the fault starts
// it there, not before the health check (which may take a while under load).
func Injecting(fn func()) Option { return func(o *applyOptions) { o.injected = fn } }

// ErrUnhealthy marks a topology that was not serving around an injection.
var ErrUnhealthy = errors.New("topology unhealthy")

// Apply checks that f is available, waits until the topology serves,
// injects f, records its window into the scenario's history (the recorder
// ctx carries, or Into's), and checks the topology serves again — etcd's
// failpoint.Inject pattern, so no suite builds a window by hand. Every
// error is a *NotConfirmedError naming the fault, so every caller reports
// faults the same way — as the harness's failure, not the implementation's:
// a topology not serving before the fault would make the window mean
// nothing, and one not serving after it (beyond the fault's own design: a
// node it killed on purpose is not asked) is reported on the window
// (FaultWindow.Unhealthy) and as the error, never swallowed.
func Apply(ctx context.Context, t *fixtures.Topology, f Fault, opts ...Option) (Window, error) {
	o := applyOptions{rec: history.From(ctx), health: 10 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if err := f.Available(t); err != nil {
		return Window{}, &NotConfirmedError{Fault: f.Name(), Unavailable: true, Err: err}
	}
	if err := serving(ctx, t, o.health); err != nil {
		return Window{}, &NotConfirmedError{Fault: f.Name(), Err: fmt.Errorf("before the fault: %w", err)}
	}
	if o.injected != nil {
		o.injected()
	}
	w, err := f.Inject(ctx, t)
	if w.Start.IsZero() {
		return w, &NotConfirmedError{Fault: f.Name(), Err: errOrNoWindow(err)}
	}
	if w.End.IsZero() {
		w.End = time.Now()
	}
	hw := w.On(o.rec.Clock())
	if err != nil {
		hw.Unhealthy = "injection failed: " + err.Error()
		o.rec.Fault(hw)
		return w, &NotConfirmedError{Fault: f.Name(), Err: err}
	}
	if herr := serving(ctx, t, o.health); herr != nil {
		hw.Unhealthy = herr.Error()
		o.rec.Fault(hw)
		return w, &NotConfirmedError{Fault: f.Name(), Err: fmt.Errorf("after the fault: %w", herr)}
	}
	o.rec.Fault(hw)
	return w, nil
}

func errOrNoWindow(err error) error {
	if err != nil {
		return err
	}
	return errors.New("injection returned no window")
}

// On places w on a scenario clock: the one conversion from a fault's wall
// times to the history's offsets.
func (w Window) On(c *history.Clock) history.FaultWindow {
	return history.FaultWindow{Fault: w.Fault, Target: w.Target, Start: c.Offset(w.Start), End: c.Offset(w.End)}
}

// Healed records that w, a fault that stays in effect after Apply returned
// (a latency toxic), was healed now: its window in ctx's history ends here.
func Healed(ctx context.Context, w Window) Window {
	rec := history.From(ctx)
	end := time.Now()
	rec.Extend(w.On(rec.Clock()), rec.Clock().Offset(end))
	w.End = end
	return w
}

// serving waits up to wait until every running node of t answers and, on a
// cluster, reports cluster_state:ok. Nodes a fault stopped on purpose (a
// killed or paused primary) are not running and not asked. This is
// deliberately weaker than Topology.WaitHealthy, which wants the built
// layout back: a slot move or a failover changes the layout by design.
func serving(ctx context.Context, t *fixtures.Topology, wait time.Duration) error {
	if t.Controllable() != nil {
		return nil // an attached target is not faulted (Available refuses)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		if last = servingOnce(wctx, t); last == nil {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%w for %v: %v", ErrUnhealthy, wait, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func servingOnce(ctx context.Context, t *fixtures.Topology) error {
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		var reply any
		var err error
		if t.Spec.IsCluster() {
			reply, err = n.Do(nctx, "CLUSTER", "INFO")
		} else {
			reply, err = n.Do(nctx, "PING")
		}
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name(), err)
		}
		if s, ok := reply.(string); ok && t.Spec.IsCluster() && !strings.Contains(s, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state is not ok", n.Name())
		}
	}
	return nil
}

// Held is a fault a suite drives itself outside any Fault value (a proxy it
// cuts until a condition holds, a node it kills and restarts by hand): Hold
// opens it, End closes it and records its window into the history, on the
// same clock as Apply's. No health check: the suite owns the fault's design.
type Held struct {
	name, target string
	start        time.Time
	rec          *history.Recorder
}

// Hold opens a held fault now, recording into ctx's recorder.
func Hold(ctx context.Context, name, target string) *Held {
	return &Held{name: name, target: target, start: time.Now(), rec: history.From(ctx)}
}

// HoldSince opens a held fault that began at start.
func HoldSince(ctx context.Context, name, target string, start time.Time) *Held {
	return &Held{name: name, target: target, start: start, rec: history.From(ctx)}
}

// End closes the fault now and records its window.
func (h *Held) End() Window { return h.EndAt(time.Now()) }

// EndAt closes the fault at end and records its window.
func (h *Held) EndAt(end time.Time) Window {
	w := Window{Fault: h.name, Target: h.target, Start: h.start, End: end}
	h.rec.Fault(w.On(h.rec.Clock()))
	return w
}

// NotConfirmedError is every error Apply returns: the fault could not run on
// the topology (Unavailable), or its injection or the confirmation that it
// took effect failed. A check whose fault was not confirmed judges a history
// that is not the one it is about: suites score it inconclusive
// (check.FaultNotConfirmed), never as the implementation's failure.
type NotConfirmedError struct {
	Fault       string
	Unavailable bool
	Err         error
}

func (e *NotConfirmedError) Error() string {
	if e.Unavailable {
		return fmt.Sprintf("fault %s unavailable: %v", e.Fault, e.Err)
	}
	return fmt.Sprintf("inject %s: %v", e.Fault, e.Err)
}

func (e *NotConfirmedError) Unwrap() error { return e.Err }

// NotConfirmed returns the *NotConfirmedError in err's chain, if any.
func NotConfirmed(err error) (*NotConfirmedError, bool) {
	var e *NotConfirmedError
	ok := errors.As(err, &e)
	return e, ok
}
