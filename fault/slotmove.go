package fault

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
)

// MoveSlot migrates one hash slot, with its keys, to another primary while
// clients keep running: IMPORTING/MIGRATING, MIGRATE of every key, then
// SETSLOT NODE everywhere (Valkey cluster spec, "Live reconfiguration").
// Between MIGRATING and the final SETSLOT, clients see ASK redirects; Hold
// keeps the slot in that state for a while so they do (spec 000
// §Conformance, Routing: "MOVED/ASK redirects under slot migration").
type MoveSlot struct {
	Slot int
	// To is the destination shard; -1 picks the next shard after the owner's.
	To   int
	Hold time.Duration
	// Until, when set, keeps the slot MIGRATING past Hold until it reports
	// true, for at most UntilMax more (10 s when zero): a hold that waits
	// for the clients to have met the migration, not for a fixed time a
	// loaded runner's readers can outlast (presence-mget under heavy CPU
	// contention: no read reached the slot within a 1.5 s hold).
	Until    func() bool
	UntilMax time.Duration
}

// Name implements Fault.
func (f MoveSlot) Name() string { return "slot/migrate-" + strconv.Itoa(f.Slot) }

// Available implements Fault: a slot can only move between two primaries.
func (f MoveSlot) Available(t *fixtures.Topology) error {
	if err := t.Controllable(); err != nil {
		return err
	}
	if t.Spec.Kind != fixtures.KindCluster || t.Spec.Primaries < 2 {
		return fmt.Errorf("%s has fewer than two primaries", t.Spec)
	}
	return nil
}

// Inject implements Fault.
func (f MoveSlot) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	// The owner as the owner sees it: another node's view can lag the last
	// SETSLOT NODE by a gossip round.
	ownerCtx, cancel := context.WithTimeout(ctx, gossipLimit)
	src, err := t.SlotOwner(ownerCtx, f.Slot)
	cancel()
	if err != nil {
		return Window{}, err
	}
	dst, err := f.destination(ctx, t, src)
	if err != nil {
		return Window{}, err
	}
	// NOTE: a second move of one slot right after the first raced the
	// gossip of the first's epoch bump: the new owner's SETSLOT NODE did not
	// bump its config epoch (its own view held no greater one yet), a stale
	// heartbeat of the old owner then won the slot back on it, and the two
	// primaries pointed at each other — MOVED ping-pong, a valkey-go caller
	// hung. Start only once every node agrees on every config epoch.
	if err := epochsAgreed(ctx, t, gossipLimit); err != nil {
		return Window{}, err
	}
	w := Window{Fault: f.Name(), Target: src.Name() + "→" + dst.Name(), Start: time.Now()}
	srcID, err := src.ID(ctx)
	if err != nil {
		return w, err
	}
	dstID, err := dst.ID(ctx)
	if err != nil {
		return w, err
	}
	slot := strconv.Itoa(f.Slot)
	if _, err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID); err != nil {
		return w, fmt.Errorf("importing on %s: %w", dst.Name(), err)
	}
	if _, err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID); err != nil {
		return w, fmt.Errorf("migrating on %s: %w", src.Name(), err)
	}
	if f.Hold > 0 {
		select {
		case <-time.After(f.Hold):
		case <-ctx.Done():
			return w, ctx.Err()
		}
	}
	if f.Until != nil {
		limit := f.UntilMax
		if limit <= 0 {
			limit = 10 * time.Second
		}
		deadline := time.Now().Add(limit)
		for !f.Until() && time.Now().Before(deadline) {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return w, ctx.Err()
			}
		}
	}
	host, port, _ := strings.Cut(dst.DirectAddr(), ":")
	for {
		reply, err := src.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, "100")
		if err != nil {
			return w, fmt.Errorf("getkeysinslot %s: %w", slot, err)
		}
		keys, _, err := client.AsStrings(reply)
		if err != nil {
			return w, fmt.Errorf("getkeysinslot %s: %w", slot, err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", "0", "5000", "REPLACE", "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if _, err := src.Do(ctx, args...); err != nil {
			return w, fmt.Errorf("migrate %d keys of slot %s: %w", len(keys), slot, err)
		}
	}
	// The destination first, then the source, then everyone else: the order
	// the cluster spec gives so no node ever answers for a slot nobody owns.
	nodes := []*fixtures.Node{dst, src}
	for _, p := range t.Primaries() {
		if p != src && p != dst && p.State() == fixtures.NodeRunning {
			nodes = append(nodes, p)
		}
	}
	for _, n := range nodes {
		if _, err := n.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID); err != nil {
			return w, fmt.Errorf("setslot node on %s: %w", n.Name(), err)
		}
	}
	if err := converge(ctx, t, f.Slot, dst, dstID, gossipLimit); err != nil {
		return w, err
	}
	w.End = time.Now()
	return w, nil
}

