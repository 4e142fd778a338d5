package fencing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
)

// TestDurabilityMode runs the C-phase directory in durability mode on a
// primary with one replica, in both backends: with the replica answering,
// every call is acknowledged and the replica holds the lease; with the
// replica stopped (SIGSTOP), an acquire the primary applied comes back as
// client.ErrNotReplicated (unknown to the caller, never held), and so does a
// refused acquire that only read the unreplicated lease (the barrier). The
// same calls with the mode off report "held": the spec's scripts as written.
func TestDurabilityMode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := fixtures.Run(ctx, fixtures.ClusterSpec(1, 1))
	if err != nil {
		if topo != nil {
			_ = topo.Close()
		}
		t.Fatalf("start cluster:1x1: %v", err)
	}
	defer topo.Close()
	replica := topo.Replicas()[0]
	for _, b := range client.Backends {
		t.Run(string(b), func(t *testing.T) {
			pool, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: topo.Addrs(), ReadTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			durable := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute, Durability: fencing.Durability{Replicas: 1, Timeout: 300 * time.Millisecond}})
			plain := fencing.New(pool, fencing.Options{LeaseTTL: time.Minute})

			s := fencing.Session{Community: "durable", ID: string(b)}
			got, err := durable.Acquire(ctx, s, "pod-0")
			if err != nil || !got.OK {
				t.Fatalf("durable acquire with the replica up: %+v, %v", got, err)
			}
			if ok, err := durable.Renew(ctx, s, "pod-0", got.Generation); err != nil || !ok {
				t.Fatalf("durable renew: %v, %v", ok, err)
			}
			if n := durable.Stats().NotReplicated.Load(); n != 0 {
				t.Fatalf("NotReplicated = %d with the replica up", n)
			}

			// On another pool: a connection that never wrote the lease, so
			// only the barrier makes its WAIT cover what it read. Opened
			// before the pause: valkey-go's cluster client dials every node
			// of the slot map, the stopped replica too, when it starts.
			readerPool, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: topo.Addrs(), ReadTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer readerPool.Close()
			reader := fencing.New(readerPool, fencing.Options{LeaseTTL: time.Minute, Durability: fencing.Durability{Replicas: 1, Timeout: 300 * time.Millisecond}})
			if _, err := reader.Lookup(ctx, fencing.Session{Community: "warm", ID: string(b)}); err != nil {
				t.Fatal(err)
			}

			if err := replica.Pause(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = replica.Resume() }()
			cut := fencing.Session{Community: "durable-cut", ID: string(b)}
			began := time.Now()
			_, err = durable.Acquire(ctx, cut, "pod-1")
			if !errors.Is(err, client.ErrNotReplicated) {
				t.Fatalf("durable acquire with the replica stopped: want ErrNotReplicated, got %v", err)
			}
			if waited := time.Since(began); waited < 250*time.Millisecond {
				t.Errorf("WAIT returned after %v, before its 300 ms timeout: not waiting for the replica", waited)
			}
			// The primary applied it: a plain acquire sees it held, and a
			// durable one is told that what it read is not replicated.
			refused, err := plain.Acquire(ctx, cut, "pod-2")
			if err != nil || refused.OK || refused.Holder.Owner != "pod-1" {
				t.Fatalf("plain acquire after the unreplicated one: %+v, %v (want held by pod-1)", refused, err)
			}
			if _, err := reader.Acquire(ctx, cut, "pod-2"); !errors.Is(err, client.ErrNotReplicated) {
				t.Fatalf("durable refused acquire reading an unreplicated lease: want ErrNotReplicated, got %v", err)
			}
			if err := replica.Resume(); err != nil {
				t.Fatal(err)
			}
			if _, err := durable.Lookup(ctx, cut); err != nil {
				t.Fatalf("durable lookup after the replica resumed: %v", err)
			}
		})
	}
}

// TestDurabilityRefusedWithoutWaiter: a pool wrapper that cannot WAIT on the
// script's connection is refused, not silently run without durability.
func TestDurabilityRefusedWithoutWaiter(t *testing.T) {
	ctx := context.Background()
	topo, err := fixtures.Run(ctx, fixtures.StandaloneSpec())
	if err != nil {
		if topo != nil {
			_ = topo.Close()
		}
		t.Fatal(err)
	}
	defer topo.Close()
	pool, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	dir := fencing.New(wrapped{pool}, fencing.Options{Durability: fencing.Durability{Replicas: 1}})
	if _, err := dir.Acquire(ctx, fencing.Session{Community: "c", ID: "s"}, "pod"); !errors.Is(err, client.ErrBadOptions) {
		t.Fatalf("want ErrBadOptions, got %v", err)
	}
	// No replica at all: WAIT 1 answers 0, the acquire is unknown.
	dir = fencing.New(pool, fencing.Options{Durability: fencing.Durability{Replicas: 1, Timeout: 50 * time.Millisecond}})
	if _, err := dir.Acquire(ctx, fencing.Session{Community: "c", ID: fmt.Sprint("s", 2)}, "pod"); !errors.Is(err, client.ErrNotReplicated) {
		t.Fatalf("standalone without replicas: want ErrNotReplicated, got %v", err)
	}
}

type wrapped struct{ client.Pool }
