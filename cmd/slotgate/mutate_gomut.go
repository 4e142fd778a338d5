package main

// The Go-mutant adapter over mutate/gomut: Generate(root, targets, max, seed), DefaultTargets, and
// Run(ctx, root, m, RunArgs) → the path of the copy run's results.json.
// Package mutate reads that results.json for the killer.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/slotgate/slotgate/mutate"
	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/report"
)

var goMutants = map[string]gomut.Mutant{}

// goSlotgate is the CLI binary every Go mutant's run uses, built once.
var goSlotgate string

func generateGo(root string, rows []report.RowID, seed int64) ([]mutate.Mutant, error) {
	gms, err := gomut.Generate(root, gomut.DefaultTargets, 0, seed)
	if err != nil {
		return nil, fmt.Errorf("generate go mutants: %w", err)
	}
	var out []mutate.Mutant
	for _, g := range gms {
		var cover []report.RowID
		for _, r := range g.Rows {
			if slices.Contains(rows, r) {
				cover = append(cover, r)
			}
		}
		if len(cover) == 0 {
			continue
		}
		g.Rows = cover
		goMutants[g.ID] = g
		out = append(out, mutate.Mutant{ID: g.ID, Kind: mutate.KindGo, File: g.File, Func: g.Func, Line: g.Line,
			Operator: g.Operator, Diff: g.Diff, Rows: cover, Content: g.Content})
	}
	return out, nil
}

func runGo(ctx context.Context, root string, m mutate.Mutant, profile, outDir string, log io.Writer) (res mutate.Result) {
	began := time.Now()
	res = mutate.Result{Mutant: m, Status: mutate.Survived, Ran: m.Rows}
	defer func() { res.Seconds = time.Since(began).Seconds() }()
	g := goMutants[m.ID]
	if reason, ok := mutate.Equivalents[m.ID]; ok {
		res.Status, res.Reason = mutate.Equivalent, reason
		return res
	}
	if g.Equivalent != "" {
		res.Status, res.Reason = mutate.Equivalent, g.Equivalent
		return res
	}
	// One CLI binary serves every mutant (the rows run in suites compiled
	// from the mutated copy); one backend and a bounded run keep a mutant
	// near its rows' smoke time (mutate/gomut's measured cost).
	if goSlotgate == "" {
		// Under the mutate run's work dir (outDir's parent), removed with it.
		dir := filepath.Join(filepath.Dir(outDir), "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			res.Status, res.Reason = mutate.Error, err.Error()
			return res
		}
		bin, err := gomut.BuildSlotgate(ctx, root, dir, log, log)
		if err != nil {
			res.Status, res.Reason = mutate.Error, fmt.Sprintf("build slotgate for the Go mutants: %v", err)
			return res
		}
		goSlotgate = bin
	}
	path, err := gomut.Run(ctx, root, g, gomut.RunArgs{Rows: m.Rows, Profile: profile, OutDir: outDir, Stdout: log, Stderr: log,
		Slotgate: goSlotgate, ExtraArgs: []string{"--backend", "go-redis", "--timeout", "10m"}})
	if err != nil && path == "" {
		res.Status, res.Reason = mutate.Error, err.Error()
		return res
	}
	k, killed, err := mutate.KillerFromResults(path, m.Rows)
	switch {
	case err != nil:
		res.Status, res.Reason = mutate.Error, err.Error()
	case killed:
		res.Status, res.Killer, res.Kills = mutate.Killed, &k, []mutate.Kill{k}
	}
	return res
}
