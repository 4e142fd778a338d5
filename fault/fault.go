// Package fault holds the things that break a topology, as small values:
// each names itself, says whether it can run on a topology, and injects
// itself returning the window it was active, as data for the report.
package fault

import (
	"context"
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

// Apply checks that f is available, injects it, and wraps any error with the
// fault's name, so every caller reports faults the same way.
func Apply(ctx context.Context, t *fixtures.Topology, f Fault) (Window, error) {
	if err := f.Available(t); err != nil {
		return Window{}, fmt.Errorf("fault %s unavailable: %w", f.Name(), err)
	}
	w, err := f.Inject(ctx, t)
	if err != nil {
		return w, fmt.Errorf("inject %s: %w", f.Name(), err)
	}
	return w, nil
}
