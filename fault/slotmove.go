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
	ownerCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	src, err := t.SlotOwner(ownerCtx, f.Slot)
	cancel()
	if err != nil {
		return Window{}, err
	}
	dst, err := f.destination(ctx, t, src)
	if err != nil {
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
	w.End = time.Now()
	return w, nil
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
