package main

import (
	"slices"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// Every package lands in exactly one shard, for any n, and the split is
// the same on every call.
func TestShardPackagesPartition(t *testing.T) {
	var pkgs []string
	for _, r := range mustRows(t) {
		if !slices.Contains(pkgs, suiteOf[r]) {
			pkgs = append(pkgs, suiteOf[r])
		}
	}
	for _, full := range []bool{false, true} {
		for n := 1; n <= len(pkgs)+1; n++ {
			seen := map[string]int{}
			for i := 1; i <= n; i++ {
				a := shardPackages(pkgs, full, shardSpec{i, n})
				if b := shardPackages(pkgs, full, shardSpec{i, n}); !slices.Equal(a, b) {
					t.Fatalf("n=%d i=%d: split not deterministic: %v vs %v", n, i, a, b)
				}
				for _, p := range a {
					seen[p]++
				}
			}
			for _, p := range pkgs {
				if seen[p] != 1 {
					t.Errorf("full=%v n=%d: package %s in %d shards, want 1", full, n, p, seen[p])
				}
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	if s, err := parseShard("2/3"); err != nil || s != (shardSpec{2, 3}) {
		t.Errorf("parseShard(2/3) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "1", "0/2", "3/2", "a/b", "1/0", "-1/2"} {
		if _, err := parseShard(bad); err == nil {
			t.Errorf("parseShard(%q) accepted", bad)
		}
	}
}

func mustRows(t *testing.T) []report.RowID {
	t.Helper()
	rows, err := parseRows("")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
