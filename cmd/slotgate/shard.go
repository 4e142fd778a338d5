package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
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

// suiteWeight is pkg's recorded wall time in the profile, in seconds.
func suiteWeight(pkg string, full bool) float64 {
	w, ok := suiteSeconds[pkg]
	if !ok {
		return 60 // an unrecorded suite: assume a heavy one
	}
	if full {
		return w[1]
	}
	return w[0]
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
	weight := func(p string) float64 { return suiteWeight(p, full) }
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

// applyShard narrows a validated plan to its shard: the suite packages of
// every requested row (also rows an external target cannot run, so their
// not-run cells land in exactly one shard) are dealt to the shards, and
// this shard keeps the rows of its packages. A row without a suite (not
// implemented) goes to shard 1, whose gate then fails on it as one run's
// would. A shard left with nothing to run is a usage error: n is larger
// than the number of suites.
func (p *plan) applyShard() error {
	sh, err := parseShard(p.shard)
	if err != nil {
		return err
	}
	var all []string
	for _, r := range p.rows {
		if pkg, ok := suiteOf[r]; ok {
			all = appendUnique(all, pkg)
		}
	}
	mine := shardPackages(all, p.profile == harness.ProfileFull, sh)
	keep := func(rows []report.RowID) []report.RowID {
		var out []report.RowID
		for _, r := range rows {
			pkg, ok := suiteOf[r]
			if slices.Contains(mine, pkg) || (!ok && sh.index == 1) {
				out = append(out, r)
			}
		}
		return out
	}
	p.requested = p.rows
	p.rows, p.run = keep(p.rows), keep(p.run)
	p.packages = slices.DeleteFunc(p.packages, func(pkg string) bool { return !slices.Contains(mine, pkg) })
	for id := range p.notRun {
		if !slices.Contains(p.rows, id) {
			delete(p.notRun, id)
		}
	}
	if len(p.rows) == 0 {
		return fmt.Errorf("%w: --shard %s: this shard has no suite to run (the selected rows have %d suite packages); use at most %d shards", errUsage, p.shard, len(all), max(1, len(all)))
	}
	p.shardOf = &sh
	return nil
}
