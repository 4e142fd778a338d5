package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
)

// suiteSeconds is the recorded wall time of each suite package (smoke,
// full), compile included (since then the suites are built before they
// run, build.go), measured on a 2-core runner shared with other
// work (results.json meta.schedule, --jobs 2); it
// balances `--shard i/n` and orders the scheduler's queue. Only the balance
// depends on it: any value gives every package to exactly one shard.
// NOTE: refresh from meta.schedule when a suite grows a lot.
var suiteSeconds = map[string][2]float64{
	"./rows/axioms":           {7, 9},
	"./rows/fencingscripts":   {21, 45},
	"./rows/fencingmigration": {77, 100},
	"./rows/presence":         {14, 55},
	"./rows/registry":         {42, 168},
	"./rows/preflight":        {25, 30},
	"./rows/subscriptions":    {66, 167},
	"./rows/routing":          {34, 114},
	"./rows/failuredrills":    {98, 162},
	"./rows/protocol":         {7, 33},
	"./rows/telemetry":        {9, 16},
	"./rows/guards":           {25, 45},
	"./rows/locality":         {9, 28},
	"./rows/marconi":          {50, 116},
	"./rows/marconiaudit":     {51, 200},
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
	// A suite that runs alone costs the shard its wall time; one that
	// shares costs half (two side by side on a 2-core runner). A fixed
	// factor, not --jobs: every runner of the matrix must split alike.
	weight := func(p string) float64 {
		if exclusiveSuites[p] != "" {
			return suiteWeight(p, full)
		}
		return suiteWeight(p, full) / 2
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
	mine := shardPackages(all, p.profile == runenv.ProfileFull, sh)
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
