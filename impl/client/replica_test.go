package client_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

// TestValkeyGoReplicaReadsSurviveDeadReplica: spec 000 §Conformance,
// Failure drills (replica connection repair under load: reads that may go
// to replicas keep working). On a real 3×1 whose every node is a seed, a
// valkey-go ReplicaReads pool reads from the replica (READONLY reached it),
// and once the replica is killed its reads keep succeeding at once (on the
// primary), while the naive pool (NaiveReplicaReads, valkey-go's own
// behaviour) fails them: the test's negative control.
func TestValkeyGoReplicaReadsSurviveDeadReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3×1 cluster and kills a replica")
	}
	topo, err := fixtures.Run(t.Context(), fixtures.ClusterSpec(3, 1))
	t.Cleanup(func() {
		if topo != nil {
			_ = topo.Close()
		}
	})
	if err != nil {
		t.Fatalf("run cluster:3x1: %v", err)
	}
	replica := topo.Replicas()[0]
	var primary *fixtures.Node
	for _, n := range topo.Primaries() {
		if n.Shard() == replica.Shard() {
			primary = n
		}
	}
	key := nameOwnedBy(t, topo, "replica-reads", primary)
	nodeDo(t, primary, "SET", key, "v")
	waitReplicaListed(t, topo, slot.Of(key))

	pool := func(name string, naive bool) client.Pool {
		t.Helper()
		p, err := client.NewPool(t.Context(), client.Options{Backend: client.BackendValkeyGo, Mode: client.ModeCluster,
			Addrs: topo.Addrs(), ClientName: name, ReplicaReads: true, NaiveReplicaReads: naive})
		if err != nil {
			t.Fatalf("NewPool %s: %v", name, err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	fixed, naive := pool("sg-replica-reads", false), pool("sg-naive-replica-reads", true)
	// The failure drills' premise reads the map this way: it must list the
	// listed replica and its primary, and say when it cannot be read.
	if got, ok := client.SlotMapNodes(fixed); !ok || !slices.Contains(got, replica.Addr()) || !slices.Contains(got, primary.Addr()) {
		t.Fatalf("SlotMapNodes(valkey-go) = %v, %v; want it to hold %s and %s", got, ok, replica.Addr(), primary.Addr())
	}
	if got, ok := client.SlotMapNodes(goRedisPool(t, topo)); ok {
		t.Fatalf("SlotMapNodes(go-redis) = %v, true; want not readable", got)
	}
	get := func(p client.Pool) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		began := time.Now()
		v, err := p.Do(ctx, client.NewCmd("GET", []string{key}))
		if err == nil && v != "v" {
			err = fmt.Errorf("GET %s = %v, want v", key, v)
		}
		return time.Since(began), err
	}

	const reads = 20
	for range reads {
		if _, err := get(fixed); err != nil {
			t.Fatalf("read before the kill: %v", err)
		}
	}
	// Every node is a seed: without READONLY on the seed connections the
	// replica would answer MOVED (rejected_calls) and serve nothing.
	if calls, rejected := getStats(t, replica); calls < reads || rejected != 0 {
		t.Fatalf("%s served %d GETs and rejected %d of the pool's %d: the pool does not read from the replica", replica.Name(), calls, rejected, reads)
	}
	if _, err := get(naive); err != nil {
		t.Fatalf("naive read before the kill: %v", err)
	}

	if err := replica.Kill(); err != nil {
		t.Fatalf("kill %s: %v", replica.Name(), err)
	}
	// NOTE: well inside the 2 s node timeout, so the cluster still lists
	// the dead replica and valkey-go's slot map still routes to it.
	var slowest time.Duration
	for i := range reads {
		took, err := get(fixed)
		if err != nil {
			t.Fatalf("read %d after the kill: %v", i, err)
		}
		slowest = max(slowest, took)
	}
	// The first read pays one failed attempt on the dead replica and is
	// retried at once; the rest go straight to the primary.
	if slowest > 300*time.Millisecond {
		t.Errorf("slowest read after the kill took %v: the failed replica was not skipped", slowest)
	}
	if took, err := get(naive); err == nil {
		t.Fatalf("naive pool read from the dead replica's shard in %v without error: the negative control proves nothing", took)
	}
}

// waitReplicaListed waits until every node's CLUSTER SLOTS names a replica
// for the range holding slot s: Valkey leaves out a replica whose
// replication offset is still 0 in the gossip, and a client never reads
// from a replica it was not shown. NOTE: only s's range, which the test
// wrote to: an idle shard's replica stays at offset 0 until its primary's
// replication ping (repl-ping-replica-period, 10 s).
func waitReplicaListed(t *testing.T, topo *fixtures.Topology, s int) {
	t.Helper()
	err := wait.Within(t.Context(), 15*time.Second, 50*time.Millisecond, func(context.Context) error {
		for _, n := range topo.Nodes() {
			for _, r := range nodeDo(t, n, "CLUSTER", "SLOTS").([]any) {
				if e := r.([]any); e[0].(int64) <= int64(s) && int64(s) <= e[1].(int64) && len(e) < 4 {
					return fmt.Errorf("%s lists slots %v-%v without a replica", n.Name(), e[0], e[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replica listed for slot %d: %v", s, err)
	}
}

// getStats is a node's GET calls and rejected calls (INFO commandstats).
func getStats(t *testing.T, n *fixtures.Node) (calls, rejected int) {
	t.Helper()
	cs, err := n.Info(t.Context(), "commandstats")
	if err != nil {
		t.Fatalf("%s info commandstats: %v", n.Name(), err)
	}
	for _, kv := range strings.Split(cs["cmdstat_get"], ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "calls":
			calls, _ = strconv.Atoi(v)
		case "rejected_calls":
			rejected, _ = strconv.Atoi(v)
		}
	}
	return calls, rejected
}

// goRedisPool is a go-redis cluster pool on topo.
func goRedisPool(t *testing.T, topo *fixtures.Topology) client.Pool {
	t.Helper()
	p, err := client.NewPool(t.Context(), client.Options{Backend: client.BackendGoRedis, Mode: client.ModeCluster, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatalf("NewPool go-redis: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
