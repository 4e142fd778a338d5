package presence_test

import (
	"fmt"
	"testing"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/presence"
)

// TestBulkPositions reads a present/absent pattern with duplicates on a
// real 3-shard cluster with both backends: the per-slot split preserves
// every position and nil; the single cross-slot MGET is refused loudly.
func TestBulkPositions(t *testing.T) {
	topo, err := fixtures.Run(t.Context(), fixtures.ClusterSpec(3, 0))
	if topo != nil {
		t.Cleanup(func() { _ = topo.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range client.Backends {
		t.Run(string(b), func(t *testing.T) {
			pool, err := client.NewPool(t.Context(), client.Options{Backend: b, Mode: client.ModeCluster, Addrs: topo.Addrs()})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			s := presence.New(pool, presence.Options{})
			var keys []string
			want := map[string]string{}
			for i := range 200 {
				pk := fmt.Sprintf("%s-%d", b, i)
				keys = append(keys, presence.Key("c", pk))
				if i%3 != 0 {
					v := fmt.Sprintf("v%d", i)
					if err := s.Set(t.Context(), "c", pk, v); err != nil {
						t.Fatal(err)
					}
					want[presence.Key("c", pk)] = v
				}
			}
			keys = append(keys, keys[5], keys[3], keys[5]) // duplicates at the end
			got, err := s.Bulk(t.Context(), keys)
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				w, present := want[k]
				if got[i].Present != present || got[i].Val != w {
					t.Fatalf("position %d %s: got %+v, want present=%v %q", i, k, got[i], present, w)
				}
			}
			_, err = presence.Read(t.Context(), pool, keys, presence.ReadOptions{Mode: presence.ReadSingleMGet})
			if !client.IsCrossSlot(err) {
				t.Fatalf("single cross-slot MGET: err %v, want CROSSSLOT", err)
			}
			t.Logf("%s single MGET over %d keys: refused by client=%v: %v", b, len(keys), client.IsRefused(err), err)
			cat, err := presence.Read(t.Context(), pool, keys, presence.ReadOptions{Mode: presence.ReadConcatenated})
			if err != nil {
				t.Fatal(err)
			}
			same := true
			for i := range keys {
				same = same && cat[i] == got[i]
			}
			if same {
				t.Fatal("concatenated parts happened to preserve positions: the control would be blind")
			}
		})
	}
}
