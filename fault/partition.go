package fault

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// Partition cuts a shard's primary off the cluster bus — the cluster-bus
// partition drill (spec 000 §Conformance, Failure drills). The primary
// leaves the cluster network
// (fixtures.Node.Disconnect: a container leaves the topology's cluster
// network, a local process is cut at its peer gates): its bus and
// replication links break both ways while its clients still reach it. The fault holds the partition
// until the majority has promoted the shard's replica and the isolated
// primary reports cluster_state:fail, runs WhileHeld, then heals
// (Reconnect) and returns once the old primary has rejoined as a replica of
// the new one. The shard keeps its new primary; Topology.Reset gives the
// role back.
//
// Available refuses, with an error wrapping errors.ErrUnsupported, a
// topology whose nodes cannot be cut off the bus while their clients still
// reach them (fixtures.Topology.CanDisconnect: a local cluster of Redis 7,
// whose replicas replicate through the client proxies) and one without the
// majority a failover needs.
type Partition struct {
	Shard int
	// WhileHeld, when set, runs while the partition holds: after the
	// promotion and the minority's cluster_state:fail (or the bound on
	// that wait; Partitioned.MinorityDown is then zero), before the heal,
	// which starts as soon as it returns. It sees both sides of the split
	// (the isolated primary's copy is discarded at the heal), and may
	// prolong the partition. Its error is returned after healing.
	WhileHeld func(ctx context.Context, p Partitioned) error
}

// Partitioned is a partition in effect, as WhileHeld sees it.
type Partitioned struct {
	// Minority is the isolated old primary; Majority the replica the rest
	// of the cluster promoted.
	Minority, Majority *fixtures.Node
	// Start is when the disconnect was requested, Cut when it returned.
	Start, Cut time.Time
	// MinorityDown is when the isolated primary was first seen reporting
	// cluster_state:fail — from then on it refuses every key command — or
	// zero if it did not within partitionLimit.
	MinorityDown time.Time
	// Promoted is when Majority first answered as a primary with
	// cluster_state:ok.
	Promoted time.Time
}

// partitionLimit bounds each wait of the fault: the promotion (measured
// 3.7–4.1 s on containers with the fixture's 2 s node timeout), the
// minority's fail state after it, and the rejoin. A bound passing is an error, except for the
// minority's fail state, which is the scenario's to judge.
const partitionLimit = 30 * time.Second

// Name implements Fault.
func (f Partition) Name() string { return fmt.Sprintf("network/partition-primary-%d", f.Shard) }

// Available implements Fault: a started cluster of at least three shards
// (one primary isolated leaves a majority of primaries to elect a
// replica) whose nodes can be cut off the bus (containers, or local Valkey
// 8 processes), and a running replica in the shard.
func (f Partition) Available(t *fixtures.Topology) error {
	if err := t.CanDisconnect(); err != nil {
		return fmt.Errorf("cannot cut one node of %s off the cluster bus while its clients still reach it: %w", t.Spec, err)
	}
	if t.Spec.Kind != fixtures.KindCluster || t.Spec.Primaries < 3 {
		return fmt.Errorf("%s: a partitioned primary needs at least two other primaries to form the majority that fails it over: %w", t.Spec, errors.ErrUnsupported)
	}
	if _, _, err := shardNodes(t, f.Shard); err != nil {
		return err
	}
	return nil
}

