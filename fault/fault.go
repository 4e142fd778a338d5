// Package fault holds the things that break a topology, as small values:
// each names itself, says whether it can run on a topology, and injects
// itself returning the window it was active, as data for the report.
package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotgate/slotgate/fixtures"
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

// Apply checks that f is available, injects it, and wraps any error in a
// *NotConfirmedError naming the fault, so every caller reports faults the
// same way — and as the harness's failure, not the implementation's.
func Apply(ctx context.Context, t *fixtures.Topology, f Fault) (Window, error) {
	if err := f.Available(t); err != nil {
		return Window{}, &NotConfirmedError{Fault: f.Name(), Unavailable: true, Err: err}
	}
	w, err := f.Inject(ctx, t)
	if err != nil {
		return w, &NotConfirmedError{Fault: f.Name(), Err: err}
	}
	return w, nil
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
