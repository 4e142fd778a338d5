package mutate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/mutate/luamut"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/validate"
)

// LuaRows are the rows that run a fencing script of the given manifest
// phase, in the order a mutant meets them (cheapest strong judge first).
// Smoke: fencing-scripts runs the C scripts (contention, guards, read side,
// paused pod on a cluster); fencing-migration runs every phase and both
// merges (trace conformance against the explicit-state model, the staged
// deploy, paused pods, stragglers). Full adds the other rows that build a
// fencing directory: protocol (C under RESP2/RESP3) and locality's runtime
// twin (C, and O's un-tagged layout).
func LuaRows(phase string, full bool) []report.RowID {
	var rows []report.RowID
	switch phase {
	case "c":
		rows = []report.RowID{report.RowFencingScripts, report.RowFencingMigration}
		if full {
			rows = append(rows, report.RowProtocol, report.RowLocality)
		}
	case "o":
		rows = []report.RowID{report.RowFencingMigration}
		if full {
			rows = append(rows, report.RowLocality)
		}
	default: // a, b, migration
		rows = []report.RowID{report.RowFencingMigration}
	}
	return rows
}

// LuaStages are the suite invocations that run row for a Lua mutant.
func LuaStages(row report.RowID) []Stage {
	switch row {
	case report.RowFencingScripts:
		return []Stage{{Pkg: "./rows/fencingscripts", Rows: []report.RowID{row}}}
	case report.RowFencingMigration:
		// Trace conformance replays the real scripts step by step against
		// the explicit-state model: the sharpest judge of a script edit,
		// so it runs alone first.
		return []Stage{
			{Pkg: "./rows/fencingmigration", Rows: []report.RowID{row}, Focus: "trace-conformance"},
			{Pkg: "./rows/fencingmigration", Rows: []report.RowID{row}, Skip: "trace-conformance"},
		}
	case report.RowProtocol:
		return []Stage{{Pkg: "./rows/protocol", Rows: []report.RowID{row}}}
	case report.RowLocality:
		// The static check runs in-process on every Lua mutant (Static);
		// the suite adds the runtime twin.
		return []Stage{{Pkg: "./rows/locality", Rows: []report.RowID{row}, Focus: "locality/runtime"}}
	}
	return nil
}

// LuaMutants generates every Lua mutant of set, in manifest file order,
// covering the given rows (a mutant no selected row runs is left out).
func LuaMutants(set *fencing.ScriptSet, rows []report.RowID, full bool) ([]Mutant, error) {
	var out []Mutant
	for _, e := range set.Files() {
		var cover []report.RowID
		for _, r := range LuaRows(e.Phase, full) {
			if slices.Contains(rows, r) {
				cover = append(cover, r)
			}
		}
		if len(cover) == 0 {
			continue
		}
		ms, err := luamut.Generate(e.File, set.Text(e))
		if err != nil {
			return nil, fmt.Errorf("mutate %s: %w", e.File, err)
		}
		for _, m := range ms {
			out = append(out, Mutant{
				ID: m.ID, Kind: KindLua, File: m.File, Line: m.Line, Operator: string(m.Operator), Desc: m.Desc,
				Diff: m.Diff, Phase: e.Phase, Op: string(e.Op), Rows: cover, Content: []byte(m.Source),
			})
		}
	}
	return out, nil
}

// LuaRunner runs Lua mutants: the static locality validator in-process,
// then each covering row's stages from the prebuilt suite binaries against
// a script-set directory holding the mutant.
type LuaRunner struct {
	Set    *fencing.ScriptSet
	Suites *Suites
	Table  *validate.Table // the locality validator's command table
	Env    []string        // SLOTGATE_PROFILE, _SEED, _SERVER, _BACKENDS, _OWNER
	Work   string          // scratch directory (one script set at a time)
	// Every runs every covering row even after a kill (per-row kill rates
	// over all mutants); otherwise a mutant stops at its first killer.
	Every   bool
	Timeout time.Duration
	Log     io.Writer // the suites' output
}

// Static runs the locality validator (the locality row's static check,
// spec 000 §Conformance, Locality contract) on the mutated script: a
// finding the original does not have kills the mutant.
func (r *LuaRunner) Static(m Mutant, original string) (Kill, bool) {
	before := map[string]int{}
	for _, f := range r.Table.CheckLua(m.File, original, 1) {
		before[string(f.Rule)]++
	}
	for _, f := range r.Table.CheckLua(m.File, string(m.Content), 1) {
		if before[string(f.Rule)] > 0 {
			before[string(f.Rule)]--
			continue
		}
		return Kill{Row: report.RowLocality, Column: report.ColumnErrors, Check: "locality/static (validator on the mutated script)", Status: report.StatusFail, Message: f.String()}, true
	}
	return Kill{}, false
}

