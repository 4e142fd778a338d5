package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// SentinelMode says how a replicated topology (one primary, its replicas
// and three Sentinels: production's cluster-mode-disabled shape, spec 000
// §Problem Statement) loses its primary.
type SentinelMode string

const (
	// SentinelKill SIGKILLs the primary; the Sentinels promote a replica
	// after down-after-milliseconds. The old primary stays down
	// (SentinelFailover.Heal restarts it as a replica).
	SentinelKill SentinelMode = "kill"
	// SentinelPause SIGSTOPs the primary past down-after until a replica is
	// promoted, then resumes it: it answers what its clients queued, and
	// takes new writes, until the Sentinels reconfigure it as a replica.
	SentinelPause SentinelMode = "pause"
	// SentinelCut cuts the primary off its replicas and the Sentinels
	// (fixtures.Node.CutPeers) while its clients still reach it: it keeps
	// acknowledging writes no replica receives for the whole election — the
	// classic split brain. Healed once a replica is promoted; the old
	// primary is then reconfigured as a replica and its writes are gone.
	SentinelCut SentinelMode = "cut"
	// SentinelManual is SENTINEL FAILOVER: a promotion without the
	// primary being down. Not a coordinated hand-over: the old primary
	// takes writes until it is reconfigured.
	SentinelManual SentinelMode = "manual"
	// SentinelLagKill delays the replication link (latency on the
	// primary's peer proxy, Lag) and then takes the primary's host away:
	// its peer links are cut, dropping what was still on the wire, and the
	// process is killed. What the replica had not received is lost.
	SentinelLagKill SentinelMode = "lag-kill"
)

// SentinelFailover fails a replicated topology's primary over by Sentinel.
// Inject returns once the Sentinels agree on a new primary and, for the
// modes that leave the old primary running, once that node reports itself
// a replica again: the window covers the whole time two nodes could take
// writes.
type SentinelFailover struct {
	Mode SentinelMode
	// Lag is SentinelLagKill's replication delay (default 200 ms).
	Lag time.Duration
}

// Name implements Fault.
func (f SentinelFailover) Name() string { return "node/sentinel-failover-" + string(f.Mode) }

// Available implements Fault.
func (f SentinelFailover) Available(t *fixtures.Topology) error {
	if err := t.Controllable(); err != nil {
		return err
	}
	if !t.Spec.IsReplicated() {
		return fmt.Errorf("%s has no Sentinels to fail its primary over: %w", t.Spec, errors.ErrUnsupported)
	}
	if f.Mode == SentinelLagKill {
		// The lag is a toxic on the primary's peer proxy, which only
		// local processes have.
		if err := t.CanAddPeerToxic(); err != nil {
			return fmt.Errorf("%s on %s: %w", f.Name(), t.Spec, err)
		}
	}
	return nil
}

// Inject implements Fault.
func (f SentinelFailover) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	if err := WaitVoteQuarantine(ctx, t, 0); err != nil {
		return Window{}, err
	}
	old, err := t.CurrentPrimary(ctx)
	if err != nil {
		return Window{}, err
	}
	w := Window{Fault: f.Name(), Target: old.Name(), Start: time.Now()}
	switch f.Mode {
	case SentinelKill:
		err = old.Kill()
	case SentinelPause:
		err = old.Pause()
		defer func() { _ = old.Resume() }() // also on every error path
	case SentinelCut:
		err = old.CutPeers()
		defer func() { _ = old.HealPeers() }()
	case SentinelManual:
		err = t.SentinelFailover(ctx)
	case SentinelLagKill:
		lag := f.Lag
		if lag == 0 {
			lag = 200 * time.Millisecond
		}
		if err = old.AddPeerToxic(ctx, "replication-lag", "latency", "downstream", 1, map[string]any{"latency": lag.Milliseconds()}); err == nil {
			// Writes keep flowing while the replica falls behind by lag.
			select {
			case <-time.After(2 * lag):
			case <-ctx.Done():
			}
			// The host dies with the process: what was still on the wire
			// to the replica (held by the delay) goes with it. A killed
			// process alone would leave the kernel and the proxy to
			// deliver it.
			if err = old.CutPeers(); err == nil {
				err = old.Kill()
			}
		}
		defer func() {
			_ = old.RemovePeerToxics(context.WithoutCancel(ctx))
			_ = old.HealPeers()
		}()
	default:
		return w, fmt.Errorf("unknown sentinel failover mode %q", f.Mode)
	}
	if err != nil {
		return w, fmt.Errorf("%s %s: %w", f.Mode, old.Name(), err)
	}
	wctx, cancel := context.WithTimeout(ctx, sentinelLimit(t))
	defer cancel()
	promoted, err := t.WaitNewPrimary(wctx, old)
	if err != nil {
		return w, err
	}
	w.Target = old.Name() + "→" + promoted.Name()
	switch f.Mode {
	case SentinelPause:
		err = old.Resume()
	case SentinelCut:
		err = old.HealPeers()
	case SentinelLagKill:
		if err = old.RemovePeerToxics(ctx); err == nil {
			err = old.HealPeers()
		}
	}
	if err != nil {
		return w, fmt.Errorf("heal %s: %w", old.Name(), err)
	}
	if f.Mode == SentinelPause || f.Mode == SentinelCut || f.Mode == SentinelManual {
		if err := poll(ctx, sentinelLimit(t), func() error {
			role, err := old.CurrentRole(ctx)
			if err != nil {
				return err
			}
			if role != fixtures.RoleReplica {
				return fmt.Errorf("%s is still %s", old.Name(), role)
			}
			return nil
		}); err != nil {
			return w, fmt.Errorf("wait for the Sentinels to reconfigure %s as a replica: %w", old.Name(), err)
		}
	}
	w.End = time.Now()
	t.NoteElection(0, w.End)
	return w, nil
}

// Heal restarts what a kill left down, so the next failover has a replica
// to promote; the Sentinels reconfigure the restarted node as a replica of
// the new primary (it comes back empty: no persistence), which Heal waits
// for. A no-op for the modes that leave the old primary running.
func (f SentinelFailover) Heal(ctx context.Context, t *fixtures.Topology, w Window) error {
	if f.Mode != SentinelKill && f.Mode != SentinelLagKill {
		return nil
	}
	for _, n := range t.Nodes() {
		if n.State() == fixtures.NodeRunning {
			continue
		}
		if err := RestartReplica(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// RestartReplica restarts a node a kill left down and waits until it
// replicates again with its link up: reconfigured is not enough, the next
// failover of its shard needs a replica the Sentinels (or the cluster's
// primaries) consider fit to promote. It comes back empty (no persistence).
func RestartReplica(ctx context.Context, n *fixtures.Node) error {
	if err := n.Restart(ctx); err != nil {
		return err
	}
	if err := poll(ctx, 30*time.Second, func() error {
		repl, err := n.Info(ctx, "replication")
		if err != nil {
			return err
		}
		if repl["role"] != "slave" || repl["master_link_status"] != "up" {
			return fmt.Errorf("restarted %s: role %s, link %s", n.Name(), repl["role"], repl["master_link_status"])
		}
		return nil
	}); err != nil {
		return fmt.Errorf("restarted %s never replicated again: %w", n.Name(), err)
	}
	return nil
}
