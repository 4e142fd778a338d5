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
	"testing"
	"time"

	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/slot"
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

// The local provider cannot cut a node off the bus: Partition is not
// available there, and says so with errors.ErrUnsupported, which a
// scenario skips on.
func TestPartitionUnavailableOnLocalProcesses(t *testing.T) {
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
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "containers") {
		t.Errorf("Apply(Partition) on local processes = %v, want errors.ErrUnsupported naming the container provider", err)
	}
}

// On a container 3×1, a shard's primary cut off the bus goes
// cluster_state:fail and refuses writes, the majority promotes its
// replica, and after the heal the old primary is the new one's replica: a
// write the isolated primary acknowledged before it stepped down is gone.
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

	const shard = 1
	old := topo.Primaries()[shard]
	var key string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("partition-test-%d", i)
		if n, err := topo.NodeForSlot(ctx, slot.Of(k)); err == nil && n == old {
			key = k
		}
	}
	if _, err := old.Do(ctx, "SET", key, "before"); err != nil {
		t.Fatal(err)
	}

	var held fault.Partitioned
	var minorityWrite error
	f := fault.Partition{Shard: shard, WhileHeld: func(ctx context.Context, p fault.Partitioned) error {
		held = p
		_, minorityWrite = p.Minority.Do(ctx, "SET", key, "refused")
		return nil
	}}
	if err := f.Available(topo); err != nil {
		t.Fatalf("Available on a container 3×1: %v", err)
	}
	// The isolated primary still takes writes until its node timeout: one
	// sent right after the cut is acknowledged, and cannot have reached the
	// replica.
	accepted := make(chan error, 1)
	go func() {
		for !old.Disconnected() && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		_, err := old.Do(ctx, "SET", key, "acked-on-the-minority")
		accepted <- err
	}()
	w, err := fault.Apply(ctx, topo, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Errorf("write to the isolated primary right after the cut = %v, want it acknowledged", err)
	}
	t.Logf("%s: cut after %v, minority cluster_state:fail after %v, promoted after %v, rejoined after %v",
		w.Target, held.Cut.Sub(held.Start).Round(time.Millisecond), held.MinorityDown.Sub(held.Start).Round(time.Millisecond),
		held.Promoted.Sub(held.Start).Round(time.Millisecond), w.End.Sub(w.Start).Round(time.Millisecond))
	if held.Minority != old || held.MinorityDown.IsZero() || held.Promoted.IsZero() {
		t.Errorf("while held: minority %v (want %v), minority down %v, promoted %v", held.Minority, old, held.MinorityDown, held.Promoted)
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
	if v, err := held.Majority.Do(ctx, "GET", key); err != nil || v != "before" {
		t.Errorf("GET on the new primary = %v %v, want %q: the minority's acknowledged write is discarded", v, err, "before")
	}

	if err := topo.Reset(ctx); err != nil {
		t.Fatalf("reset after the partition: %v", err)
	}
	if role, err := old.CurrentRole(ctx); err != nil || role != fixtures.RolePrimary {
		t.Errorf("after Reset %s is %v %v, want primary", old.Name(), role, err)
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
