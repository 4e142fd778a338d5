package main

// The Go-mutant adapter: mutate/gomut generates (DefaultTargets), and
// mutate.GoRunner builds the coverage map and runs each mutant through the
// specs that reach it.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/slotgate/slotgate/mutate"
	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/report"
)

var goMutantsByID = map[string]gomut.Mutant{}

// generateGo generates the Go mutants the rows cover and, with schemata,
// the schemata of every mutant of the targets (nil without).
func generateGo(root string, rows []report.RowID, seed int64, schemata bool) ([]mutate.Mutant, *gomut.Schemata, error) {
	var gms []gomut.Mutant
	var sch *gomut.Schemata
	var err error
	if schemata {
		var sp gomut.SchemaPkg
		if sp, err = gomut.DefaultSchemaPkg(root); err != nil {
			return nil, nil, fmt.Errorf("generate go mutants: %w", err)
		}
		gms, sch, err = gomut.GenerateSchemata(root, gomut.DefaultTargets, 0, seed, sp)
	} else {
		gms, err = gomut.Generate(root, gomut.DefaultTargets, 0, seed)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("generate go mutants: %w", err)
	}
	var out []mutate.Mutant
	for _, g := range gms {
		cover := selectedOf(g.Rows, rows)
		if len(cover) == 0 {
			continue
		}
		g.Rows = cover
		goMutantsByID[g.ID] = g
		out = append(out, mutate.Mutant{ID: g.ID, Kind: mutate.KindGo, File: g.File, Func: g.Func, Line: g.Line,
			Operator: g.Operator, Diff: g.Diff, Rows: cover, Content: g.Content})
	}
	return out, sch, nil
}

// coverGo builds the Go mutants' coverage map (their baseline) for the
// rows and packages of list. A baseline that does not pass is the gate's
// failure (exit 1), as for Lua; anything else is an error.
func coverGo(ctx context.Context, r *mutate.GoRunner, list []mutate.Mutant, progress func(string)) (int, error) {
	var rows []report.RowID
	var pkgs []string
	for _, m := range list {
		for _, row := range m.Rows {
			if !slices.Contains(rows, row) {
				rows = append(rows, row)
			}
		}
		file := m.File
		if g, ok := goMutantsByID[m.ID]; ok {
			file = g.File // an embedded-Lua mutant: the Go file that runs its script
		}
		if p := path.Dir(file); !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	progress(fmt.Sprintf("Go baseline: every spec of %s alone, with coverage of %s", joinRows(rows), strings.Join(pkgs, ", ")))
	if err := r.Cover(ctx, rows, pkgs, progress); err != nil {
		if ctx.Err() != nil {
			return exitSignal, err
		}
		if errors.Is(err, mutate.ErrSchemata) {
			// A broken tool, not a verdict: every kill would be suspect.
			return exitUsage, fmt.Errorf("%w (rerun with --schemata=false to build each mutant on its own)", err)
		}
		if errors.Is(err, mutate.ErrBaseline) {
			return exitGateFail, err
		}
		return 0, err
	}
	n, secs := r.Units()
	progress(fmt.Sprintf("Go coverage map: %d specs, %.0fs of baseline runs", n, secs))
	return 0, nil
}

// generateMarconiLua generates the mutants of Marconi's embedded scripts
// (gomut.DefaultLuaTargets) the rows cover, and the schemata that serve
// them; each one's coverage anchor (the Go call that runs its script) goes
// to goMutantsByID, as a Go mutant's does.
func generateMarconiLua(root string, rows []report.RowID) ([]mutate.Mutant, *gomut.Schemata, error) {
	sp, err := gomut.DefaultSchemaPkg(root)
	if err != nil {
		return nil, nil, fmt.Errorf("generate marconi-lua mutants: %w", err)
	}
	lms, sch, err := gomut.GenerateLuaSchemata(root, gomut.DefaultLuaTargets, sp)
	if err != nil {
		return nil, nil, fmt.Errorf("generate marconi-lua mutants: %w", err)
	}
	var out []mutate.Mutant
	for _, lm := range lms {
		cover := selectedOf(lm.Rows, rows)
		if len(cover) == 0 {
			continue
		}
		g := lm.Cover
		g.Rows = cover
		goMutantsByID[lm.ID] = g
		out = append(out, mutate.Mutant{ID: lm.ID, Kind: mutate.KindMarconiLua, File: lm.File, Func: g.Func, Line: lm.Line,
			Operator: string(lm.Operator), Desc: lm.Desc, Diff: lm.Diff, Rows: cover, Content: []byte(lm.Source)})
	}
	return out, sch, nil
}

// luaTargetList names the embedded scripts marconi-lua mutates.
func luaTargetList() string {
	var s []string
	for _, t := range gomut.DefaultLuaTargets {
		s = append(s, path.Join(t.Package, t.Script))
	}
	return strings.Join(s, ", ")
}

// selectedOf is the rows of covers that the run selected, in covers' order.
func selectedOf(covers, selected []report.RowID) []report.RowID {
	var out []report.RowID
	for _, r := range covers {
		if slices.Contains(selected, r) {
			out = append(out, r)
		}
	}
	return out
}
