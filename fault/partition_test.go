package fault_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/internal/wait"
)

// valkeyImage is the Valkey image the container tests run: the
// SLOTGATE_VALKEY_IMAGE setting, else the one scripts/images.sh builds from
// this host's packages (idempotent: an up-to-date image is not rebuilt).
// Without a Docker engine the test skips.
func valkeyImage(t *testing.T, ctx context.Context) string {
	t.Helper()
	if err := fixtures.CheckContainerEngine(ctx); err != nil {
		t.Skipf("container provider: %v", err)
	}
	if v := os.Getenv("SLOTGATE_VALKEY_IMAGE"); v != "" {
		return v
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "scripts", "images.sh"), "valkey")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/images.sh valkey: %v\n%s", err, stderr.String())
	}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "SLOTGATE_VALKEY_IMAGE="); ok {
			return v
		}
	}
	t.Fatalf("scripts/images.sh printed no SLOTGATE_VALKEY_IMAGE: %q", out)
	return ""
}

// A topology without a cluster bus cannot be partitioned: Partition is not
// available there, and says so with errors.ErrUnsupported, which a
// scenario skips on.
func TestPartitionUnavailableWithoutBus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = fault.Apply(ctx, topo, fault.Partition{Shard: 0})
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no cluster network") {
		t.Errorf("Apply(Partition) on a standalone server = %v, want errors.ErrUnsupported: no cluster network", err)
	}
}

// On a local 3×1 (the default provider) a partitioned primary behaves as on
// containers: see partitionDrill.
func TestPartitionOnLocalProcesses(t *testing.T) {
	ctx, topo := fault.StartParallelCluster(t)
	partitionDrill(t, ctx, topo, 0)
}

// On a container 3×1, the same drill as on local processes.
func TestPartitionOnContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	image := valkeyImage(t, ctx)
	began := time.Now()
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(3, 1), fixtures.WithProvider(fixtures.ProviderContainers), fixtures.WithValkeyImage(image))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("container 3×1 up in %v", time.Since(began).Round(time.Millisecond))
	partitionDrill(t, ctx, topo, 1)
}

// ackedWrite is one write a client through the isolated primary's proxy
// had acknowledged.
type ackedWrite struct {
	seq  int64
	call time.Time
}

