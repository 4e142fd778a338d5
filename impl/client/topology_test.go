package client_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/slot"
)

// testServers is the two topologies every config runs on: one standalone
// server (ModeSingle) and a 3-primary cluster without replicas (ModeCluster).
type testServers struct {
	standalone *fixtures.Topology
	cluster    *fixtures.Topology
}

// startTestServers starts both topologies in parallel; t.Cleanup closes them.
func startTestServers(t *testing.T) *testServers {
	t.Helper()
	ts := &testServers{}
	specs := []fixtures.Spec{fixtures.StandaloneSpec(), fixtures.ClusterSpec(3, 0)}
	topos := make([]*fixtures.Topology, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { topos[i], errs[i] = fixtures.Run(t.Context(), spec) })
	}
	wg.Wait()
	for i := range specs {
		t.Cleanup(func() { _ = topos[i].Close() })
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %s: %v", specs[i], err)
		}
	}
	ts.standalone, ts.cluster = topos[0], topos[1]
	return ts
}

// nodeDo runs an admin command on one node, failing the test on error.
func nodeDo(t *testing.T, n *fixtures.Node, args ...any) any {
	t.Helper()
	v, err := n.Do(t.Context(), args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return v
}

// nodeString runs an admin command whose reply is a string.
func nodeString(t *testing.T, n *fixtures.Node, args ...any) string {
	t.Helper()
	v := nodeDo(t, n, args...)
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s %v: reply %T, want string", n, args, v)
	}
	return s
}

// ownerOf is the node that currently owns slot s.
func ownerOf(t *testing.T, topo *fixtures.Topology, s int) *fixtures.Node {
	t.Helper()
	n, err := topo.NodeForSlot(t.Context(), s)
	if err != nil {
		t.Fatalf("node for slot %d: %v", s, err)
	}
	return n
}

// nameOwnedBy returns a name derived from base whose slot n owns now.
func nameOwnedBy(t *testing.T, topo *fixtures.Topology, base string, n *fixtures.Node) string {
	t.Helper()
	for i := range 10000 {
		name := base + ":" + strconv.Itoa(i)
		if ownerOf(t, topo, slot.Of(name)) == n {
			return name
		}
	}
	panic(fmt.Sprintf("no name from %s on %s", base, n))
}

// killClients closes every connection named name on nodes.
func killClients(t *testing.T, nodes []*fixtures.Node, name string) int {
	t.Helper()
	total := 0
	for _, n := range nodes {
		k, err := n.KillClient(t.Context(), name)
		if err != nil {
			t.Fatalf("kill %s on %s: %v", name, n, err)
		}
		total += k
	}
	return total
}
