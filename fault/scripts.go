package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// ScriptFlush empties the script cache of every node (SCRIPT FLUSH): the
// per-node cache is lost exactly like this after a failover to a fresh
// replica or a restart (spec 000 §Conformance, Fencing scripts: "per-node
// script cache / NOSCRIPT handling").
type ScriptFlush struct{}

// Name implements Fault.
func (ScriptFlush) Name() string { return "script-cache/flush" }

// Available implements Fault: every topology slotgate started has a script
// cache it may flush; an attached target is faulted by nothing.
func (ScriptFlush) Available(t *fixtures.Topology) error { return t.Controllable() }

// Inject implements Fault.
func (f ScriptFlush) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	w := Window{Fault: f.Name(), Start: time.Now()}
	var names []string
	for _, n := range t.Nodes() {
		if _, err := n.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			return w, fmt.Errorf("script flush %s: %w", n.Name(), err)
		}
		names = append(names, n.Name())
	}
	w.Target, w.End = strings.Join(names, ","), time.Now()
	return w, nil
}

// RestartPrimary stops the Index-th primary abruptly (SIGKILL) and starts it
// again on the same data dir, ports and node id, returning once the cluster
// is healthy: the restarted node's script cache is empty.
type RestartPrimary struct{ Index int }

// Name implements Fault.
func (RestartPrimary) Name() string { return "node/restart-primary" }

// Available implements Fault.
func (f RestartPrimary) Available(t *fixtures.Topology) error {
	if err := t.Controllable(); err != nil {
		return err
	}
	if n := len(t.Primaries()); f.Index >= n {
		return fmt.Errorf("primary %d of %d", f.Index, n)
	}
	return nil
}

// Inject implements Fault.
func (f RestartPrimary) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	n := t.Primaries()[f.Index]
	w := Window{Fault: f.Name(), Target: n.Name(), Start: time.Now()}
	if err := n.Kill(); err != nil {
		return w, fmt.Errorf("kill %s: %w", n.Name(), err)
	}
	if err := n.Restart(ctx); err != nil {
		return w, fmt.Errorf("restart %s: %w", n.Name(), err)
	}
	if err := t.WaitHealthy(ctx); err != nil {
		return w, fmt.Errorf("wait healthy after restart of %s: %w", n.Name(), err)
	}
	w.End = time.Now()
	return w, nil
}
