package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/report"
)

// suiteSeconds is the recorded wall time of each suite package (smoke,
// full), measured on a 2-core runner; it balances `--shard i/n`. Only the
// balance depends on it: any value gives every package to exactly one shard.
// NOTE: refresh from a run's per-row timings when a suite grows a lot.
var suiteSeconds = map[string][2]float64{
	"./suites/axioms":        {15, 25},
	"./suites/fencing":       {30, 90},
	"./suites/migration":     {45, 120},
	"./suites/presence":      {10, 30},
	"./suites/registry":      {25, 90},
	"./suites/subscriptions": {50, 180},
	"./suites/routing":       {35, 120},
	"./suites/failuredrills": {70, 240},
	"./suites/protocol":      {15, 40},
	"./suites/telemetry":     {20, 50},
	"./suites/locality":      {10, 25},
	"./suites/marconi":       {35, 120},
	"./suites/marconiaudit":  {45, 150},
}

// shardSpec is a parsed --shard i/n.
type shardSpec struct{ index, of int }

func parseShard(s string) (shardSpec, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	of, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || of < 1 || index < 1 || index > of {
		return shardSpec{}, fmt.Errorf("%w: --shard %q: want i/n with 1 ≤ i ≤ n, e.g. 1/2", errUsage, s)
	}
	return shardSpec{index, of}, nil
}

// shardPackages deals the suite packages to n shards, heaviest first, each
// to the lightest shard so far (ties: the lower shard), and returns shard
// i's. Deterministic: the same packages and profile give every runner of a
// CI matrix the same split, so the shards together run each package once.
func shardPackages(pkgs []string, full bool, sh shardSpec) []string {
	weight := func(p string) float64 {
		w, ok := suiteSeconds[p]
		if !ok {
			return 60 // an unrecorded suite: assume a heavy one
		}
		if full {
			return w[1]
		}
		return w[0]
	}
	sorted := slices.Clone(pkgs)
	sort.SliceStable(sorted, func(a, b int) bool {
		if wa, wb := weight(sorted[a]), weight(sorted[b]); wa != wb {
			return wa > wb
		}
		return sorted[a] < sorted[b]
	})
	load := make([]float64, sh.of)
	var mine []string
	for _, p := range sorted {
		k := 0
		for j := range load {
			if load[j] < load[k] {
				k = j
			}
		}
		load[k] += weight(p)
		if k == sh.index-1 {
			mine = append(mine, p)
		}
	}
	return mine
}

// rowsIn keeps the rows whose suite package is in pkgs.
func rowsIn(rows []report.RowID, pkgs []string) []report.RowID {
	var out []report.RowID
	for _, r := range rows {
		if slices.Contains(pkgs, suiteOf[r]) {
			out = append(out, r)
		}
	}
	return out
}