// Baseline runs every stage of rows with the unmutated set: each must pass,
// or a kill would mean nothing.
func (r *LuaRunner) Baseline(ctx context.Context, rows []report.RowID, progress func(string)) error {
	dir := filepath.Join(r.Work, "baseline")
	if err := r.Set.WriteDir(dir, nil); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, row := range rows {
		for _, st := range LuaStages(row) {
			// Two attempts: a fault the harness could not confirm on a
			// loaded runner (inconclusive) is the harness's, not the
			// scripts'; a second failure stops the run.
			var bad []string
			for attempt := 1; attempt <= 2; attempt++ {
				began := time.Now()
				card, err := r.Suites.Run(ctx, st, r.args(dir, "baseline"))
				if err != nil {
					return fmt.Errorf("baseline %s: %w", st, err)
				}
				if bad = Failing(card); len(bad) == 0 && !Scored(card, st.Rows) {
					bad = []string{fmt.Sprintf("stage %s scored no cell of %v (its focus selects no spec?)", st, st.Rows)}
				}
				if len(bad) == 0 {
					progress(fmt.Sprintf("baseline %s passed in %s", st, time.Since(began).Round(100*time.Millisecond)))
					break
				}
				progress(fmt.Sprintf("baseline %s attempt %d did not pass (%s)", st, attempt, bad[0]))
			}
			if len(bad) > 0 {
				return fmt.Errorf("baseline %s does not pass with the unmutated scripts, so no kill could be trusted:\n  %s", st, strings.Join(bad, "\n  "))
			}
		}
	}
	return nil
}

func (r *LuaRunner) args(dir, name string) RunArgs {
	return RunArgs{
		Env:     append(slices.Clone(r.Env), "SLOTGATE_SCRIPTS="+dir),
		JSON:    filepath.Join(r.Work, name+".json"),
		Log:     r.Log,
		Timeout: r.Timeout,
	}
}

// Run runs one Lua mutant through the static validator and its rows.
func (r *LuaRunner) Run(ctx context.Context, m Mutant) (res Result) {
	began := time.Now()
	res = Result{Mutant: m, Status: Survived}
	defer func() { res.Seconds = time.Since(began).Seconds() }()
	if reason, ok := Equivalents[m.ID]; ok {
		res.Status, res.Reason = Equivalent, reason
		return res
	}
	original := ""
	for _, e := range r.Set.Files() {
		if e.File == m.File {
			original = r.Set.Text(e)
		}
	}
	record := func(k Kill) {
		if res.Killer == nil {
			kk := k
			res.Killer, res.Status = &kk, Killed
		}
		res.Kills = append(res.Kills, k)
	}
	res.Ran = append(res.Ran, report.RowLocality)
	if k, ok := r.Static(m, original); ok {
		record(k)
		if !r.Every {
			return res
		}
	}
	dir := filepath.Join(r.Work, "mutant")
	os.RemoveAll(dir)
	if err := r.Set.WriteDir(dir, map[string]string{m.File: string(m.Content)}); err != nil {
		res.Status, res.Reason = Error, err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	for _, row := range m.Rows {
		if !slices.Contains(res.Ran, row) {
			res.Ran = append(res.Ran, row)
		}
		for _, st := range LuaStages(row) {
			card, err := r.Suites.Run(ctx, st, r.args(dir, "mutant"))
			if err != nil {
				res.Status, res.Reason = Error, err.Error()
				return res
			}
			if ctx.Err() != nil {
				// Interrupted: what the suite scored is the interrupt's.
				res.Status, res.Reason = Error, "interrupted"
				return res
			}
			k, ok := Killer(card, st.Rows)
			if !ok && !Scored(card, st.Rows) {
				res.Status, res.Reason = Error, fmt.Sprintf("stage %s scored no cell (the suite crashed or timed out)", st)
				return res
			}
			if ok {
				record(k)
				break // the row killed it; its later stages add nothing
			}
			for _, c := range card.Cells {
				for _, ch := range c.Checks {
					if ch.Status == report.StatusUnknown && res.Reason == "" {
						// Undecided is no kill (the gate fails it as blind,
						// but a loaded runner can make a check undecided
						// too); the survivor carries it for triage.
						res.Reason = "a check went undecided (blind): " + ch.Scenario + ": " + oneLine(ch.Message, 200)
					}
				}
			}
			if bad := Failing(card); len(bad) > 0 && res.Status != Killed {
				// Not killed, but not judged either (a fault not
				// confirmed, a suite timeout): no survivor claim.
				res.Status, res.Reason = Error, "run not conclusive: "+bad[0]
				return res
			}
		}
		if res.Status == Killed && !r.Every {
			return res
		}
	}
	return res
}