// gossipLimit bounds each wait of a move on the cluster's gossip (the
// owner's view, every node's config epochs, every node's view of the new
// owner). They are polls that end as soon as the state is seen, so the
// bound costs nothing on a quiet runner; under heavy CPU contention a 5 s
// bound for the epochs to agree ran out before gossip settled, and the cell
// scored inconclusive ("fault slot/migrate not confirmed") for want of time.
const gossipLimit = 30 * time.Second

// converge waits until every running node names dst as the slot's owner —
// the move is confirmed only then. A node still holding another view after
// a while is told again, and dst bumps its config epoch so its claim
// outranks any stale one still in flight (CLUSTER BUMPEPOCH).
func converge(ctx context.Context, t *fixtures.Topology, slot int, dst *fixtures.Node, dstID string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	repairAt := time.Now().Add(time.Second)
	for {
		views, disagree := slotViews(ctx, t, slot, dstID)
		if len(disagree) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slot %d did not converge on %s within %v: %s", slot, dst.Name(), limit, strings.Join(views, ", "))
		}
		if time.Now().After(repairAt) {
			repairAt = time.Now().Add(time.Second)
			_, _ = dst.Do(ctx, "CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", dstID)
			_, _ = dst.Do(ctx, "CLUSTER", "BUMPEPOCH")
			for _, n := range disagree {
				if role, err := n.CurrentRole(ctx); err == nil && role == fixtures.RolePrimary {
					_, _ = n.Do(ctx, "CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", dstID)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// slotViews asks every running node who owns slot; it returns each view as
// "node→owner" and the nodes whose view is not wantID.
func slotViews(ctx context.Context, t *fixtures.Topology, slot int, wantID string) (views []string, disagree []*fixtures.Node) {
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		view, err := n.ClusterView(ctx)
		owner := view.SlotOwner(slot)
		if err != nil {
			owner = "error: " + err.Error()
		}
		if owner != wantID {
			disagree = append(disagree, n)
		}
		views = append(views, n.Name()+"→"+shortID(owner))
	}
	return views, disagree
}

// epochsAgreed waits until every running node reports the same config
// epoch for every primary (CLUSTER NODES), so no bump is still in flight.
func epochsAgreed(ctx context.Context, t *fixtures.Topology, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var first map[string]string
		agreed, last := true, ""
		for _, n := range t.Nodes() {
			if n.State() != fixtures.NodeRunning {
				continue
			}
			view, err := n.ClusterView(ctx)
			epochs := view.ConfigEpochs()
			if err != nil {
				agreed, last = false, n.Name()+": "+err.Error()
				break
			}
			if first == nil {
				first = epochs
				continue
			}
			for id, e := range first {
				if epochs[id] != e {
					agreed, last = false, fmt.Sprintf("%s sees %s at epoch %s, not %s", n.Name(), shortID(id), epochs[id], e)
				}
			}
		}
		if agreed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("config epochs did not agree within %v: %s", limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	if id == "" {
		return "nobody"
	}
	return id
}

func (f MoveSlot) destination(ctx context.Context, t *fixtures.Topology, src *fixtures.Node) (*fixtures.Node, error) {
	var primaries []*fixtures.Node
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		if role, err := n.CurrentRole(ctx); err == nil && role == fixtures.RolePrimary {
			primaries = append(primaries, n)
		}
	}
	for _, p := range primaries {
		if f.To >= 0 && p.Shard() == f.To && p != src {
			return p, nil
		}
	}
	if f.To < 0 {
		for i, p := range primaries {
			if p == src {
				return primaries[(i+1)%len(primaries)], nil
			}
		}
	}
	return nil, fmt.Errorf("no running primary for shard %d other than %s", f.To, src.Name())
}
