package main

// The Go-mutant adapter over mutate/gomut: Generate(root, targets, max, seed), DefaultTargets, and
// Run(ctx, root, m, RunArgs) → the path of the copy run's results.json.
// Package mutate reads that results.json for the killer.

import (
	"context"
	"crypto/sha256"
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
	// One run of the mutant, in an out dir of its own (never a previous
	// mutant's results.json).
	attempt := 0
	runOnce := func() (mutate.Kill, bool, error) {
		attempt++
		sum := sha256.Sum256([]byte(m.ID))
		dir := filepath.Join(outDir, fmt.Sprintf("%x-%d", sum[:6], attempt))
		path, err := gomut.Run(ctx, root, g, gomut.RunArgs{Rows: m.Rows, Profile: profile, OutDir: dir, Stdout: log, Stderr: log,
			Slotgate: goSlotgate, ExtraArgs: []string{"--backend", "go-redis", "--timeout", "10m"}})
		if err != nil && path == "" {
			return mutate.Kill{}, false, err
		}
		if ctx.Err() != nil {
			return mutate.Kill{}, false, fmt.Errorf("interrupted")
		}
		return mutate.KillerFromResults(path, m.Rows)
	}
	k, killed, err := runOnce()
	if err == nil && killed && k.Check == "suite" {
		// A suite-level failure (a panic, a fixture that did not start) is
		// the mutant's only if it happens again: Go mutants run without a
		// baseline of their own, and a loaded runner can fail a suite.
		if k2, again, err2 := runOnce(); err2 != nil || !again || k2.Check != "suite" {
			k, killed, err = mutate.Kill{}, false, fmt.Errorf("unconfirmed crash: %s (a second run did not repeat it)", k.Message)
		}
	}
	switch {
	case err != nil:
		res.Status, res.Reason = mutate.Error, err.Error()
	case killed:
		res.Status, res.Killer, res.Kills = mutate.Killed, &k, []mutate.Kill{k}
	}
	return res
}
