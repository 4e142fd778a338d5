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

// ReplaceOptions says how the pod a rollout replaces lingers.
type ReplaceOptions struct {
	// Grace is how long it keeps serving (its termination grace period).
	Grace time.Duration
	// Listed: the rollout still lists the pod while it terminates, so the
	// gate's observation carries it (rule 2(b), older ReplicaSets not yet
	// at zero). Unlisted is a pod gone from the API while its process still
	// runs — force-deleted, or on a node the control plane lost — which no
	// observation of the rollout can see.
	Listed bool
	// Serving: it still accepts new sessions while it lingers (a
	// terminating pod stays in its Service's endpoints until the endpoint
	// controller catches up, and keeps the tunnels that reconnect to it).
	// Off, it only renews what it holds.
	Serving bool
}

// Replace starts a fresh pod at phase in slot i and turns the pod it
// replaces into a straggler: gone from the gauges at once, it keeps renewing
// (and presenting frames for) the leases it holds — and with opts.Serving
// takes new sessions — for opts.Grace, then exits without releasing them.
// It returns the straggler's name.
func (f *Fleet) Replace(i int, phase fencing.Phase, opts ReplaceOptions) (string, error) {
	f.mu.Lock()
	old := f.pods[f.slots[i]]
	f.mu.Unlock()
	if old == nil {
		return "", fmt.Errorf("replace slot %d: no live pod", i)
	}
	oldPhase := old.dir.Load().Phase()
	old.terminating.Store(!opts.Serving)
	f.mu.Lock()
	f.lingering = append(f.lingering, old)
	f.mu.Unlock()
	if err := f.start(i, phase); err != nil { // drops the old pod from the gauges
		return "", err
	}
	left := f.clock.Now()
	f.mu.Lock()
	idx := len(f.stragglers)
	f.stragglers = append(f.stragglers, history.Straggler{Pod: old.Name, Phase: string(oldPhase), Left: left, Listed: opts.Listed, Serving: opts.Serving})
	f.mu.Unlock()
	grace := opts.Grace
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

// Terminating is every listed straggler still lingering, with its phase:
// the rollout's older pods not yet at zero (spec 000 §Deployment Gate rule
// 2(b)).
func (f *Fleet) Terminating() map[string]fencing.Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]fencing.Phase{}
	for _, s := range f.stragglers {
		if s.Listed && s.Gone == 0 {
			out[s.Pod] = fencing.Phase(s.Phase)
		}
	}
	return out
}

// Stragglers returns every straggler so far (Gone is zero while it lingers).
func (f *Fleet) Stragglers() []history.Straggler {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]history.Straggler(nil), f.stragglers...)
}
