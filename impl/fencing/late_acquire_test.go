package fencing_test

import (
	"context"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
)

// TestLateOldImageAcquireForksAfterC pins a limit of the protocol (spec 000
// §Safety theorems hold under E1, the Deployment Gate): an acquire composed
// by an A image and delivered after the C-gate — the backfill run, the old
// keyspace observed drained — still passes A's union check when the
// session's new key is free, writes the old key and issues max(old,new)+1
// into the old counter. No C script consults the old key, so a C acquire
// then holds the same session beside it, at the same generation: T1 and T2
// broken with no error anywhere. Under E1 the process that composed it is
// gone before C; a TCP segment it had sent, retransmitted by the kernel
// after a partition heals, is the one way such a call lands
// (docs/FINDINGS.md). If a script change closes the hole, this test says so.
func TestLateOldImageAcquireForksAfterC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	if err != nil {
		if topo != nil {
			_ = topo.Close()
		}
		t.Fatalf("start standalone: %v", err)
	}
	defer topo.Close()
	pool, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	dir := func(p fencing.Phase) *fencing.Directory {
		return fencing.New(pool, fencing.Options{Scripts: fencing.Embedded().Phase(p), LeaseTTL: time.Minute})
	}
	a, b, c := dir(fencing.A), dir(fencing.B), dir(fencing.C)
	s := fencing.Session{Community: "late", ID: "s1"}

	// B issues and releases: the new counter leads, the old keyspace is empty.
	got, err := b.Acquire(ctx, s, "b-pod")
	if err != nil || !got.OK {
		t.Fatalf("B acquire: %+v, %v", got, err)
	}
	if ok, err := b.Release(ctx, s, "b-pod", got.Generation); err != nil || !ok {
		t.Fatalf("B release: %v, %v", ok, err)
	}
	if _, err := fencing.Backfill(ctx, pool, []fencing.Session{s}); err != nil {
		t.Fatal(err)
	}
	if n, err := fencing.CountLeases(ctx, pool, fencing.KeyspaceOld); err != nil || n != 0 {
		t.Fatalf("C-gate premise: old-keyspace leases %d, %v", n, err)
	}

	late, err := a.Acquire(ctx, s, "a-pod")
	if err != nil {
		t.Fatal(err)
	}
	now, err := c.Acquire(ctx, s, "c-pod")
	if err != nil {
		t.Fatal(err)
	}
	if !late.OK || !now.OK {
		t.Fatalf("the late A acquire (%+v) and the C acquire (%+v) no longer both succeed: the hole is closed; update docs/FINDINGS.md", late, now)
	}
	// B issued 1 and the backfill merged it; A issues max(0, 1)+1 = 2 into
	// the old counter, C INCRs the new one to 2: one generation, twice.
	if late.Generation != 2 || now.Generation != 2 {
		t.Fatalf("generations %d (old key) and %d (new key), want 2 and 2", late.Generation, now.Generation)
	}
	if n, err := fencing.CountLeases(ctx, pool, fencing.KeyspaceOld); err != nil || n != 1 {
		t.Fatalf("old-keyspace leases after the late acquire: %d, %v", n, err)
	}
}