// partitionDrill partitions shard's primary of a 3×1 and proves the
// fault's contract: a client on the isolated primary's proxy (Addr) gets
// writes acknowledged right after the cut — each sent before the primary
// reports cluster_state:fail, and none can reach the replica — then
// CLUSTERDOWN once it does (so the client still reaches it); the majority
// promotes the replica; after the heal the old primary is the new one's
// replica and every write it acknowledged alone is gone, while a write
// replicated before the cut survives. Reset then restores the built
// layout. A failing WhileHeld still heals before Inject returns.
func partitionDrill(t *testing.T, ctx context.Context, topo *fixtures.Topology, shard int) {
	t.Helper()
	old := topo.Primaries()[shard]
	var key string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("partition-test-%d", i)
		if n, err := topo.NodeForSlot(ctx, slot.Of(k)); err == nil && n == old {
			key = k
		}
	}
	if _, err := old.Do(ctx, "RPUSH", key, "0"); err != nil {
		t.Fatal(err)
	}
	if v, err := old.Do(ctx, "WAIT", "1", "5000"); err != nil || v != int64(1) {
		t.Fatalf("WAIT for the write before the cut to reach the replica: %v %v", v, err)
	}

	var held fault.Partitioned
	var minorityWrite error
	f := fault.Partition{Shard: shard, WhileHeld: func(ctx context.Context, p fault.Partitioned) error {
		held = p
		_, minorityWrite = p.Minority.Do(ctx, "RPUSH", key, "refused")
		return nil
	}}
	if err := f.Available(topo); err != nil {
		t.Fatalf("Available on a %s 3×1: %v", topo.Provider(), err)
	}

	// A client of the isolated primary, through its proxy, writes from the
	// cut on until the primary refuses: it still takes writes until its
	// node timeout, and they cannot reach the replica.
	client := redis.NewClient(&redis.Options{Addr: old.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer client.Close()
	var (
		mu      sync.Mutex
		acked   []ackedWrite
		refusal error
	)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		// From the cut on (the proxy reports it; no callback offers it).
		_ = wait.Until(ctx, time.Millisecond, func(context.Context) error {
			if !old.Disconnected() {
				return errors.New("not cut yet")
			}
			return nil
		})
		for seq := int64(1); ctx.Err() == nil; seq++ {
			call := time.Now()
			err := client.RPush(ctx, key, seq).Err()
			mu.Lock()
			if err != nil {
				refusal = err
				mu.Unlock()
				return
			}
			acked = append(acked, ackedWrite{seq: seq, call: call})
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // a duration: paces the writer
		}
	}()
	w, err := fault.Apply(ctx, topo, f)
	if err != nil {
		t.Fatal(err)
	}
	<-writerDone

	t.Logf("%s: cut after %v, minority cluster_state:fail after %v, promoted after %v, rejoined after %v",
		w.Target, held.Cut.Sub(held.Start).Round(time.Millisecond), held.MinorityDown.Sub(held.Start).Round(time.Millisecond),
		held.Promoted.Sub(held.Start).Round(time.Millisecond), w.End.Sub(w.Start).Round(time.Millisecond))
	if held.Minority != old || held.MinorityDown.IsZero() || held.Promoted.IsZero() {
		t.Fatalf("while held: minority %v (want %v), minority down %v, promoted %v", held.Minority, old, held.MinorityDown, held.Promoted)
	}
	if len(acked) == 0 {
		t.Errorf("no write through %s's proxy acknowledged after the cut (first refusal: %v), want some before its node timeout", old.Name(), refusal)
	}
	for _, a := range acked {
		if !a.call.Before(held.MinorityDown) {
			t.Errorf("write %d acknowledged, sent %v after the minority reported cluster_state:fail", a.seq, a.call.Sub(held.MinorityDown))
		}
	}
	if refusal == nil || !strings.HasPrefix(refusal.Error(), "CLUSTERDOWN") {
		t.Errorf("the client's first refused write = %v, want CLUSTERDOWN from the isolated primary (its clients still reach it)", refusal)
	}
	if minorityWrite == nil || !strings.Contains(minorityWrite.Error(), "CLUSTERDOWN") {
		t.Errorf("write to the isolated primary after it went down = %v, want CLUSTERDOWN", minorityWrite)
	}
	if role, err := old.CurrentRole(ctx); err != nil || role != fixtures.RoleReplica {
		t.Errorf("old primary after the heal: %v %v, want a replica", role, err)
	}
	if old.Disconnected() {
		t.Error("the old primary is still off the bus after Inject")
	}
	// The new primary, which the old one now replicates, holds only what
	// was replicated before the cut: every write the isolated primary
	// acknowledged alone is lost.
	if v, err := held.Majority.Do(ctx, "LRANGE", key, "0", "-1"); err != nil || fmt.Sprint(v) != "[0]" {
		t.Errorf("%s holds %v (%v) after the heal, want [0]: the minority's acknowledged writes are discarded", held.Majority.Name(), v, err)
	}
	if len(acked) > 0 {
		t.Logf("%d writes acknowledged by the isolated %s (sent %v..%v after the cut began), all lost after the rejoin",
			len(acked), old.Name(), acked[0].call.Sub(held.Start).Round(time.Millisecond), acked[len(acked)-1].call.Sub(held.Start).Round(time.Millisecond))
	}

	began := time.Now()
	if err := topo.Reset(ctx); err != nil {
		t.Fatalf("reset after the partition: %v", err)
	}
	t.Logf("reset after the partition: %v", time.Since(began).Round(time.Millisecond))
	if role, err := old.CurrentRole(ctx); err != nil || role != fixtures.RolePrimary {
		t.Errorf("after Reset %s is %v %v, want primary", old.Name(), role, err)
	}
	if err := topo.WaitHealthy(ctx); err != nil {
		t.Errorf("after Reset: %v", err)
	}

	// A WhileHeld error still heals, and Inject returns only once the old
	// primary has rejoined (the deferred heal waits for it): the next
	// Reset must not race a node finding its way back onto the bus.
	errHeld := errors.New("scenario failed while held")
	f = fault.Partition{Shard: shard, WhileHeld: func(context.Context, fault.Partitioned) error { return errHeld }}
	if _, err := fault.Apply(ctx, topo, f); !errors.Is(err, errHeld) {
		t.Fatalf("Apply with a failing WhileHeld = %v, want it to wrap %v", err, errHeld)
	}
	if old.Disconnected() {
		t.Error("the old primary is still off the bus after a failed WhileHeld")
	}
	repl, err := old.Info(ctx, "replication")
	if err != nil || repl["role"] != "slave" || repl["master_link_status"] != "up" {
		t.Errorf("right after a failed WhileHeld %s is role:%s link:%s (%v), want a rejoined replica", old.Name(), repl["role"], repl["master_link_status"], err)
	}
	if err := topo.Reset(ctx); err != nil {
		t.Fatalf("reset after the failed partition: %v", err)
	}
}