// Inject implements Fault. The window runs from the disconnect to the
// rejoin. Whatever fails, the node is put back on the bus before Inject
// returns.
func (f Partition) Inject(ctx context.Context, t *fixtures.Topology) (w Window, err error) {
	primary, replica, err := shardNodes(t, f.Shard)
	if err != nil {
		return Window{}, err
	}
	if err := WaitVoteQuarantine(ctx, t, f.Shard); err != nil {
		return Window{}, err
	}
	if err := poll(ctx, partitionLimit, func() error { return readyToElect(ctx, t, primary, replica) }); err != nil {
		return Window{}, fmt.Errorf("before cutting %s off: %w", primary.Name(), err)
	}
	p := Partitioned{Minority: primary, Majority: replica, Start: time.Now()}
	w = Window{Fault: f.Name(), Target: primary.Name() + " off the bus, " + replica.Name() + " promoted", Start: p.Start}
	if err := primary.Disconnect(ctx); err != nil {
		return w, err
	}
	p.Cut = time.Now()
	// healed is set only once Reconnect succeeded, so that any failure
	// before or in it (WhileHeld's error, a failed wait, a failed
	// Reconnect) leaves the heal to the deferred one.
	healed := false
	defer func() {
		if healed {
			return
		}
		// Heal even when ctx is done: a node left off the bus would fail
		// every later scenario on the topology. Reconnect is a no-op on a
		// node already back. The heal also waits for the rejoin (bounded
		// like every wait of the fault), so that the next Topology.Reset
		// does not race a node still finding its way back.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second+partitionLimit)
		defer cancel()
		if rerr := primary.Reconnect(hctx); rerr != nil {
			err = errors.Join(err, rerr)
			return
		}
		if rerr := poll(hctx, partitionLimit, func() error { return rejoined(hctx, primary) }); rerr != nil {
			err = errors.Join(err, fmt.Errorf("heal: wait for %s to rejoin: %w", primary.Name(), rerr))
		}
	}()

	if err := poll(ctx, partitionLimit, func() error {
		if p.MinorityDown.IsZero() {
			if info, err := primary.ClusterInfo(ctx); err == nil && info["cluster_state"] == "fail" {
				p.MinorityDown = time.Now()
			}
		}
		if p.Promoted.IsZero() {
			if err := servesAsPrimary(ctx, replica); err != nil {
				return err
			}
			p.Promoted = time.Now()
			t.NoteElection(f.Shard, p.Promoted)
		}
		if p.MinorityDown.IsZero() && time.Since(p.Promoted) < partitionLimit/3 {
			return fmt.Errorf("%s still reports cluster_state:ok", primary.Name())
		}
		return nil
	}); err != nil {
		return w, fmt.Errorf("wait for the majority to promote %s: %w", replica.Name(), err)
	}
	if f.WhileHeld != nil {
		if err := f.WhileHeld(ctx, p); err != nil {
			return w, fmt.Errorf("while %s was partitioned: %w", primary.Name(), err)
		}
	}
	if err := primary.Reconnect(ctx); err != nil {
		return w, err
	}
	healed = true
	if err := poll(ctx, partitionLimit, func() error { return rejoined(ctx, primary) }); err != nil {
		return w, fmt.Errorf("wait for %s to rejoin as a replica of %s: %w", primary.Name(), replica.Name(), err)
	}
	w.End = time.Now()
	return w, nil
}

// readyToElect says why the majority could not (yet) elect replica once
// primary is cut off: every running node must list primary as a primary and
// replica as its replica, and agree on every primary's config epoch, and
// the replica's link must be up. Topology.Reset hands a role back with
// CLUSTER FAILOVER TAKEOVER, which bumps the taker's epoch without a vote;
// a primary that has not yet heard of it still takes the old owner for the
// shard's primary and refuses the replica's vote request (Valkey cluster
// spec, "Replica election and promotion"), and a replica without a link to
// its primary has no data age to stand with. Cut in that window, the fault
// would wait for a promotion that never comes.
func readyToElect(ctx context.Context, t *fixtures.Topology, primary, replica *fixtures.Node) error {
	pid, err := primary.ID(ctx)
	if err != nil {
		return err
	}
	rid, err := replica.ID(ctx)
	if err != nil {
		return err
	}
	var epochs map[string]string
	var first string
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		v, err := n.ClusterView(ctx)
		if err != nil {
			return err
		}
		if m, known := v.Follows(pid); !known || m != "" {
			return fmt.Errorf("%s does not yet list %s as a primary", n.Name(), primary.Name())
		}
		if m, known := v.Follows(rid); !known || m != pid {
			return fmt.Errorf("%s does not yet list %s as a replica of %s", n.Name(), replica.Name(), primary.Name())
		}
		e := v.ConfigEpochs()
		if epochs == nil {
			epochs, first = e, n.Name()
		} else if !maps.Equal(epochs, e) {
			return fmt.Errorf("%s and %s disagree on the primaries' config epochs (%v, %v)", first, n.Name(), epochs, e)
		}
	}
	repl, err := replica.Info(ctx, "replication")
	if err != nil {
		return err
	}
	if repl["master_link_status"] != "up" {
		return fmt.Errorf("%s master_link_status:%s", replica.Name(), repl["master_link_status"])
	}
	return nil
}

// servesAsPrimary says why n is not (yet) a primary with cluster_state:ok.
func servesAsPrimary(ctx context.Context, n *fixtures.Node) error {
	role, err := n.CurrentRole(ctx)
	if err != nil {
		return err
	}
	if role != fixtures.RolePrimary {
		return fmt.Errorf("%s is still %s", n.Name(), role)
	}
	info, err := n.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	if info["cluster_state"] != "ok" {
		return fmt.Errorf("%s cluster_state:%s", n.Name(), info["cluster_state"])
	}
	return nil
}

// rejoined says why n, a healed old primary, is not (yet) a replica whose
// link is up in a cluster it sees as ok.
func rejoined(ctx context.Context, n *fixtures.Node) error {
	repl, err := n.Info(ctx, "replication")
	if err != nil {
		return err
	}
	if repl["role"] != "slave" || repl["master_link_status"] != "up" {
		return fmt.Errorf("%s role:%s master_link_status:%s", n.Name(), repl["role"], repl["master_link_status"])
	}
	info, err := n.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	if info["cluster_state"] != "ok" {
		return fmt.Errorf("%s cluster_state:%s", n.Name(), info["cluster_state"])
	}
	return nil
}
