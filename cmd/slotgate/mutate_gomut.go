//go:build gomut

package main

// The Go-mutant adapter over mutate/gomut (branch mutate-go), written against
// its interface: Generate(root, targets, max, seed), DefaultTargets, and
// Run(ctx, root, m, RunArgs) → the path of the copy run's results.json.
// Package mutate reads that results.json for the killer.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/slotgate/slotgate/mutate"
	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/report"
)

var goMutants = map[string]gomut.Mutant{}

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
	if reason, ok := mutate.Equivalents[m.ID]; ok {
		res.Status, res.Reason = mutate.Equivalent, reason
		return res
	}
	path, err := gomut.Run(ctx, root, goMutants[m.ID], gomut.RunArgs{Rows: m.Rows, Profile: profile, OutDir: outDir, Stdout: log, Stderr: log})
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
