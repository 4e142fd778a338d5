package fault

import (
	"context"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// StartParallelCluster starts a 3×1 cluster for one test of the package,
// run in parallel with the package's other topology tests: each has its own
// servers and ports, injects faults only into them, and mostly waits on
// Valkey's timers (elections, cluster-node-timeout), so the waits overlap.
// The context ends after two minutes; the cluster closes with the test.
func StartParallelCluster(t *testing.T) (context.Context, *fixtures.Topology) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 1))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return ctx, topo
}
