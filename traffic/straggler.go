package traffic

import (
	"fmt"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
)

// Stragglers of a rollout (spec 000 §Deployment Gate, C-gate). A
// RollingUpdate replaces a pod; the old one is sent SIGTERM and lingers in
// its grace period. It no longer reports its phase gauge (it left the
// ReplicaSet's count), yet it keeps serving the sessions it holds —
// renewing their leases in place, with its old scripts — until it exits.
// Only observing the keyspace sees it.

// Replace starts a fresh pod at phase in slot i and turns the pod it
// replaces into a straggler: gone from the gauges at once, it takes no new
// session but keeps renewing (and presenting frames for) the leases it holds
// for grace, then exits without releasing them. It returns the straggler's
// name.
func (f *Fleet) Replace(i int, phase fencing.Phase, grace time.Duration) (string, error) {
	f.mu.Lock()
	old := f.pods[f.slots[i]]
	f.mu.Unlock()
	if old == nil {
		return "", fmt.Errorf("replace slot %d: no live pod", i)
	}
	oldPhase := old.dir.Load().Phase()
	old.terminating.Store(true)
	f.mu.Lock()
	f.lingering = append(f.lingering, old)
	f.mu.Unlock()
	if err := f.start(i, phase); err != nil { // drops the old pod from the gauges
		return "", err
	}
	left := f.clock.Now()
	f.mu.Lock()
	idx := len(f.stragglers)
	f.stragglers = append(f.stragglers, history.Straggler{Pod: old.Name, Phase: string(oldPhase), Left: left})
	f.mu.Unlock()
	go func() {
		select {
		case <-f.ctx.Done():
		case <-time.After(grace):
		}
		old.stop()
		f.mu.Lock()
		f.stragglers[idx].Gone = f.clock.Now()
		f.mu.Unlock()
	}()
	return old.Name, nil
}

// Stragglers returns every straggler so far (Gone is zero while it lingers).
func (f *Fleet) Stragglers() []history.Straggler {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]history.Straggler(nil), f.stragglers...)
}
