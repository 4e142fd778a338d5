package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// Latency adds latency (and jitter) to every client link of the chosen
// nodes through their toxiproxy proxies, downstream and upstream.
type Latency struct {
	Nodes   []string // node names; empty means every node
	Latency time.Duration
	Jitter  time.Duration
}

// Name implements Fault.
func (f Latency) Name() string { return "link/latency" }

// Available implements Fault.
func (f Latency) Available(t *fixtures.Topology) error { _, err := pick(t, f.Nodes); return err }

// Inject implements Fault: the toxic stays until Topology.Reset or Heal.
func (f Latency) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	nodes, err := pick(t, f.Nodes)
	if err != nil {
		return Window{}, err
	}
	w := Window{Fault: f.Name(), Target: names(nodes), Start: time.Now()}
	attrs := map[string]any{"latency": f.Latency.Milliseconds(), "jitter": f.Jitter.Milliseconds()}
	for _, n := range nodes {
		for _, stream := range []string{"downstream", "upstream"} {
			if err := n.AddToxic(ctx, "latency-"+stream, "latency", stream, 1, attrs); err != nil {
				return w, fmt.Errorf("add latency to %s: %w", n.Name(), err)
			}
		}
	}
	w.End = time.Now()
	return w, nil
}

// ResetPeer cuts every client connection of the chosen nodes with a TCP
// RST (toxiproxy reset_peer) for Duration, then removes the toxic: the
// "forced disconnect" the subscription drills need (spec 000 §Conformance,
// Subscriptions).
type ResetPeer struct {
	Nodes    []string
	Duration time.Duration
}

// Name implements Fault.
func (f ResetPeer) Name() string { return "link/reset-peer" }

// Available implements Fault.
func (f ResetPeer) Available(t *fixtures.Topology) error { _, err := pick(t, f.Nodes); return err }

// Inject implements Fault.
func (f ResetPeer) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	nodes, err := pick(t, f.Nodes)
	if err != nil {
		return Window{}, err
	}
	w := Window{Fault: f.Name(), Target: names(nodes), Start: time.Now()}
	for _, n := range nodes {
		n.DisableProxy()
	}
	select {
	case <-time.After(f.Duration):
	case <-ctx.Done():
	}
	for _, n := range nodes {
		if err := n.EnableProxy(); err != nil {
			return w, fmt.Errorf("re-enable proxy of %s: %w", n.Name(), err)
		}
	}
	w.End = time.Now()
	return w, ctx.Err()
}

// KillClients kills every connection that named itself Client (CLIENT
// SETNAME) on every node: a server-side disconnect of one client.
type KillClients struct{ Client string }

// Name implements Fault.
func (f KillClients) Name() string { return "client/kill-" + f.Client }

// Available implements Fault: not on an attached target, which slotgate
// does not fault.
func (KillClients) Available(t *fixtures.Topology) error { return t.Controllable() }

// Inject implements Fault.
func (f KillClients) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	w := Window{Fault: f.Name(), Start: time.Now()}
	total := 0
	for _, n := range t.Nodes() {
		if n.State() != fixtures.NodeRunning {
			continue
		}
		k, err := n.KillClient(ctx, f.Client)
		if err != nil {
			return w, fmt.Errorf("kill clients on %s: %w", n.Name(), err)
		}
		total += k
	}
	w.Target, w.End = fmt.Sprintf("%d connections", total), time.Now()
	return w, nil
}

// Pause freezes a node (SIGSTOP) for Duration, then resumes it.
type Pause struct {
	Node     string
	Duration time.Duration
}

// Name implements Fault.
func (f Pause) Name() string { return "node/pause" }

// Available implements Fault.
func (f Pause) Available(t *fixtures.Topology) error { _, err := pick(t, []string{f.Node}); return err }

// Inject implements Fault.
func (f Pause) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	nodes, err := pick(t, []string{f.Node})
	if err != nil {
		return Window{}, err
	}
	n := nodes[0]
	w := Window{Fault: f.Name(), Target: n.Name(), Start: time.Now()}
	if err := n.Pause(); err != nil {
		return w, err
	}
	select {
	case <-time.After(f.Duration):
	case <-ctx.Done():
	}
	if err := n.Resume(); err != nil {
		return w, err
	}
	w.End = time.Now()
	return w, ctx.Err()
}

// pick resolves node names; a topology slotgate did not start has no node
// it may fault (fixtures.Topology.Controllable).
func pick(t *fixtures.Topology, want []string) ([]*fixtures.Node, error) {
	if err := t.Controllable(); err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return t.Nodes(), nil
	}
	var out []*fixtures.Node
	for _, name := range want {
		found := false
		for _, n := range t.Nodes() {
			if n.Name() == name {
				out, found = append(out, n), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no node named %q in %s", name, t.Spec)
		}
	}
	return out, nil
}

func names(nodes []*fixtures.Node) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = n.Name()
	}
	return strings.Join(s, ",")
}
